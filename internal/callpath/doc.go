// Package callpath computes the static call tree of a lock's method, the
// code a call runs through: every function of this module it can reach,
// down to and including the first frame into go-zookeeper, each with its
// file and its length. zklocks path prints it; docscheck holds each
// variant's "Through the code" table to it.
//
// The tree is static: it lists what a call may run on any branch, not
// what one run does. Calls through interfaces and func values are
// resolved by variable type analysis (graph.go says why), in a program of
// the variant and what it imports alone. A func literal counts as part of
// the function that declares it. The standard library and other modules
// are not listed and the tree does not go through them, so a function of
// ours that only they call back (a Stringer that fmt calls) is not
// reached; a literal given to them is, as part of its function.
package callpath
