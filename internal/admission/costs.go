package admission

import (
	"hash/maphash"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Class is what Costs knows of an operation's cost.
type Class int

const (
	// Unknown: not seen (or forgotten); it may be either.
	Unknown Class = iota
	// Cheap: it held its connection for less than the slow threshold, as far as Costs remembers.
	Cheap
	// Slow: it held its connection for the threshold or longer.
	Slow
)

func (c Class) String() string {
	switch c {
	case Cheap:
		return "cheap"
	case Slow:
		return "slow"
	default:
		return "unknown"
	}
}

// Operation names one operation: its document and operation name, hashed.
type Operation uint64

// Costs remembers how long each operation held its connection, for a bounded number of operations (the least
// recently used are forgotten), so that an operation known to be slow can be held to its own share of the pool
// before it runs. The estimate rises at once to a longer observation (one slow run is enough to make an
// operation slow: the harm is done while it runs) and falls by a quarter of the difference per shorter one (a
// cheap operation slowed down once by a busy machine is cheap again after a few runs). Safe for concurrent use.
type Costs struct {
	seed      maphash.Seed
	threshold time.Duration
	held      *lru.Cache[Operation, time.Duration]
}

// NewCosts remembers at most size operations; an operation is slow once it holds its connection threshold or
// longer.
func NewCosts(size int, threshold time.Duration) *Costs {
	held, err := lru.New[Operation, time.Duration](max(size, 1))
	if err != nil {
		panic(err) // size >= 1
	}
	// A seed per process: a client cannot make its document hash like another's to borrow its cost.
	return &Costs{seed: maphash.MakeSeed(), threshold: threshold, held: held}
}

// Threshold is how long a slow operation holds its connection at least.
func (c *Costs) Threshold() time.Duration { return c.threshold }

// Operation is the name of the operation operationName of document.
func (c *Costs) Operation(document, operationName string) Operation {
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.WriteString(document)
	h.WriteByte(0) // no name in a document
	h.WriteString(operationName)
	return Operation(h.Sum64())
}

// Class is what is known of op.
func (c *Costs) Class(op Operation) Class {
	d, ok := c.held.Get(op)
	switch {
	case !ok:
		return Unknown
	case d >= c.threshold:
		return Slow
	default:
		return Cheap
	}
}

// Observe notes that op held its connection for d.
func (c *Costs) Observe(op Operation, d time.Duration) {
	// Two requests of op observing at once may lose one of their notes; an estimate can afford that.
	if old, ok := c.held.Peek(op); ok && d < old {
		d = old - (old-d)/4
	}
	c.held.Add(op, d)
}
