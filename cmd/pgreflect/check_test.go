package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/internal/schemadiff"
)

func runCmd(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return code, stdout.String() + stderr.String()
}

// schema prints the same bytes every time; check --update writes one snapshot per role, check passes on an
// unchanged database and fails, naming the column, once a migration drops one; diff compares a snapshot
// with the database.
func TestSchemaAndCheck(t *testing.T) {
	ctx := context.Background()
	dbURL, conn := testenv.SetupDB(t, `create table account (id serial primary key, email text)`)
	work := t.TempDir()
	common := []string{"--db-url", dbURL, "--workdir", work}

	code, first := runCmd(t, append([]string{"schema", "--role", "authenticated"}, common...)...)
	_, second := runCmd(t, append([]string{"schema", "--role", "authenticated"}, common...)...)
	if code != 0 || first != second || !strings.Contains(first, "type account implements Node {") {
		t.Fatalf("schema: %d\n%s\n---\n%s", code, first, second)
	}
	code, out := runCmd(t, append([]string{"schema", "--format", "json"}, common...)...)
	var intro struct {
		Data struct {
			Schema struct {
				Types []struct{ Name string } `json:"types"`
			} `json:"__schema"`
		} `json:"data"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &intro) != nil || len(intro.Data.Schema.Types) < 10 {
		t.Fatalf("schema --format json: %d\n%.300s", code, out)
	}

	snap := filepath.Join(work, "snapshots")
	if code, out := runCmd(t, append([]string{"check", "--snapshot", snap, "--update"}, common...)...); code != 0 {
		t.Fatalf("check --update: %d %s", code, out)
	}
	for _, role := range apiRoles {
		if _, err := os.Stat(schemadiff.SnapshotFile(snap, role)); err != nil {
			t.Error(err)
		}
	}
	if code, out := runCmd(t, append([]string{"check", "--snapshot", snap}, common...)...); code != 0 || !strings.Contains(out, "No changes.") {
		t.Fatalf("check on an unchanged database: %d %s", code, out)
	}

	if _, err := conn.Exec(ctx, `alter table account drop column email`); err != nil {
		t.Fatal(err)
	}
	code, out = runCmd(t, append([]string{"check", "--snapshot", snap, "--format", "markdown"}, common...)...)
	if code != 1 || !strings.Contains(out, "| BREAKING | anon | Field 'email' was removed from object type 'account' | no column public.account.email in the database (dropped or renamed) |") {
		t.Errorf("check after dropping a column: %d\n%s", code, out)
	}
	code, out = runCmd(t, append([]string{"diff", schemadiff.SnapshotFile(snap, "anon"), dbURL, "--workdir", work}, "--role", "anon")...)
	if code != 1 || !strings.Contains(out, "Field 'email' was removed") {
		t.Errorf("diff snapshot database: %d\n%s", code, out)
	}
	if code, out := runCmd(t, append([]string{"check", "--snapshot", filepath.Join(work, "none")}, common...)...); code != 2 || !strings.Contains(out, "--update") {
		t.Errorf("check without snapshots: %d %s", code, out)
	}
	// Two databases, before and after: every API role at once, each change naming its database object.
	db := func(schema string) string {
		u, _ := testenv.SetupDB(t, schema)
		return u
	}
	before := db(`create table account (id serial primary key, email text, bio text)`)
	after := db(`create table account (id serial primary key, email text); revoke update on account from authenticated`)
	code, out = runCmd(t, "diff", before, after, "--workdir", work)
	for _, role := range apiRoles {
		if !strings.Contains(out, "BREAKING  ["+role+"] Field 'bio' was removed from object type 'account'\n            because: column public.account.bio dropped") {
			t.Errorf("diff of two databases lacks bio dropped for %s", role)
		}
	}
	if !strings.Contains(out, "[authenticated] Field 'updateaccountCollection' was removed from object type 'Mutation'\n            because: UPDATE revoked from authenticated on public.account") ||
		strings.Contains(out, "[anon] Field 'updateaccountCollection'") || code != 1 {
		t.Errorf("diff of two databases: %d\n%s", code, out)
	}
}
