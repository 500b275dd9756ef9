// Package textbook is the lock of ZooKeeper's recipes page as a student
// first writes it: an ephemeral-sequential child "lock-" of the lock
// path, getChildren, hold when ours is the lowest, else an exists watch
// on the next lower node and a wait, and a delete to unlock.
//
// It is not for use. It is here to be read beside the sequential package
// and to fail: it runs the conformance suite (internal/locktest) with
// every case it fails listed and pinned, and docs/hardening.md (the
// hardening ledger) gives, case by case, what goes wrong, the bug report
// of a peer library that met the same thing, and the code of this module
// that fixes it. It has no retries, no clean-up of a create whose answer
// was lost, no session checks and no liveness clock: Done closes only
// when the watch on its node sees the node deleted.
package textbook
