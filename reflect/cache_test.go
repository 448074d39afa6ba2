package reflect

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/pgtest"
)

func TestCacheLoadsOncePerKeyAndIsBounded(t *testing.T) {
	c := NewCache[int](2)
	var loads atomic.Int32
	load := func(v int) func(context.Context) (int, error) {
		return func(context.Context) (int, error) {
			loads.Add(1)
			time.Sleep(10 * time.Millisecond)
			return v, nil
		}
	}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v, err := c.Get(context.Background(), "anon", []string{"public"}, load(1)); v != 1 || err != nil {
				t.Errorf("got %v %v", v, err)
			}
		}()
	}
	wg.Wait()
	if loads.Load() != 1 {
		t.Fatalf("%d loads for one key", loads.Load())
	}
	c.Get(context.Background(), "authenticated", []string{"public"}, load(2))
	c.Get(context.Background(), "service_role", []string{"public"}, load(3))
	c.mu.Lock()
	n := len(c.entries)
	c.mu.Unlock()
	if n > 2 {
		t.Fatalf("cache holds %d entries, bound is 2", n)
	}
	// A different search path is a different key.
	before := loads.Load()
	c.Get(context.Background(), "service_role", []string{"public", "api"}, load(4))
	if loads.Load() != before+1 {
		t.Fatal("search path is not part of the key")
	}
}

func TestCacheInvalidateAndErrors(t *testing.T) {
	c := NewCache[int](4)
	calls := 0
	load := func(context.Context) (int, error) { calls++; return calls, nil }
	c.Get(context.Background(), "r", nil, load)
	c.Invalidate()
	if v, _ := c.Get(context.Background(), "r", nil, load); v != 2 {
		t.Fatalf("after Invalidate got %d, want a fresh load", v)
	}
	boom := errors.New("boom")
	if _, err := c.Get(context.Background(), "e", nil, func(context.Context) (int, error) { return 0, boom }); err != boom {
		t.Fatal(err)
	}
	if v, err := c.Get(context.Background(), "e", nil, load); err != nil || v != 3 {
		t.Fatalf("a failed load was cached: %v %v", v, err)
	}
}

type countingInvalidator struct{ n atomic.Int32 }

func (c *countingInvalidator) Invalidate() { c.n.Add(1) }

