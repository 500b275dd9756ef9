package main

// The report zklocks inspect builds: one snapshot of every lock path asked
// for. The JSON names below are the schema documented in docs/inspect.md;
// scripts read them, so a field is only ever added, and a rename or a
// change of meaning bumps reportVersion.

// reportVersion is the "version" of the JSON report.
const reportVersion = 1

// report is one snapshot.
type report struct {
	Version int      `json:"version"`
	Servers []string `json:"servers"`
	// Wchp says how the watch counts were gathered; nil when they were not
	// asked for (-watchers=false).
	Wchp  *wchpInfo  `json:"wchp"`
	Locks []lockView `json:"locks"`

	clockNote string // why the locks have no now_ms, for the text output
}

// wchpInfo says which members answered the 4lw wchp command. The counts
// are complete only when every member of the ensemble is listed in
// Servers and answered.
type wchpInfo struct {
	Members  int      `json:"members"`
	Answered int      `json:"answered"`
	Errors   []string `json:"errors"`
	// EnsembleMembers is how many members the servers' conf answers list;
	// nil when none answered conf.
	EnsembleMembers *int `json:"ensemble_members"`
	// Complete is true when the counts cover every member: every listed
	// server answered, and none of the members conf lists is missing.
	Complete bool `json:"complete"`
}

// lockView is one lock path.
type lockView struct {
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	// Layout is "node" (the naive lock: the path is itself the holder's
	// ephemeral node) or "children" (a queue of sequential children); nil
	// when the path does not exist.
	Layout *string `json:"layout"`
	// NowMs is the ensemble's clock when the snapshot was taken, in ms
	// since the epoch (the mtime of a probe node written after every read
	// of the snapshot); nil when no probe could be written.
	NowMs      *int64          `json:"now_ms"`
	Contenders []contenderView `json:"contenders"`
	// WatchersTotal counts the watches on the lock path and on each of its
	// contenders' nodes; nil when a member did not answer wchp.
	WatchersTotal *int `json:"watchers_total"`
}

// Layouts of a lock path.
const (
	layoutNode     = "node"
	layoutChildren = "children"
)

// Roles of a contender.
const (
	roleHolds = "holds"
	roleWaits = "waits"
)

// contenderView is one contender: a node in the queue, or the naive lock's
// node.
type contenderView struct {
	Index   int    `json:"index"`
	Role    string `json:"role"`
	Node    string `json:"node"` // full path
	Seq     *int64 `json:"seq"`  // nil for the naive layout
	Token   int64  `json:"token"`
	Session string `json:"session"` // ephemeralOwner, 0x-prefixed hex
	Kind    string `json:"kind"`
	CtimeMs int64  `json:"ctime_ms"`
	MtimeMs int64  `json:"mtime_ms"`
	// CreatedMsAgo and WrittenMsAgo are now_ms - ctime and now_ms - mtime:
	// differences of two ZooKeeper timestamps; nil without now_ms.
	CreatedMsAgo *int64 `json:"created_ms_ago"`
	WrittenMsAgo *int64 `json:"written_ms_ago"`
	// Watchers counts the watches on this node; nil when unknown.
	Watchers *int `json:"watchers"`
	// WatcherSessions lists the sessions behind Watchers, one entry per
	// watch (a session with a data and a child watch appears twice).
	WatcherSessions []string `json:"watcher_sessions"`
	DataBytes       int      `json:"data_bytes"`
	Data            *string  `json:"data"` // nil when not printable text
	Owner           *owner   `json:"owner,omitempty"`
	Lease           *lease   `json:"lease,omitempty"`
	// RevokeRequested says a client has asked this holder to give the
	// lock up (sequential.Revoke, zklocks revoke, Curator's Revoker).
	RevokeRequested bool `json:"revoke_requested,omitempty"`
}

// owner is a reentrant holder record, decoded.
type owner struct {
	Owner string `json:"owner"`
	Host  string `json:"host"`
	PID   int    `json:"pid"`
	Mode  string `json:"mode"`
	Count *int   `json:"count"` // nil in "memory" mode, where the node has no count
}

// lease is a timeout lease record, decoded.
type lease struct {
	Ms   int64 `json:"ms"`
	Held bool  `json:"held"`
	// RemainingMs is mtime + ms - now_ms for a stamped ("held") record;
	// Expired says it is <= 0, which is when a waiter may evict the
	// holder. Both nil when the lease is not running (not stamped) or
	// there is no clock.
	RemainingMs *int64 `json:"remaining_ms"`
	Expired     *bool  `json:"expired"`
}

// Kinds of contender node.
const (
	kindSequential = "zklocks-sequential"
	kindReentrant  = "zklocks-reentrant"
	kindTimeout    = "zklocks-timeout"
	kindNaive      = "naive"
	kindCurator    = "curator"
	kindKazoo      = "kazoo"
	kindUnknown    = "unknown"
)

func ptrTo[T any](v T) *T { return &v }
