package testenv

import (
	"context"
	"fmt"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/internal/dbsetup"
	"github.com/pgreflect/pgreflect/pgtest"
)

// SetupDB is a new database of pgtest's server with pgreflect's setup applied and then schema run, as a
// project's database is after `pgreflect setup`. It returns the superuser URL and a superuser connection that
// the test's end closes.
func SetupDB(t testing.TB, schema string) (string, *pgx.Conn) {
	t.Helper()
	return SetupDBPrepared(t, nil, schema)
}

// SetupDBPrepared is SetupDB with prepare (when not nil) run first on the new database, on the superuser
// connection: what a project's database holds before `pgreflect setup` runs on it (a role that owns schema
// auth, as on managed Postgres).
func SetupDBPrepared(t testing.TB, prepare func(admin *pgx.Conn, superuserURL string), schema string) (string, *pgx.Conn) {
	t.Helper()
	url := pgtest.NewDB(t)
	return url, setup(t, url, prepare, schema)
}

// Setup applies pgreflect's setup to the database of superuserURL (a server of the test's own, say) and then
// runs schema, and returns a superuser connection that the test's end closes.
func Setup(t testing.TB, superuserURL, schema string) *pgx.Conn {
	t.Helper()
	return setup(t, superuserURL, nil, schema)
}

func setup(t testing.TB, superuserURL string, prepare func(admin *pgx.Conn, superuserURL string), schema string) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, superuserURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(context.Background()) })
	if prepare != nil {
		prepare(admin, superuserURL)
	}
	if err := dbsetup.Apply(ctx, admin); err != nil {
		t.Fatalf("setup: %v", err)
	}
	if schema == "" {
		return admin
	}
	if _, err := admin.Exec(ctx, schema); err != nil {
		t.Fatalf("schema: %v", err)
	}
	return admin
}

// LoginPool is a pool of the login role authenticator (which the setup creates, without a password under
// pgtest's trust authentication) on the database of superuserURL, closed at the test's end.
func LoginPool(t testing.TB, superuserURL string) *pgxpool.Pool {
	t.Helper()
	return LoginPoolOf(t, superuserURL, 0)
}

// LoginPoolOf is LoginPool with at most size connections (0: pgx's default).
func LoginPoolOf(t testing.TB, superuserURL string, size int) *pgxpool.Pool {
	t.Helper()
	u, err := url.Parse(superuserURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User("authenticator")
	cfg, err := pgxpool.ParseConfig(u.String())
	if err != nil {
		t.Fatal(err)
	}
	if size > 0 {
		cfg.MaxConns = int32(size)
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// RoutedSchema is the schema of the tests of request routing, for a primary and its replica's stand-in
// (ReadOnlyDB): a table item that anon may read and insert into, with one row whose name says where it is, so
// that an answer shows which database ran the request (where is a phrase of the test's, with no quote).
func RoutedSchema(where string) string {
	return fmt.Sprintf(`create table item (id int primary key, name text not null);
		grant select, insert on item to anon;
		insert into item values (1, '%s');`, where)
}

// ReadOnlyDB is SetupDB for a stand-in of a read replica: a database of its own, read-only for every session
// opened after it returns (default_transaction_read_only), so that a write that reaches it fails as on a
// standby. It returns the superuser URL.
func ReadOnlyDB(t testing.TB, schema string) string {
	t.Helper()
	url, _ := SetupDB(t, schema+`;
		do $$ begin execute format('alter database %I set default_transaction_read_only = on', current_database()); end $$;`)
	return url
}
