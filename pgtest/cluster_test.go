package pgtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
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
