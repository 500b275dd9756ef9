package ensemble

import (
	"fmt"

	"github.com/zklocks/zklocks/internal/freeport"
)

// freePorts returns n distinct loopback ports of the ensembles' band that
// were free a moment ago; Start retries with new ports when a member
// still finds one taken.
func freePorts(n int) ([]int, error) {
	ports, err := freeport.Ensembles.Take(n)
	if err != nil {
		return nil, fmt.Errorf("ensemble: %w", err)
	}
	return ports, nil
}
