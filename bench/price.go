package bench

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/go-zookeeper/zk"
)

// The price of sequential's extras, with no lock code in the way.
//
// An uncontended sequential acquire sends what go-zookeeper's Lock sends
// (create, then list the children) plus one read of its own node beside
// the listing: the read gives the node's czxid, the fencing token Token
// returns, and leaves the data watch behind Done, which the holder's own
// delete then fires. MeasurePrice times the three request patterns on
// bare go-zookeeper connections, in turns, so that the bench can say how
// much of sequential's gap to the peer is the protocol's price of the
// token and the watch, and how much is zklocks' own client code.

// Pattern is one request pattern MeasurePrice times.
type Pattern int

const (
	// PatternBare is create, then list: the peer's uncontended acquire.
	PatternBare Pattern = iota
	// PatternToken adds a read of the new node (no watch), sent beside
	// the listing: what a fencing token costs.
	PatternToken
	// PatternWatched is PatternToken with a data watch left on the node,
	// which the release's delete fires: sequential's acquire, Token and
	// Done both.
	PatternWatched
	// PatternCtx is PatternWatched with every request run in a goroutine
	// of its own that the caller waits for beside a context, the way
	// internal/zkop gives go-zookeeper's blocking calls a ctx: what
	// honouring a context costs.
	PatternCtx
	patterns
)

func (p Pattern) String() string {
	return [...]string{"create+list", "+token read", "+watched read", "+ctx per request"}[p]
}

// PriceRound is one round of MeasurePrice: the p50 of each pattern's
// acquire (create sent to both answers back) and cycle (acquire plus the
// delete that releases).
type PriceRound struct {
	Acquire [patterns]time.Duration
	Cycle   [patterns]time.Duration
}

// Price is MeasurePrice's result.
type Price struct {
	Rounds  []PriceRound
	Samples int // per pattern and round
}

// Ratio is pattern p's acquire (or, with cycle, its cycle) over the bare
// pattern's in the same round, as the median of the rounds with its
// interval.
func (pr Price) Ratio(p Pattern, cycle bool) Estimate {
	return pr.overRounds(cycle, func(v [patterns]time.Duration) float64 { return ratio(v[p], v[PatternBare]) })
}

// overRounds is f of each round's p50s (the acquires', or with cycle the
// cycles'), as the median of the rounds with its interval.
func (pr Price) overRounds(cycle bool, f func(p50s [patterns]time.Duration) float64) Estimate {
	xs := make([]float64, len(pr.Rounds))
	for i, r := range pr.Rounds {
		v := r.Acquire
		if cycle {
			v = r.Cycle
		}
		xs[i] = f(v)
	}
	return MedianCI(xs)
}

// MeasurePrice times the three patterns in rounds rounds of samples
// each, one session per member; the patterns take turns within each
// iteration, in an order that rotates, so that a burst of load falls on
// all three alike.
func MeasurePrice(ctx context.Context, servers []string, rounds, samples int) (Price, error) {
	pr := Price{Samples: samples}
	ss, err := connectAll(ctx, servers, len(servers))
	if err != nil {
		return pr, err
	}
	defer closeAll(ss)
	root, err := makeRunDir(ss[0].conn(), "price")
	if err != nil {
		return pr, err
	}
	defer deleteTree(ss[0].conn(), root)

	for range max(rounds, 1) {
		var acq, cyc [patterns]*histogram
		for p := range patterns {
			acq[p], cyc[p] = newHistogram(), newHistogram()
		}
		for i := range samples {
			for k := range patterns {
				if err := ctx.Err(); err != nil {
					return pr, err
				}
				p := (Pattern(i) + k) % patterns
				a, c, err := timePattern(ctx, ss[i%len(ss)].conn(), root, p)
				if err != nil {
					return pr, err
				}
				acq[p].record(a)
				cyc[p].record(c)
			}
		}
		var r PriceRound
		for p := range patterns {
			r.Acquire[p], r.Cycle[p] = acq[p].summary().P50, cyc[p].summary().P50
		}
		pr.Rounds = append(pr.Rounds, r)
	}
	return pr, nil
}

