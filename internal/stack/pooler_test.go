package stack

import (
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestTransactionPooledFromFlagAndURL(t *testing.T) {
	for _, c := range []struct {
		url, mode string
		pooled    bool
	}{
		{"postgresql://u@db:5432/app", "", false},
		{"postgresql://u@db:5432/app", "auto", false},
		{"postgresql://u@db:5432/app?pgbouncer=true", "auto", true},
		{"postgresql://u@db:5432/app?pgbouncer=false", "auto", false},
		{"postgresql://u@pooler.example.com:6543/postgres", "", true},
		{"postgresql://u@db/app?default_query_exec_mode=exec", "auto", true},
		{"postgresql://u@db/app?default_query_exec_mode=simple_protocol", "auto", true},
		{"postgresql://u@db/app?default_query_exec_mode=cache_describe", "auto", false},
		{"host=db port=6543 user=u dbname=app", "auto", true},
		// The flag wins over the URL.
		{"postgresql://u@db:6543/app?pgbouncer=true", "prepared", false},
		{"postgresql://u@db:5432/app", "unnamed", true},
	} {
		cfg, pooled, err := ParseConnConfig(c.url, c.mode)
		if err != nil {
			t.Fatalf("%s (%s): %v", c.url, c.mode, err)
		}
		if pooled != c.pooled {
			t.Errorf("%s (%s): transaction pooled = %v, want %v", c.url, c.mode, pooled, c.pooled)
		}
		if _, ok := cfg.RuntimeParams["pgbouncer"]; ok {
			t.Errorf("%s: the pgbouncer parameter would be sent to the server", c.url)
		}
		parsed, err := pgx.ParseConfig(c.url)
		if err != nil {
			t.Fatal(err)
		}
		switch mode := cfg.DefaultQueryExecMode; {
		case pooled && (mode == pgx.QueryExecModeCacheStatement || mode == pgx.QueryExecModeCacheDescribe):
			t.Errorf("%s (%s): pgx's own queries would prepare statements (%v)", c.url, c.mode, mode)
		case !pooled && mode != parsed.DefaultQueryExecMode:
			t.Errorf("%s (%s): exec mode changed from %v to %v", c.url, c.mode, parsed.DefaultQueryExecMode, mode)
		}
	}
	if _, _, err := ParseConnConfig("postgresql://u@db/app", "named"); err == nil {
		t.Error("an unknown statement mode was accepted")
	}
}
