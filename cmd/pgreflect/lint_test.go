package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
)

// lint exits 1 on an error and prints the fix; 0 when only warnings are left (the fix applied); json is one
// document; a bad flag is exit 2.
func TestLint(t *testing.T) {
	ctx := t.Context()
	dbURL, conn := testenv.SetupDB(t, `
		create type public.mpaa_rating as enum ('G', 'PG-13');
		create table public.film (film_id serial primary key, rating public.mpaa_rating);
		create table public.audit_log (message text);`)
	work := t.TempDir()
	common := []string{"--db-url", dbURL, "--workdir", work}

	code, out := runCmd(t, append([]string{"lint"}, common...)...)
	if code != 1 || !strings.Contains(out, "error [enum-label] type public.mpaa_rating (anon, authenticated, service_role)") ||
		!strings.Contains(out, `fix: comment on type "public"."mpaa_rating" is '@graphql({"mappings":{"PG-13":"PG_13"}})';`) ||
		!strings.Contains(out, "warning [no-primary-key] table public.audit_log") || !strings.Contains(out, "1 errors, 1 warnings") {
		t.Fatalf("lint: %d\n%s", code, out)
	}

	code, out = runCmd(t, append([]string{"lint", "--format", "json", "--role", "anon"}, common...)...)
	var report struct {
		Errors   int `json:"errors"`
		Findings []struct {
			Level, Rule, Object, Reason, Fix string
			Roles                            []string
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil || code != 1 || report.Errors != 1 || len(report.Findings) != 2 ||
		report.Findings[0].Rule != "enum-label" || strings.Join(report.Findings[0].Roles, ",") != "anon" {
		t.Fatalf("lint --format json: %d %v\n%s", code, err, out)
	}

	if _, err := conn.Exec(ctx, report.Findings[0].Fix); err != nil {
		t.Fatal(err)
	}
	if code, out := runCmd(t, append([]string{"lint"}, common...)...); code != 0 || !strings.Contains(out, "0 errors, 1 warnings") {
		t.Errorf("lint after the fix: %d\n%s", code, out)
	}
	if code, out := runCmd(t, append([]string{"lint", "--format", "yaml"}, common...)...); code != 2 || !strings.Contains(out, "unknown format") {
		t.Errorf("lint --format yaml: %d\n%s", code, out)
	}
	if code, out := runCmd(t, "lint", "--workdir", work); code != 2 || !strings.Contains(out, "--db-url") {
		t.Errorf("lint without a database: %d\n%s", code, out)
	}
}
