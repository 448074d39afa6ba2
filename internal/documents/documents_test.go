package documents

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// The three manifest formats read to the same documents.
func TestParseManifests(t *testing.T) {
	want := "[{a1 query A { __typename }} {b2 query B { __typename }}]"
	for name, manifest := range map[string]string{
		"relay or graphql-codegen": `{"b2": "query B { __typename }", "a1": "query A { __typename }"}`,
		"apollo": `{"format": "apollo-persisted-query-manifest", "version": 1, "operations": [
			{"id": "b2", "name": "B", "type": "query", "body": "query B { __typename }"},
			{"id": "a1", "name": "A", "type": "query", "body": "query A { __typename }"}]}`,
	} {
		docs, err := Parse([]byte(manifest))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := docsString(docs); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	for name, bad := range map[string]string{
		"not an object":  `["query A { x }"]`,
		"not a text":     `{"a": {"query": "x"}}`,
		"empty text":     `{"a": " "}`,
		"empty id":       `{"": "query A { x }"}`,
		"apollo no body": `{"format": "apollo-persisted-query-manifest", "operations": [{"id": "a"}]}`,
	} {
		if docs, err := Parse([]byte(bad)); err == nil {
			t.Errorf("%s: read as %v", name, docs)
		}
	}
}

func docsString(docs []Document) string {
	var b strings.Builder
	b.WriteString("[")
	for i, d := range docs {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString("{" + d.ID + " " + d.Text + "}")
	}
	return b.String() + "]"
}

// A directory is every manifest under it.
func TestLoadDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "web"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"ios.json": `{"a": "{ a }"}`, "web/persisted.json": `{"b": "{ b }"}`, "README.md": "not a manifest"}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	docs, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := docsString(docs); got != "[{a { a }} {b { b }}]" {
		t.Errorf("loaded %s", got)
	}
	if _, err := Load(filepath.Join(dir, "README.md")); err == nil {
		t.Error("a file that is no manifest loaded")
	}
}

// Push adds all or nothing, keeps what is there, and refuses an id reused for another text.
func TestPushAndList(t *testing.T) {
	url, _ := testenv.SetupDB(t, "")
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	first := []Document{{"a", "{ a }"}, {"b", "{ b }"}}
	if added, err := Push(ctx, conn, first); err != nil || added != 2 {
		t.Fatalf("first push: %d, %v", added, err)
	}
	if added, err := Push(ctx, conn, append(first, Document{"c", "{ c }"})); err != nil || added != 1 {
		t.Fatalf("second push: %d new, %v; want 1", added, err)
	}
	_, err = Push(ctx, conn, []Document{{"d", "{ d }"}, {"a", "{ not a }"}})
	if !errors.Is(err, ErrIDReused) {
		t.Fatalf("id reused: %v", err)
	}
	docs, err := List(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	if got := docsString(docs); got != "[{a { a }} {b { b }} {c { c }}]" {
		t.Errorf("after a refused push (d must not be there): %s", got)
	}
	var doc string
	if err := conn.QueryRow(ctx, `select pgreflect.trusted_document($1)`, SHA256("{ b }")).Scan(&doc); err != nil || doc != "{ b }" {
		t.Errorf("by hash: %q, %v", doc, err)
	}
}

func TestValidate(t *testing.T) {
	schema := gqlparser.MustLoadSchema(&ast.Source{Input: `type Query { todo: Todo } type Todo { id: ID task: String }`})
	if err := Validate(schema, Document{"ok", "query Q { todo { id task } }"}); err != nil {
		t.Errorf("valid document: %v", err)
	}
	if err := Validate(schema, Document{"gone", "query Q { todo { done } }"}); err == nil || err.Error() != `1:18: Cannot query field "done" on type "Todo".` {
		t.Errorf("invalid document: %v", err)
	}
}
