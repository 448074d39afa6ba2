// Package admission keeps slow requests from holding every connection of a pool: each request names what it
// counts against (its client: role, credential, address; and the class of slow operations) and waits while
// any of them already holds its share, so that a few slow clients cannot take every connection from the
// others (the way Hasura limits connections per role). Costs tells slow operations from cheap ones by how long
// they held their connections before. It only counts; the pool itself hands out the connections.
package admission

import (
	"context"
	"sync"
)

// Key is what a request counts against, with the most requests of it admitted at once (at least one).
type Key struct {
	Name string
	Max  int
}

// Limiter admits a request while each of its keys holds fewer than its Max.
type Limiter struct {
	mu   sync.Mutex
	held map[string]int
	// freed is closed, and replaced, whenever a request leaves, to wake the waiting ones.
	freed chan struct{}
}

// New returns a limiter with nothing held.
func New() *Limiter {
	return &Limiter{held: map[string]int{}, freed: make(chan struct{})}
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
func (l *Limiter) Admit(ctx context.Context, keys ...Key) (release func(), err error) {
	for {
		l.mu.Lock()
		full := -1
		for i, k := range keys {
			if l.held[k.Name] >= max(k.Max, 1) {
				full = i
				break
			}
		}
		if full < 0 {
			l.countLocked(keys)
			l.mu.Unlock()
			return func() { l.release(keys) }, nil
		}
		freed := l.freed
		l.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return nil, &Full{Key: keys[full].Name, Max: max(keys[full].Max, 1), Err: ctx.Err()}
		}
	}
}

// Hold counts a request that is running already against keys, over their share if need be, and returns the
// function that releases it (call it exactly once): a request that turned out slow while it ran makes the
// next slow ones wait, though it cannot give back the connection it holds.
func (l *Limiter) Hold(keys ...Key) (release func()) {
	l.mu.Lock()
	l.countLocked(keys)
	l.mu.Unlock()
	return func() { l.release(keys) }
}

func (l *Limiter) countLocked(keys []Key) {
	for _, k := range keys {
		l.held[k.Name]++
	}
}

// Held is how many requests count against key now.
func (l *Limiter) Held(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held[key]
}

func (l *Limiter) release(keys []Key) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		if l.held[k.Name]--; l.held[k.Name] <= 0 {
			delete(l.held, k.Name) // the map holds only the clients of requests in flight
		}
	}
	close(l.freed)
	l.freed = make(chan struct{})
}
