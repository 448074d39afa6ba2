package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
)

// documents push loads a manifest into the database, all or nothing; check then names the trusted
// documents a migration breaks, per role, and passes a migration that breaks none.
func TestDocumentsPushAndCheck(t *testing.T) {
	ctx := context.Background()
	dbURL, conn := testenv.SetupDB(t, `create table account (id serial primary key, email text, name text)`)
	work := t.TempDir()
	manifest := filepath.Join(work, "persisted-documents.json")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(manifest, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{
  "emails": "query Emails { accountCollection { edges { node { email } } } }",
  "names": "query Names { accountCollection { edges { node { name } } } }",
  "never-valid": "query Nope { nothingHere }"
}`)
	if code, out := runCmd(t, "documents", "push", "--db-url", dbURL, manifest); code != 0 || !strings.Contains(out, "pushed 3 documents, 3 of them new") {
		t.Fatalf("push: %d %s", code, out)
	}
	write(`{"emails": "query Emails { accountCollection { edges { node { id } } } }"}`)
	if code, out := runCmd(t, "documents", "push", "--db-url", dbURL, manifest); code != 2 || !strings.Contains(out, "already trusted with another text") {
		t.Errorf("push of a reused id: %d %s", code, out)
	}
	if code, out := runCmd(t, "documents", "list", "--db-url", dbURL); code != 0 || !strings.Contains(out, `"names": "query Names { accountCollection { edges { node { name } } } }"`) || strings.Contains(out, "node { id }") {
		t.Errorf("list: %d %s", code, out)
	}
	if code, out := runCmd(t, "documents", "push", "--db-url", dbURL, filepath.Join(work, "missing.json")); code != 2 {
		t.Errorf("push of a missing file: %d %s", code, out)
	}

	common := []string{"--db-url", dbURL, "--workdir", work}
	snap := filepath.Join(work, "snapshots")
	if code, out := runCmd(t, append([]string{"check", "--snapshot", snap, "--update"}, common...)...); code != 0 {
		t.Fatalf("check --update: %d %s", code, out)
	}
	if _, err := conn.Exec(ctx, `alter table account add column age int`); err != nil {
		t.Fatal(err)
	}
	if code, out := runCmd(t, append([]string{"check", "--snapshot", snap}, common...)...); code != 0 || strings.Contains(out, "trusted operations") {
		t.Errorf("check after adding a column: %d %s", code, out)
	}
	if _, err := conn.Exec(ctx, `alter table account drop column email`); err != nil {
		t.Fatal(err)
	}
	code, out := runCmd(t, append([]string{"check", "--snapshot", snap}, common...)...)
	if code != 1 || !strings.Contains(out, "This change breaks 1 of your app's 3 trusted operations:") ||
		!strings.Contains(out, `anon, document emails: 1:51: Cannot query field "email" on type "account".`) ||
		strings.Contains(out, "document names") || strings.Contains(out, "never-valid") {
		t.Errorf("check after dropping a column: %d\n%s", code, out)
	}
	// The same from a manifest file, as CI has it before anything is pushed.
	write(`{"e": "query Emails { accountCollection { edges { node { email } } } }"}`)
	code, out = runCmd(t, append([]string{"check", "--snapshot", snap, "--documents", manifest}, common...)...)
	if code != 1 || !strings.Contains(out, "This change breaks 1 of your app's 1 trusted operations:") || !strings.Contains(out, "document e:") {
		t.Errorf("check --documents: %d\n%s", code, out)
	}
}
