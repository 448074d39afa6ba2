package pgtest

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestNewDBIsIsolated(t *testing.T) {
	ctx := context.Background()
	a, b := NewDB(t), NewDB(t)
	if a == b {
		t.Fatalf("two tests share a database: %s", a)
	}
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	if _, err := ca.Exec(ctx, "create table only_in_a(id int)"); err != nil {
		t.Fatal(err)
	}
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	var n int
	if err := cb.QueryRow(ctx, "select count(*) from pg_class where relname = 'only_in_a'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatal("table created in one test database is visible in another")
	}
	var version string
	if err := ca.QueryRow(ctx, "show server_version_num").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version < "140000" {
		t.Fatalf("server version %s is older than 14", version)
	}
}
