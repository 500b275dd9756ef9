package bench

import (
	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/naive"
)

func init() {
	Register(Variant{
		Name:       "naive",
		Describe:   "one ephemeral node at the lock path; losers set an exists watch and retry (herd effect on purpose)",
		NodeAtPath: true,
		New: func(conn *zk.Conn, path string) (zklocks.Locker, error) {
			return naive.New(conn, path, naive.WithSessionTimeout(SessionTimeout))
		},
	})
}
