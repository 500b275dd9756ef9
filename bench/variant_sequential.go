package bench

import (
	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/sequential"
)

func init() {
	Register(Variant{
		Name:     "sequential",
		Describe: "ephemeral-sequential nodes, data watch on the predecessor only, read-free handoff",
		New: func(s *zklocks.Session, path string) (zklocks.Locker, error) {
			return sequential.New(s, path)
		},
	})
}