func TestWatchInvalidatesOnNotifyAndReconnects(t *testing.T) {
	url := pgtest.NewDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inv := &countingInvalidator{}
	ready := make(chan struct{})
	var conns []*pgx.Conn
	var mu sync.Mutex
	connect := func(ctx context.Context) (*pgx.Conn, error) {
		c, err := pgx.Connect(ctx, url)
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
		return c, err
	}
	var logged []string
	logf := func(format string, args ...any) {
		mu.Lock()
		logged = append(logged, fmt.Sprintf(format, args...))
		mu.Unlock()
		t.Logf(format, args...)
	}
	done := make(chan struct{})
	go func() { Watch(ctx, connect, "test_channel", inv, ready, logf); close(done) }()
	<-ready
	base := inv.n.Load()
	notifier, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer notifier.Close(ctx)
	if _, err := notifier.Exec(ctx, "notify test_channel, '1'"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return inv.n.Load() > base })
	// Kill the listening backend: the watcher reconnects and invalidates, since it may have missed news.
	base = inv.n.Load()
	mu.Lock()
	pid := conns[0].PgConn().PID()
	mu.Unlock()
	if _, err := notifier.Exec(ctx, "select pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(conns) >= 2 && inv.n.Load() > base })
	base = inv.n.Load()
	if _, err := notifier.Exec(ctx, "notify test_channel, '2'"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return inv.n.Load() > base })
	// Each loss after a recovery waits the first backoff again, not one doubled at every outage: six crashes
	// in a test would otherwise leave the watch deaf for 3.2 s after the last, and schemas stale.
	newest := func() uint32 {
		mu.Lock()
		defer mu.Unlock()
		if c := conns[len(conns)-1]; c != nil {
			return c.PgConn().PID()
		}
		return 0
	}
	var killed uint32
	for kill := 2; kill <= 6; kill++ {
		// Kill the newest connection once its LISTEN has finished, not during it (a loss without a recovery).
		// Asking for it by pid: a look for any backend whose last query was a LISTEN also found a killed one
		// still exiting, on a loaded machine (CI on PG 17).
		var pid uint32
		waitFor(t, func() bool {
			pid = newest()
			var listening bool
			err := notifier.QueryRow(ctx, `select exists (select 1 from pg_stat_activity where pid = $1 and state = 'idle'
				and query like 'listen %')`, pid).Scan(&listening)
			return pid != killed && err == nil && listening
		})
		if _, err := notifier.Exec(ctx, "select pg_terminate_backend($1)", pid); err != nil {
			t.Fatal(err)
		}
		killed = pid
	}
	waitFor(t, func() bool { return newest() != killed && newest() != 0 })
	mu.Lock()
	for _, line := range logged {
		if !strings.HasSuffix(line, "(retrying in 100ms)") {
			t.Errorf("after a recovery the watch waits longer than the first backoff: %q", line)
		}
	}
	if len(logged) < 6 {
		t.Errorf("%d losses logged, want 6", len(logged))
	}
	mu.Unlock()
	cancel()
	<-done
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A load shared by several callers that failed only because its own caller's context ended (the client went
// away) is run again for the others, which would otherwise fail for someone else's reason.
func TestCacheRunsAgainALoadItsCallerAbandoned(t *testing.T) {
	c := NewCache[int](4)
	started := make(chan struct{})
	abandoned := func(ctx context.Context) (int, error) {
		close(started)
		<-ctx.Done()
		return 0, ctx.Err()
	}
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := c.Get(ctx, "anon", nil, abandoned)
		first <- err
	}()
	<-started
	second := make(chan int, 1)
	go func() {
		v, err := c.Get(context.Background(), "anon", nil, func(context.Context) (int, error) { return 7, nil })
		if err != nil {
			t.Errorf("the other caller: %v", err)
		}
		second <- v
	}()
	time.Sleep(50 * time.Millisecond) // for the second caller to wait on the first's load
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Errorf("the abandoning caller: %v", err)
	}
	if v := <-second; v != 7 {
		t.Errorf("the other caller got %d, want the value of a load of its own", v)
	}
}

// Renew carries the values of the generation it ends over to the next: a Get of the same key takes one up
// without loading, once; what no Get took up by the Renew after is gone, and so is what Retire drops for its
// search path and what Invalidate drops.
func TestCacheRenewCarriesValuesOver(t *testing.T) {
	ctx := context.Background()
	c := NewCache[int](8)
	loads := 0
	get := func(key string, path []string, v int) int {
		t.Helper()
		got, err := c.Get(ctx, key, path, func(context.Context) (int, error) { loads++; return v, nil })
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	public, api := []string{"public"}, []string{"api"}
	get("a", public, 1)
	get("b", public, 2)
	get("a", api, 3)
	if carried := c.Renew(); len(carried) != 3 {
		t.Fatalf("Renew carried %v, want the three values", carried)
	}
	if got := get("a", public, 10); got != 1 || loads != 3 {
		t.Fatalf("after Renew: %d with %d loads, want the value carried over and no load", got, loads)
	}
	if dropped := c.Retire(api); len(dropped) != 1 || dropped[0] != 3 {
		t.Fatalf("Retire(api) dropped %v, want [3]", dropped)
	}
	if got := get("a", api, 30); got != 30 {
		t.Fatalf("a retired value was taken up: %d", got)
	}
	// b was carried over and not taken up: the next Renew drops it; a, taken up, is carried again
	if carried := c.Renew(); len(carried) != 2 {
		t.Fatalf("the second Renew carried %v, want a's two values", carried)
	}
	if got := get("b", public, 20); got != 20 {
		t.Fatalf("a value no Get took up was carried over twice: %d", got)
	}
	if got := get("a", public, 100); got != 1 {
		t.Fatalf("a value taken up was not carried over again: %d", got)
	}
	c.Invalidate()
	if got := get("a", public, 1000); got != 1000 {
		t.Fatalf("a value was carried over an Invalidate: %d", got)
	}
}
