package httpapi

import (
	"context"
	"sync"
	"testing"
	"time"
)

// The waits that end in one tick share its context, which ends at the tick's end: not before any of their
// deadlines, and at most a tick after.
func TestWaitDeadlinesShareATick(t *testing.T) {
	w := &waitDeadlines{tick: 50 * time.Millisecond}
	base := time.Now().Add(200 * time.Millisecond).Truncate(w.tick)
	first, second := w.until(base.Add(time.Millisecond)), w.until(base.Add(w.tick-time.Millisecond))
	later := w.until(base.Add(w.tick + time.Millisecond))
	if first != second || first == later {
		t.Fatalf("contexts of one tick %p, %p; of the next %p", first, second, later)
	}
	if at, ok := first.Deadline(); !ok || !at.Equal(base.Add(w.tick)) {
		t.Errorf("deadline %v, %v; want %v", at, ok, base.Add(w.tick))
	}
	// Asked before the deadline (the clock read first), the error is nil however late the answer comes.
	if now, err := time.Now(), first.Err(); now.Before(base.Add(w.tick)) && err != nil || first.Value("anything") != nil {
		t.Errorf("before its deadline: %v, %v", err, first.Value("anything"))
	}
	<-first.Done()
	if ended := time.Now(); ended.Before(base.Add(w.tick)) {
		t.Errorf("ended at %v, before the tick's end %v", ended, base.Add(w.tick))
	}
	if now, err := time.Now(), later.Err(); first.Err() != context.DeadlineExceeded || now.Before(base.Add(2*w.tick)) && err != nil {
		t.Errorf("errors after the first tick: %v, next tick's %v", first.Err(), err)
	}
	<-later.Done()
	if later.Err() != context.DeadlineExceeded {
		t.Errorf("next tick's error %v", later.Err())
	}
}

// Requests ask for their waits' contexts at once: each gets the context of its deadline's tick.
func TestWaitDeadlinesConcurrent(t *testing.T) {
	w := &waitDeadlines{tick: 10 * time.Millisecond}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				deadline := time.Now().Add(time.Duration(g*i%7) * time.Millisecond)
				at, _ := w.until(deadline).Deadline()
				if at.Before(deadline) || !at.Before(deadline.Add(w.tick)) {
					t.Errorf("deadline %v for %v", at, deadline)
					return
				}
			}
		}()
	}
	wg.Wait()
}
