package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/pgreflect/pgreflect/internal/documents"
	"github.com/pgreflect/pgreflect/internal/schemadiff"
	"github.com/pgreflect/pgreflect/internal/sdl"
)

func runCheck(args []string, stdout, stderr io.Writer) error {
	var dir, format, documentsPath string
	var update bool
	var roles roleList
	flags := newFlagSet("check", stderr)
	sf := addSchemaFlags(flags, true)
	flags.StringVar(&dir, "snapshot", "", "directory of the snapshots, one ROLE.graphql file per role")
	flags.Var(&roles, "role", "role to check; repeatable (default: anon, authenticated and service_role)")
	flags.BoolVar(&update, "update", false, "rewrite the snapshots from the database instead of checking them")
	flags.StringVar(&format, "format", "text", "report format: text, json or markdown (a pull-request comment)")
	flags.StringVar(&documentsPath, "documents", "", "trusted documents to check against the schemas: a manifest or a directory of them (default: the database's pgreflect.trusted_documents when the role may read it)")
	flags.Usage = func() {
		fmt.Fprintln(flags.Output(), "usage: pgreflect check --db-url URL --snapshot DIR [--role ROLE]... [--documents FILE|DIR] [--update] [--format text|json|markdown]")
		fmt.Fprintln(flags.Output(), "Compares each role's schema with its snapshot, and checks that every trusted document valid against a role's snapshot is valid against its schema. Exit status 1 when a change breaks clients, 2 on bad input.")
		flags.PrintDefaults()
	}
	if err := parseFlags(flags, args); err != nil {
		return err
	}
	if !slices.Contains(schemadiff.Formats, format) {
		return &inputError{fmt.Errorf("unknown format %q: use text, json or markdown", format)}
	}
	if sf.dbURL == "" || dir == "" {
		return &inputError{errors.New("--db-url (or PGREFLECT_DATABASE_URL) and --snapshot are required")}
	}
	ctx, db, done, err := sf.openDatabase(stderr)
	if err != nil {
		return err
	}
	defer done()
	if update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return &inputError{err}
		}
	}
	var changes []schemadiff.Change
	var pairs []rolePair
	for _, role := range roles.or(apiRoles) {
		current, err := db.load(ctx, role)
		if err != nil {
			return &inputError{err}
		}
		path := schemadiff.SnapshotFile(dir, role)
		if update {
			if err := os.WriteFile(path, sdl.Print(current.Schema), 0o644); err != nil {
				return &inputError{err}
			}
			fmt.Fprintf(stdout, "wrote %s\n", path)
			continue
		}
		snapshot, err := loadSchemaFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return &inputError{fmt.Errorf("no snapshot of role %s in %s: run with --update to write it", role, dir)}
		}
		if err != nil {
			return &inputError{err}
		}
		changes = append(changes, withRole(schemadiff.Compare(schemadiff.Side{Schema: snapshot}, current), role)...)
		pairs = append(pairs, rolePair{role, snapshot, current.Schema})
	}
	if update {
		return nil
	}
	docs, err := checkedDocuments(ctx, db, documentsPath, stderr)
	if err != nil {
		return &inputError{err}
	}
	schemadiff.Sort(changes)
	err = report(stdout, format, changes)
	if broken := brokenDocuments(pairs, docs); len(broken) > 0 {
		out := stdout
		if format == "json" {
			out = stderr // the JSON report stays one document
		}
		writeBrokenDocuments(out, broken, len(docs))
		err = errBreaking
	}
	return err
}

// rolePair is a role's schema as its snapshot has it and as the database has it now.
type rolePair struct {
	role              string
	snapshot, current *ast.Schema
}

// brokenDocument is a trusted document the change breaks for a role.
type brokenDocument struct {
	role string
	doc  documents.Document
	err  error
}

// checkedDocuments are the trusted documents check validates: path's manifests, else the database's table
// when the role may read it (else none, said on stderr).
func checkedDocuments(ctx context.Context, db *dbSchemas, path string, stderr io.Writer) ([]documents.Document, error) {
	if path != "" {
		return documents.Load(path)
	}
	docs, err := documents.List(ctx, db.conn)
	if err != nil {
		fmt.Fprintf(stderr, "note: trusted documents not checked (%v); give --documents FILE|DIR\n", err)
		return nil, nil
	}
	return docs, nil
}

// brokenDocuments lists, per role, the documents valid against the snapshot and invalid against the schema
// now: the operations of an app that the change breaks. A document invalid against the snapshot already is
// not that role's (or was broken before) and is not counted.
func brokenDocuments(pairs []rolePair, docs []documents.Document) []brokenDocument {
	var broken []brokenDocument
	for _, p := range pairs {
		for _, d := range docs {
			if documents.Validate(p.snapshot, d) != nil {
				continue
			}
			if err := documents.Validate(p.current, d); err != nil {
				broken = append(broken, brokenDocument{p.role, d, err})
			}
		}
	}
	return broken
}

func writeBrokenDocuments(w io.Writer, broken []brokenDocument, total int) {
	ids := map[string]bool{}
	for _, b := range broken {
		ids[b.doc.ID] = true
	}
	fmt.Fprintf(w, "\nThis change breaks %d of your app's %d trusted operations:\n", len(ids), total)
	for _, b := range broken {
		fmt.Fprintf(w, "  %s, document %s: %v\n", b.role, b.doc.ID, b.err)
	}
}
