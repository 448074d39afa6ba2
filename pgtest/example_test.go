package pgtest_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/pgtest"
)

// A package's tests share one throwaway PostgreSQL that TestMain starts, and each test gets a database of its
// own, dropped when the test ends. In the package's main_test.go:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// and then in any test (the example is compiled, not run: it needs the *testing.T of a test):
func Example() {
	testOrderTotals := func(t *testing.T) {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, pgtest.NewDB(t))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `create table orders (id bigint primary key, total numeric not null);
			insert into orders values (1, 10), (2, 32)`); err != nil {
			t.Fatal(err)
		}
		var sum int
		if err := conn.QueryRow(ctx, "select sum(total)::int from orders").Scan(&sum); err != nil {
			t.Fatal(err)
		}
		if sum != 42 {
			t.Errorf("sum = %d, want 42", sum)
		}
	}
	_ = testOrderTotals
}
