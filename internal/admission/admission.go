// Package admission keeps any one client from holding more than its share of a connection pool: each request
// names who it comes from (its role, its credential, its address) and waits while any of them already holds
// its share, so that a few slow clients cannot take every connection from the others (the way Hasura limits
// connections per role). It only counts; the pool itself hands out the connections.
package admission

import (
	"context"
	"sync"
)

// Limiter admits at most Max requests at once per key.
type Limiter struct {
	max int

	mu   sync.Mutex
	held map[string]int
	// freed is closed, and replaced, whenever a request leaves, to wake the waiting ones.
	freed chan struct{}
}

// New returns a limiter admitting at most most requests at once per key (at least one).
func New(most int) *Limiter {
	return &Limiter{max: max(most, 1), held: map[string]int{}, freed: make(chan struct{})}
}

// Full is returned by Admit when ctx ended while a key of the request held its share; Key is that key.
type Full struct {
	Key string
	Max int
	Err error // ctx's error
}

func (f *Full) Error() string {
	return "admission: " + f.Key + " holds its share of the pool: " + f.Err.Error()
}
func (f *Full) Unwrap() error { return f.Err }

// Admit waits until none of keys holds its share, counts the request against each, and returns the function
// that releases it (call it exactly once). It fails with *Full when ctx ends first.
func (l *Limiter) Admit(ctx context.Context, keys ...string) (release func(), err error) {
	for {
		l.mu.Lock()
		full := ""
		for _, k := range keys {
			if l.held[k] >= l.max {
				full = k
				break
			}
		}
		if full == "" {
			for _, k := range keys {
				l.held[k]++
			}
			l.mu.Unlock()
			return func() { l.release(keys) }, nil
		}
		freed := l.freed
		l.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return nil, &Full{Key: full, Max: l.max, Err: ctx.Err()}
		}
	}
}

func (l *Limiter) release(keys []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		if l.held[k]--; l.held[k] <= 0 {
			delete(l.held, k) // the map holds only the clients of requests in flight
		}
	}
	close(l.freed)
	l.freed = make(chan struct{})
}
