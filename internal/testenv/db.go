package testenv

import (
	"context"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/dbsetup"
	"github.com/pgreflect/pgreflect/pgtest"
)

// SetupDB is a new database of pgtest's server with pgreflect's setup applied and then schema run, as a
// project's database is after `pgreflect setup`. It returns the superuser URL and a superuser connection that
// the test's end closes.
func SetupDB(t testing.TB, schema string) (string, *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	url := pgtest.NewDB(t)
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(context.Background()) })
	if err := dbsetup.Apply(ctx, admin); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, schema); err != nil {
		t.Fatal(err)
	}
	return url, admin
}

// LoginPool is a pool of the login role authenticator (which the setup creates, without a password under
// pgtest's trust authentication) on the database of superuserURL, closed at the test's end.
func LoginPool(t testing.TB, superuserURL string) *pgxpool.Pool {
	t.Helper()
	u, err := url.Parse(superuserURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User("authenticator")
	pool, err := pgxpool.New(context.Background(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}
