// Package lockq is the client below the queue-based locks: everything a
// lock recipe must do with ZooKeeper but should not have to spell out.
// A recipe (sequential/recipe.go) reads as the notes' steps, one call
// here per step; the robustness lives here, once.
//
// # Words
//
// One word per idea, in the code and in the docs:
//
//   - queue: the children of the lock path whose names end in a sequence
//     number, in sequence order (names.go). Ours, Curator's, kazoo's and
//     go-zookeeper's nodes all count.
//   - node: our child in the queue, named _c_<guid>-lock-<seq> (the read-
//     write lock's: -__READ__ or -__WRIT__ for -lock-); Node is its
//     handle, from the create to the release.
//   - join: create our node (Queue.Join). A create whose answer is lost
//     has an unknown outcome: the GUID finds the node once the client is
//     back, and only a node of the client's current session is taken.
//   - twin: a second node with our GUID, made by a create whose answer
//     was lost. Every listing of an unsure acquisition deletes its twins;
//     abandon sweeps them.
//   - line: one listing of the queue as seen from our node (Queue.Line):
//     the head (first: the holder), our predecessor (just ahead of us).
//     Line.Only narrows it to the nodes a contender waits for (a reader:
//     the writers).
//   - wait: watch the predecessor only, until it is gone (Queue.AwaitGone).
//   - release: delete our node after a hold (Queue.Release).
//   - abandon: undo a failed acquisition: our node and its twins
//     (Queue.Abandon).
//   - later: what cannot be done now (connection down, ctx ended) goes on
//     in the background until it is done or the session is gone
//     (zkop.Client.Later).
//   - lost: the hold ended without a release (internal/hold's reasons).
//   - slot: one contender's cycle, idle, acquiring, held (Slot): what its
//     Token, Done, Err and Node report, and its operation log. The
//     naive and sequential locks have one, the read-write lock one per
//     side. A Slot drives a Keeper: a Queue, or the naive lock's fixed
//     node (naive/fixed.go), which uses this package's Node and Slot.
//
// # What it hides
//
// Every request honours ctx and is counted (internal/zkop). A request
// that failed for want of a connection is retried after a pause that
// grows, and only once the client has a session again, so that nothing
// is sent on a closed connection; a few failures in a row while joining
// or abandoning mean the connection is gone for good. The lock path is
// made on first use, as a container node. Our node is watched from its create on
// (internal/hold), so a loss ends the wait. Deletes of a queue node go by
// name at any version, since the GUID makes the name ours alone.
package lockq
