package admission

import (
	"fmt"
	"testing"
	"time"
)

// An operation is unknown until observed, slow at once after one run of the threshold or longer, and cheap
// again only after some shorter runs; the document and the operation name both tell operations apart.
func TestCostsClassifyOperations(t *testing.T) {
	c := NewCosts(100, 250*time.Millisecond)
	q := c.Operation("query A { a } query B { b }", "A")
	if other := c.Operation("query A { a } query B { b }", "B"); other == q {
		t.Fatal("two operation names of one document are one operation")
	}
	if other := c.Operation("query A { a } query B { b } ", "A"); other == q {
		t.Fatal("two documents are one operation")
	}
	if got := c.Class(q); got != Unknown {
		t.Fatalf("before any run: %s", got)
	}
	c.Observe(q, 2*time.Millisecond)
	if got := c.Class(q); got != Cheap {
		t.Fatalf("after a 2ms run: %s", got)
	}
	c.Observe(q, 2*time.Second)
	if got := c.Class(q); got != Slow {
		t.Fatalf("after a 2s run: %s", got)
	}
	runs := 0
	for ; c.Class(q) == Slow; runs++ {
		if runs > 20 {
			t.Fatal("still slow after 20 runs of 2ms")
		}
		c.Observe(q, 2*time.Millisecond)
	}
	if runs < 2 {
		t.Errorf("cheap again after %d short run(s): one blip of a busy machine should not swing it back and forth", runs)
	}
}

// The costs remember a bounded number of operations, the least recently used forgotten first.
func TestCostsForgetTheLeastRecentlyUsed(t *testing.T) {
	c := NewCosts(3, time.Second)
	ops := make([]Operation, 4)
	for i := range ops {
		ops[i] = c.Operation(fmt.Sprintf("{ f%d }", i), "")
	}
	for _, op := range ops[:3] {
		c.Observe(op, 2*time.Second)
	}
	c.Class(ops[0]) // used again
	c.Observe(ops[3], time.Millisecond)
	want := []Class{Slow, Unknown, Slow, Cheap}
	for i, op := range ops {
		if got := c.Class(op); got != want[i] {
			t.Errorf("operation %d: %s, want %s", i, got, want[i])
		}
	}
}
