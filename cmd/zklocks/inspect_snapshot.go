package main

import (
	"context"
	"errors"
	"fmt"
	"path"

	zkl "github.com/zklocks/zklocks"

	"github.com/go-zookeeper/zk"

	"github.com/zklocks/zklocks/internal/zkop"
	"github.com/zklocks/zklocks/sequential"
)

// clockProbe is the node whose mtime gives the ensemble's clock. It is an
// ephemeral sequential node at the root, deleted right after it is read
// (and with the session at the latest). Its name has a sequence suffix, so
// it must never be created under a lock path, where it would join a queue.
const clockProbe = "/zklocks-inspect-"

// inspector takes snapshots of lock paths over one session.
type inspector struct {
	session  *zkl.Session
	conn     *zk.Conn
	client   *zkop.Client // ctx-aware requests
	servers  []string
	watchers bool // ask every member for wchp
}

// lockRead is one lock path as read, before the clock is known.
type lockRead struct {
	view lockView
	rows []sequential.Contender
}

// snapshot reads every path, then the ensemble's clock, then (if asked)
// the servers' watches. It fails when the ensemble does not answer before
// ctx ends; a path that does not exist is not an error.
func (in *inspector) snapshot(ctx context.Context, paths []string) (*report, error) {
	// One sync makes the connected server catch up with the leader, so
	// the reads below see every write committed before it.
	if err := in.client.Sync(ctx, "/"); err != nil {
		return nil, fmt.Errorf("sync: %w", err)
	}
	reads := make([]lockRead, 0, len(paths))
	for _, p := range paths {
		r, err := in.read(ctx, p)
		if err != nil {
			return nil, err
		}
		reads = append(reads, r)
	}
	// The clock is read after every node: a timestamp read before the
	// probe was written was stamped before it, so ages are not negative
	// unless a leader change mixed two servers' clocks.
	now, clockNote, err := in.ensembleNow(ctx)
	if err != nil {
		return nil, err
	}
	rep := &report{Version: reportVersion, Servers: in.servers, Locks: make([]lockView, 0, len(reads)), clockNote: clockNote}
	for _, r := range reads {
		l := r.view
		l.NowMs = now
		l.Contenders = contenderViews(r.rows, l.Layout != nil && *l.Layout == layoutNode, now)
		rep.Locks = append(rep.Locks, l)
	}
	if in.watchers {
		t, info := gatherWatches(in.servers)
		rep.Wchp = info
		for i := range rep.Locks {
			applyWatches(&rep.Locks[i], t, info.Complete)
		}
	}
	return rep, nil
}

// read reads one lock path: the node at the path itself for the naive
// layout, else its queue of children in lock order.
func (in *inspector) read(ctx context.Context, p string) (lockRead, error) {
	data, stat, err := in.client.Get(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		return lockRead{view: lockView{Path: p}}, nil
	}
	if err != nil {
		return lockRead{}, fmt.Errorf("read %s: %w", p, err)
	}
	if stat.EphemeralOwner != 0 { // the naive layout: the node is the lock
		return lockRead{
			view: lockView{Path: p, Exists: true, Layout: ptrTo(layoutNode)},
			rows: []sequential.Contender{{Node: p, Seq: -1, Data: data, Stat: *stat}},
		}, nil
	}
	rows, err := sequential.Contenders(ctx, in.session, p)
	if err != nil {
		return lockRead{}, err
	}
	return lockRead{view: lockView{Path: p, Exists: true, Layout: ptrTo(layoutChildren)}, rows: rows}, nil
}

// ensembleNow returns the ensemble's clock: the mtime of a probe node it
// has just stamped. Ages are then differences of two server timestamps,
// never of the inspecting machine's clock. Where the probe cannot be
// written (no permission at the root) it returns a nil clock and says why
// in note; ages are then left out. The probe is deleted before it returns,
// or in the background if ctx ends first.
func (in *inspector) ensembleNow(ctx context.Context) (now *int64, note string, err error) {
	probe, err := in.client.Create(ctx, clockProbe, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if errors.Is(err, zk.ErrNoAuth) || errors.Is(err, zk.ErrInvalidACL) {
		return nil, fmt.Sprintf("no ensemble clock, ages left out: cannot create %s: %v", clockProbe, err), nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("write the clock probe %s: %w", clockProbe, err)
	}
	_, stat, err := in.client.Get(ctx, probe)
	_ = in.client.DeleteOwn(ctx, probe)
	if err != nil {
		return nil, "", fmt.Errorf("read the clock probe %s: %w", probe, err)
	}
	return ptrTo(stat.Mtime), "", nil
}

// contenderViews turns a queue (or the naive lock's node) into the report's
// contenders: the first holds the lock.
func contenderViews(rows []sequential.Contender, naive bool, now *int64) []contenderView {
	out := make([]contenderView, 0, len(rows))
	for i, c := range rows {
		v := contenderView{
			Index:   i,
			Role:    roleWaits,
			Node:    c.Node,
			Token:   c.Stat.Czxid,
			Session: fmt.Sprintf("%#x", c.Stat.EphemeralOwner),
			CtimeMs: c.Stat.Ctime,
			MtimeMs: c.Stat.Mtime,
		}
		if i == 0 {
			v.Role = roleHolds
		}
		if !naive {
			v.Seq = ptrTo(c.Seq)
		}
		if now != nil {
			v.CreatedMsAgo, v.WrittenMsAgo = ptrTo(*now-c.Stat.Ctime), ptrTo(*now-c.Stat.Mtime)
		}
		classify(&v, path.Base(c.Node), c.Data, naive, now)
		out = append(out, v)
	}
	return out
}
