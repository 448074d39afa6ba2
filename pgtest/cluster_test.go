package pgtest

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/internal/devtools/porttest"
	"github.com/pgreflect/pgreflect/internal/pgcluster"
	"github.com/pgreflect/pgreflect/internal/procstat"
)

// TestCrashKeepsWhatWasCommitted: a test's own cluster is there to be crashed, so what a test committed before
// the crash must be there after it, however busy the machine. (With the shared server's asynchronous commit, an
// immediate shutdown lost commits the WAL writer had not written yet: a crash test under make test's load lost
// the table it had just made and saw its API answer, rightly, that the table did not exist.)
func TestCrashKeepsWhatWasCommitted(t *testing.T) {
	c := StartCluster(t)
	ctx := context.Background()
	for round := range 3 {
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		if err != nil {
			t.Fatal(err)
		}
		table := fmt.Sprintf("kept_%d", round)
		if _, err := conn.Exec(ctx, "create table "+table+" (id int); insert into "+table+" values (1)"); err != nil {
			t.Fatal(err)
		}
		conn.Close(ctx)
		if err := c.Crash(ctx); err != nil {
			t.Fatal(err)
		}
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		conn, err = pgx.Connect(ctx, c.URL("postgres"))
		if err != nil {
			t.Fatal(err)
		}
		var n int
		err = conn.QueryRow(ctx, "select count(*) from "+table).Scan(&n)
		conn.Close(ctx)
		if err != nil || n != 1 {
			t.Fatalf("round %d: after the crash, %s has %d rows (%v), want the committed 1", round, table, n, err)
		}
	}
}

// A port reported free can be taken before the server binds it (make test on PostgreSQL 14 once failed a whole
// package so: "could not bind IPv4 address: Address already in use"); the start tries another port, and gives up
// after five.
func TestStartMovesOffAPortTakenMeanwhile(t *testing.T) {
	ctx := context.Background()
	taken := porttest.NewTaken(t, pgcluster.FreePort)
	dir := clusterDir(t)
	initialised := 0
	init := func(ctx context.Context, c *pgcluster.Cluster) error { initialised++; return c.Init(ctx) }
	c, err := startOnFreePort(ctx, pgcluster.Options{DataDir: filepath.Join(dir, "data"), Fast: true}, init, taken.Next)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(ctx)
	if c.Port() == taken.Port || taken.Asked != 2 || initialised != 1 {
		t.Errorf("port %d (taken %d), ports asked %d, data directory made %d times", c.Port(), taken.Port, taken.Asked, initialised)
	}
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)

	always := func() (int, error) { return taken.Port, nil }
	_, err = startOnFreePort(ctx, pgcluster.Options{DataDir: filepath.Join(clusterDir(t), "data"), Fast: true},
		func(ctx context.Context, c *pgcluster.Cluster) error { return c.Init(ctx) }, always)
	if err == nil || !strings.Contains(err.Error(), "attempt 5") {
		t.Errorf("a port that stays taken: %v", err)
	}
}

// Freeze leaves no process of the server running, even while clients open connections (the postmaster forking):
// CI once saw a frozen replica answer two queries, on a backend forked while the freeze listed the processes.
func TestFreezeStopsEveryProcessWhileConnectionsOpen(t *testing.T) {
	c := StartCluster(t)
	postmaster, err := c.PostmasterPID()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				connectCtx, cancelConnect := context.WithTimeout(ctx, 100*time.Millisecond)
				if conn, err := pgx.Connect(connectCtx, c.URL("postgres")); err == nil {
					conn.Close(connectCtx)
				}
				cancelConnect()
			}
		})
	}
	for round := range 40 {
		time.Sleep(5 * time.Millisecond)
		thaw := Freeze(t, c)
		children, err := procstat.Children(postmaster)
		if err != nil {
			t.Fatal(err)
		}
		if s, err := procstat.Read(postmaster); err == nil {
			children[postmaster] = s
		}
		for pid, s := range children {
			if s.State != 'T' && s.State != 'Z' {
				t.Errorf("round %d: process %d of the frozen server is in state %c", round, pid, s.State)
			}
		}
		thaw()
		if t.Failed() {
			return
		}
	}
}
