package bench

import (
	"github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/naive"
)

func init() {
	Register(Variant{
		Name:       "naive",
		Describe:   "one ephemeral node at the lock path; losers set an exists watch and retry (herd effect on purpose)",
		NodeAtPath: true,
		New: func(s *zklocks.Session, path string) (zklocks.Locker, error) {
			return naive.New(s, path)
		},
	})
}
