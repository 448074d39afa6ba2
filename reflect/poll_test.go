package reflect

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/pgtest"
)

func TestPollInvalidatesWhenTheVersionChanges(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conn, err := pgx.Connect(ctx, pgtest.NewDB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "create sequence v"); err != nil {
		t.Fatal(err)
	}
	// The poller has a connection of its own, as it would through a pool.
	poller, err := pgx.ConnectConfig(ctx, conn.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer poller.Close(context.Background())
	version := func(ctx context.Context) (int64, error) {
		var v int64
		err := poller.QueryRow(ctx, "select coalesce(pg_sequence_last_value('v'), 0)").Scan(&v)
		return v, err
	}
	inv := &countingInvalidator{}
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() { Poll(ctx, version, 10*time.Millisecond, inv, ready, t.Logf); close(done) }()
	<-ready
	base := inv.n.Load()
	time.Sleep(100 * time.Millisecond)
	if got := inv.n.Load(); got != base {
		t.Fatalf("%d invalidations without a change", got-base)
	}
	if _, err := conn.Exec(ctx, "select nextval('v')"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return inv.n.Load() > base })
	// A read that fails may hide a change: the first good read after it invalidates.
	if _, err := conn.Exec(ctx, "alter sequence v rename to w"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	base = inv.n.Load()
	if _, err := conn.Exec(ctx, "alter sequence w rename to v"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return inv.n.Load() > base })
	cancel()
	<-done
}
