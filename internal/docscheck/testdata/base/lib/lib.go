// Package lib is a fixture for the docscheck tests.
package lib

// Answer is the answer.
const Answer = 42

// Limits of a Counter.
const (
	// Max is the largest count.
	Max = 10
	Min = 0
)

// Counter counts.
type Counter struct {
	N int
}

// Add adds one.
func (c *Counter) Add() {
	c.N++
}

// Double returns twice x.
func Double(x int) int {
	y := x * 2
	if y > Max {
		y = Max
	}
	return y
}

// Stringer is a fixture interface.
type Stringer interface {
	String() string
}