// timePattern runs one acquire of pattern p under root and releases it.
func timePattern(ctx context.Context, c *zk.Conn, root string, p Pattern) (acquire, cycle time.Duration, err error) {
	// do runs one request, in a goroutine of its own for PatternCtx.
	do := func(fn func() error) error {
		if p != PatternCtx {
			return fn()
		}
		ch := make(chan error, 1)
		go func() { ch <- fn() }()
		select {
		case err := <-ch:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	t0 := time.Now()
	var node string
	if err := do(func() (err error) {
		node, err = c.Create(root+"/n-", nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		return err
	}); err != nil {
		return 0, 0, fmt.Errorf("bench: price create: %w", err)
	}
	listed := make(chan error, 1)
	go func() { _, _, err := c.Children(root); listed <- err }()
	var readErr error
	switch p {
	case PatternToken:
		_, _, readErr = c.Get(node)
	case PatternWatched, PatternCtx:
		// The delete below fires the watch; nobody reads the event.
		readErr = do(func() error { _, _, _, err := c.GetW(node); return err })
	}
	if err := <-listed; err != nil {
		return 0, 0, fmt.Errorf("bench: price list: %w", err)
	}
	if readErr != nil {
		return 0, 0, fmt.Errorf("bench: price read: %w", readErr)
	}
	acquire = time.Since(t0)
	if err := do(func() error { return c.Delete(node, -1) }); err != nil {
		return 0, 0, fmt.Errorf("bench: price delete: %w", err)
	}
	return acquire, time.Since(t0), nil
}

// writePrice is the results page's section on MeasurePrice, with the
// uncontended acquire of sequential over go-zookeeper's Lock beside it.
func (r *Report) writePrice(w io.Writer) {
	pr := r.Price
	if pr == nil || len(pr.Rounds) == 0 {
		return
	}
	fmt.Fprintf(w, "## What the token, Done and ctx cost\n\n")
	fmt.Fprintf(w, "An uncontended acquire and its release on bare go-zookeeper connections, no lock code at all "+
		"(`bench.MeasurePrice`): one session per member, %d rounds of %d samples of each pattern, the patterns taking "+
		"turns. **create+list** is what go-zookeeper's Lock sends; **+token read** adds a read of the new node beside "+
		"the listing (its czxid is sequential's fencing token); **+watched read** leaves a data watch with that read "+
		"(the watch behind `Done()`), which the release's delete fires; **+ctx per request** runs each of its requests "+
		"in a goroutine of its own that the caller waits for beside a context, as `internal/zkop` does to give "+
		"go-zookeeper's blocking calls a ctx. Ratios: over create+list in the same round, median of the rounds [95%% CI].\n\n",
		len(pr.Rounds), pr.Samples)
	fmt.Fprintf(w, "| pattern | acquire p50 ms | acquire over create+list | acquire+release p50 ms | cycle over create+list |\n|---|---:|---:|---:|---:|\n")
	for p := range patterns {
		acq, cyc := ratioEst(pr.Ratio(p, false), "(no difference)"), ratioEst(pr.Ratio(p, true), "(no difference)")
		if p == PatternBare {
			acq, cyc = "1 (reference)", "1 (reference)"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", p, estStr(pr.median(p, false)), acq, estStr(pr.median(p, true)), cyc)
	}
	if e, ok := r.Compare("sequential", "zk-peer", 1, FigAcquireP50); ok {
		fmt.Fprintf(w, "\nIn the lock runs at N=1, sequential's acquire p50 is %s zk-peer's and its throughput %s. "+
			"Of the acquire's gap, the token's read with its watch accounts for %s and the same with a goroutine per "+
			"request for %s; what is left is the rest of the lock's own code.\n",
			ratioEst(e, "(no difference)"), ratioEst(r.seqOverPeerAtOne(FigThroughput), "(no difference)"),
			ratioEst(pr.Ratio(PatternWatched, false), "(no difference)"), ratioEst(pr.Ratio(PatternCtx, false), "(no difference)"))
	}
	fmt.Fprintf(w, "\n")
}

// median is pattern p's p50 over the rounds (acquire, or with cycle the
// acquire+release), in milliseconds, with its interval.
func (pr Price) median(p Pattern, cycle bool) Estimate {
	return pr.overRounds(cycle, func(v [patterns]time.Duration) float64 { return millis(v[p]) })
}

// seqOverPeerAtOne is sequential over zk-peer at N=1 for fig: a zero
// Estimate (printed "-") when either did not run.
func (r *Report) seqOverPeerAtOne(fig Figure) Estimate {
	e, _ := r.Compare("sequential", "zk-peer", 1, fig)
	return e
}
