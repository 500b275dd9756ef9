package lib

import "testing"

func TestDouble(t *testing.T) {
	if Double(2) != 4 {
		t.Fail()
	}
}

func BenchmarkAdd(b *testing.B) {
	var c Counter
	for range b.N {
		c.Add()
	}
}

func ExampleDouble() {}
