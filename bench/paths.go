package bench

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// Root is the znode under which every bench run works.
const Root = "/zklocks-bench"

// makeRunDir creates Root (if missing) and a fresh persistent directory
// under it whose name starts with name.
func makeRunDir(conn *zk.Conn, name string) (string, error) {
	acl := zk.WorldACL(zk.PermAll)
	if _, err := conn.Create(Root, nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return "", fmt.Errorf("bench: create %s: %w", Root, err)
	}
	name = strings.NewReplacer("/", "_", " ", "_").Replace(name)
	dir := fmt.Sprintf("%s/%s-%d", Root, name, time.Now().UnixNano())
	if _, err := conn.Create(dir, nil, 0, acl); err != nil {
		return "", fmt.Errorf("bench: create %s: %w", dir, err)
	}
	return dir, nil
}

// deleteTree deletes p and everything under it, best effort.
func deleteTree(conn *zk.Conn, p string) {
	kids, _, err := conn.Children(p)
	if err == nil {
		for _, k := range kids {
			deleteTree(conn, path.Join(p, k))
		}
	}
	_ = conn.Delete(p, -1)
}
