package dberr

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestUnavailable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Nothing listens on port 1: a real failed connect.
	_, connectErr := pgx.Connect(ctx, "postgres://nobody@127.0.0.1:1/x?sslmode=disable&connect_timeout=2")
	if connectErr == nil {
		t.Fatal("connected to port 1")
	}
	for name, c := range map[string]struct {
		err  error
		want bool
	}{
		"nil":                {nil, false},
		"failed connect":     {fmt.Errorf("sign in: %w", connectErr), true},
		"admin shutdown":     {&pgconn.PgError{Code: "57P01"}, true},
		"connection failure": {&pgconn.PgError{Code: "08006"}, true},
		"syntax error":       {&pgconn.PgError{Code: "42601"}, false},
		"unique violation":   {fmt.Errorf("insert: %w", &pgconn.PgError{Code: "23505"}), false},
		"plain error":        {errors.New("bug"), false},
		"deadline passed":    {fmt.Errorf("query: %w", context.DeadlineExceeded), true},
		"client went away":   {fmt.Errorf("query: %w", context.Canceled), false},
	} {
		if got := Unavailable(c.err); got != c.want {
			t.Errorf("%s: Unavailable(%v) = %v", name, c.err, got)
		}
	}
}
