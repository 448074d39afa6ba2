package resolve

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// A request that Postgres picks as the victim of a deadlock is run again, and the user sees its answer instead
// of "deadlock detected". The deadlock is made on purpose: another session holds row 2 while the request
// waits for it holding row 1, then asks for row 1.
func TestDeadlockVictimIsRetried(t *testing.T) {
	d := newTestDB(t, `create table slot(id int primary key, n int not null default 0);
		insert into slot(id) values (1), (2);
		grant all on slot to service_role;
		comment on schema public is '@graphql({"inflect_names": true})';`)
	ctx := context.Background()
	other, err := pgx.Connect(ctx, d.conn.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	// Make the request's session the one whose deadlock check fires (3s after it starts waiting, time enough
	// for the other session to close the cycle even on a loaded machine).
	if _, err := d.conn.Exec(ctx, "set deadlock_timeout = '3s'"); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Exec(ctx, "set deadlock_timeout = '60s'"); err != nil {
		t.Fatal(err)
	}
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "update slot set n = n + 10 where id = 2"); err != nil {
		t.Fatal(err)
	}
	answer := make(chan string, 1)
	go func() {
		answer <- string(d.engine.ExecuteAs(ctx, d.conn, Session{Role: "service_role", Claims: map[string]any{"role": "service_role"}, SearchPath: []string{"public"}},
			Request{Query: `mutation { updateSlotCollection(set: {n: 1}, filter: {id: {in: [1, 2]}}, atMost: 2) { affectedCount } }`}))
	}()
	// Wait until the request holds row 1 and waits for row 2.
	waitFor(t, other, "select count(*) = 1 from pg_locks where not granted and locktype = 'transactionid'")
	// Taking row 1 now closes the cycle; the request's deadlock check fires first and Postgres aborts it.
	if _, err := tx.Exec(ctx, "update slot set n = n + 10 where id = 1"); err != nil {
		t.Fatalf("the other session lost the deadlock: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-answer:
		if want := `{"data": {"updateSlotCollection": {"affectedCount": 2}}}`; got != want {
			t.Errorf("got %s\nwant %s", got, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the request did not finish")
	}
	var sum int
	if err := other.QueryRow(ctx, "select sum(n) from slot").Scan(&sum); err != nil {
		t.Fatal(err)
	}
	if sum != 2 {
		t.Errorf("sum(n) = %d after the retried update, want 2 (both rows set to 1 after the other session's +10s)", sum)
	}
}

func waitFor(t *testing.T, conn *pgx.Conn, condition string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var ok bool
		if err := conn.QueryRow(context.Background(), condition).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for: %s", condition)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
