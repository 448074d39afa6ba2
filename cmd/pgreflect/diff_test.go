package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const oldSDL = `"""The root type for querying data"""
type Query {
  account(id: Int!): Account
  accounts(first: Int = 30): [Account!]!
}
type Account {
  id: Int!
  email: String
  status: Status
}
enum Status { active closed }
input AccountFilter { id: Int, email: String }
`

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// diff of two SDL files: exit status 1 on a breaking change, 0 otherwise, 2 on bad input; the formats.
func TestDiffFiles(t *testing.T) {
	dir := t.TempDir()
	old := writeFile(t, dir, "old.graphql", oldSDL)
	cases := []struct {
		name, new string
		args      []string
		exit      int
		want      []string
	}{
		{"identical", oldSDL, nil, 0, []string{"No changes."}},
		{"field removed", strings.Replace(oldSDL, "  email: String\n", "", 1), nil, 1,
			[]string{"BREAKING  Field 'email' was removed from object type 'Account'"}},
		{"output made non-null", strings.Replace(oldSDL, "email: String\n", "email: String!\n", 1), nil, 0,
			[]string{"SAFE      Field 'Account.email' changed type from 'String' to 'String!'"}},
		{"output made nullable", strings.Replace(oldSDL, "id: Int!\n  email", "id: Int\n  email", 1), nil, 1,
			[]string{"BREAKING  Field 'Account.id' changed type from 'Int!' to 'Int'"}},
		{"input made required", strings.Replace(oldSDL, "email: String }", "email: String! }", 1), nil, 1,
			[]string{"BREAKING  Input field 'AccountFilter.email' changed type from 'String' to 'String!'"}},
		{"default changed", strings.Replace(oldSDL, "= 30", "= 10", 1), nil, 0,
			[]string{"DANGEROUS Argument 'first' on field 'Query.accounts' default value changed from '30' to '10'"}},
		{"enum value added", strings.Replace(oldSDL, "active closed", "active closed frozen", 1), []string{"--format", "json"}, 0,
			[]string{`"level": "DANGEROUS"`, `"path": "Status.frozen"`, `"dangerous": 1`}},
		{"markdown", strings.Replace(oldSDL, " closed", "", 1), []string{"--format", "markdown"}, 1,
			[]string{"**This migration breaks the GraphQL API.**", "| BREAKING |  | Enum value 'closed' was removed from enum 'Status' |  |"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), "new.graphql", tc.new)
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"diff", old, path}, tc.args...), &stdout, &stderr)
			if code != tc.exit {
				t.Errorf("exit status %d, want %d\n%s%s", code, tc.exit, stdout.String(), stderr.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, stdout.String())
				}
			}
			if tc.args != nil && tc.args[1] == "json" && !json.Valid(stdout.Bytes()) {
				t.Errorf("not JSON: %s", stdout.String())
			}
			// Issue 22: a NOT NULL column without a default passed as SAFE between two SDL files, without a
			// word that a database side sees more.
			if !strings.Contains(stdout.String()+stderr.String(), "A database side sees more: a column made NOT NULL without a default") {
				t.Errorf("the report of two files does not say what a database side sees:\n%s%s", stdout.String(), stderr.String())
			}
		})
	}
}

func TestDiffBadInput(t *testing.T) {
	dir := t.TempDir()
	old := writeFile(t, dir, "old.graphql", oldSDL)
	broken := writeFile(t, dir, "broken.graphql", "type Query { x: Nope }")
	for _, args := range [][]string{
		{"diff", old},
		{"diff", old, filepath.Join(dir, "missing.graphql")},
		{"diff", old, broken},
		{"diff", old, old, "--format", "yaml"},
		{"diff", old, "postgres://127.0.0.1:1/x", "--role", "anon", "--role", "authenticated"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit status %d, want 2\n%s", args, code, stderr.String())
		}
	}
}
