package main

// The locks zklocks web runs: the herd demo's two (naive, sequential),
// and the read-write lock, the semaphore and the election, which share
// the sequential lock's queue.

import (
	"fmt"
	"strings"

	zkl "github.com/zklocks/zklocks"
	"github.com/zklocks/zklocks/election"
	"github.com/zklocks/zklocks/rwlock"
	"github.com/zklocks/zklocks/semaphore"
)

// webPermits is the semaphore's permits on the page: two holders at once.
const webPermits = 2

// webVariant is a lock the page can run.
type webVariant struct {
	name string
	// queue: the lock path is the parent of the contenders' nodes.
	queue bool
	// byIndex: the first node of the queue holds, the others wait, so
	// the servers' order says who holds (naive: the one node holds).
	// Otherwise (readers, permits) the contenders' own Lock calls say it.
	byIndex bool
	// readers: the page offers readers as well as writers.
	readers bool
	// newLock makes a contender's lock; reader asks for a read side.
	newLock func(s *zkl.Session, path string, reader bool) (herdLock, error)
}

func fromHerd(name string) webVariant {
	hv, err := lookupHerdVariant(name)
	if err != nil {
		panic(err)
	}
	return webVariant{name: hv.name, queue: hv.queue, byIndex: true,
		newLock: func(s *zkl.Session, p string, _ bool) (herdLock, error) { return hv.newLock(s, p) }}
}

var webVariants = []webVariant{
	fromHerd("naive"),
	fromHerd("sequential"),
	{name: "rwlock", queue: true, readers: true, newLock: func(s *zkl.Session, p string, reader bool) (herdLock, error) {
		m, err := rwlock.New(s, p)
		if err != nil {
			return nil, err
		}
		if reader {
			return m.Reader(), nil
		}
		return m.Writer(), nil
	}},
	{name: "semaphore", queue: true, newLock: func(s *zkl.Session, p string, _ bool) (herdLock, error) {
		m, err := semaphore.New(s, p, webPermits)
		if err != nil {
			return nil, err
		}
		return m, nil
	}},
	{name: "election", queue: true, byIndex: true, newLock: func(s *zkl.Session, p string, _ bool) (herdLock, error) {
		m, err := election.New(s, p)
		if err != nil {
			return nil, err
		}
		return m, nil
	}},
}

func webVariantNames() []string {
	var names []string
	for _, v := range webVariants {
		names = append(names, v.name)
	}
	return names
}

func lookupWebVariant(name string) (webVariant, error) {
	for _, v := range webVariants {
		if v.name == name {
			return v, nil
		}
	}
	return webVariant{}, fmt.Errorf("unknown variant %q (have %s)", name, strings.Join(webVariantNames(), ", "))
}
