package bench

import (
	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/sequential"
)

func init() {
	Register(Variant{
		Name:     "sequential",
		Describe: "ephemeral-sequential nodes, data watch on the predecessor only, read-free handoff",
		New: func(conn *zk.Conn, path string) (zklocks.Locker, error) {
			return sequential.New(conn, path, sequential.WithSessionTimeout(SessionTimeout))
		},
	})
}
