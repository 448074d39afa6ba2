package httpapi

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// waitTick is how much later than asked a wait for a connection may end (see waitDeadlines).
const waitTick = 10 * time.Millisecond

// waitDeadlines bound the waits for a connection (admission and the pool's own queue): until gives a context
// that ends at the deadline rounded up to the next tick, one context shared by every wait that ends in the
// same tick. A context.WithDeadline of each request's would cost it a timer, a cancel context, a channel and a
// place among the request context's children, about a microsecond and a half of the server's time a request on
// the bench's machine, for a wait that nearly always ends at once. The shared context does not end when the
// client goes away: such a request keeps its place until a connection comes (which it gives back at once, its
// own context ending its statements before they start) or until its deadline.
type waitDeadlines struct {
	tick time.Duration
	mu   sync.Mutex // held while a tick's context is made
	last atomic.Pointer[tickDeadline]
}

// until returns the context of the tick in which deadline falls.
func (w *waitDeadlines) until(deadline time.Time) context.Context {
	n := (deadline.UnixNano() + int64(w.tick) - 1) / int64(w.tick)
	if d := w.last.Load(); d != nil && d.n == n {
		return d
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if d := w.last.Load(); d != nil && d.n == n {
		return d
	}
	d := &tickDeadline{n: n, at: time.Unix(0, n*int64(w.tick)), done: make(chan struct{})}
	time.AfterFunc(time.Until(d.at), func() { close(d.done) })
	// A wait whose deadline is earlier than the last one's (a shorter request deadline) gets a context of its
	// own, and the next wait of the last one's tick makes that again: rare, as the usual deadline is the pool
	// timeout from now.
	w.last.Store(d)
	return d
}

// tickDeadline is the context of tick n, which ends at n ticks since 1970.
type tickDeadline struct {
	n    int64
	at   time.Time
	done chan struct{}
}

func (d *tickDeadline) Deadline() (time.Time, bool) { return d.at, true }
func (d *tickDeadline) Done() <-chan struct{}       { return d.done }
func (d *tickDeadline) Value(any) any               { return nil }

func (d *tickDeadline) Err() error {
	select {
	case <-d.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}
