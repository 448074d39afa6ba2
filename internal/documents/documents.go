// Package documents is trusted documents: the operations an app may send, as the manifests of Relay
// (persisted_queries.json), graphql-codegen's client preset (persisted-documents.json) and Apollo's
// generate-persisted-query-manifest write them, kept in table pgreflect.trusted_documents (dbsetup) for every
// instance, and checked against a schema.
package documents

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// Document is one trusted operation: its id in the manifest and its text.
type Document struct {
	ID   string
	Text string
}

// SHA256 is the lowercase hex SHA-256 of text, the hash Apollo's protocol and graphql-codegen use.
func SHA256(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// apolloFormat is the format field of Apollo's persisted query manifest.
const apolloFormat = "apollo-persisted-query-manifest"

// Parse reads a manifest: an object of id to document text (Relay, graphql-codegen's client preset), or
// Apollo's {"format": "apollo-persisted-query-manifest", "operations": [{"id", "body"}]}. The documents come
// sorted by id.
func Parse(data []byte) ([]Document, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, fmt.Errorf("a manifest is a JSON object: %w", err)
	}
	var docs []Document
	if raw, ok := fields["format"]; ok && string(raw) == `"`+apolloFormat+`"` {
		var m struct {
			Operations []struct {
				ID   string `json:"id"`
				Body string `json:"body"`
			} `json:"operations"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("apollo manifest: %w", err)
		}
		for _, op := range m.Operations {
			docs = append(docs, Document{ID: op.ID, Text: op.Body})
		}
	} else {
		for id, raw := range fields {
			var text string
			if err := json.Unmarshal(raw, &text); err != nil {
				return nil, fmt.Errorf("document %q: the value must be the document's text", id)
			}
			docs = append(docs, Document{ID: id, Text: text})
		}
	}
	for _, d := range docs {
		if d.ID == "" || strings.TrimSpace(d.Text) == "" {
			return nil, fmt.Errorf("document %q: an id and a text are required", d.ID)
		}
	}
	slices.SortFunc(docs, func(a, b Document) int { return strings.Compare(a.ID, b.ID) })
	return docs, nil
}

// Load reads the manifest at path, or every *.json manifest under path when it is a directory.
func Load(path string) ([]Document, error) {
	var files []string
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == path && !d.IsDir() || !d.IsDir() && strings.HasSuffix(p, ".json") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no *.json manifest", path)
	}
	var all []Document
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		docs, err := Parse(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		all = append(all, docs...)
	}
	return all, nil
}

// DB is a connection or a pool with rights on pgreflect.trusted_documents.
type DB interface {
	Begin(ctx context.Context) (pgx.Tx, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// ErrIDReused is returned by Push for an id already trusted with another text: a client built against the
// first would run the second.
var ErrIDReused = errors.New("the document id is already trusted with another text")

// Push adds docs to the trusted documents, in one transaction: all or none. A document already there is
// left as it is. It returns how many were new.
func Push(ctx context.Context, db DB, docs []Document) (added int, err error) {
	err = pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		for _, d := range docs {
			// Insert and select only: a pusher (the auth service's role, say) needs no right to change a
			// document, and a push never does.
			tag, err := tx.Exec(ctx, `insert into pgreflect.trusted_documents (id, sha256, document) values ($1, $2, $3)
				on conflict (id) do nothing`, d.ID, SHA256(d.Text), d.Text)
			if err != nil {
				return fmt.Errorf("push document %q: %w", d.ID, err)
			}
			if tag.RowsAffected() == 1 {
				added++
				continue
			}
			var stored string
			if err := tx.QueryRow(ctx, `select document from pgreflect.trusted_documents where id = $1`, d.ID).Scan(&stored); err != nil {
				return fmt.Errorf("push document %q: %w", d.ID, err)
			}
			if stored != d.Text {
				return fmt.Errorf("document %q: %w", d.ID, ErrIDReused)
			}
		}
		return nil
	})
	return added, err
}

// List reads every trusted document, sorted by id.
func List(ctx context.Context, db DB) ([]Document, error) {
	rows, err := db.Query(ctx, `select id, document from pgreflect.trusted_documents order by id`)
	if err != nil {
		return nil, fmt.Errorf("read the trusted documents: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Document, error) {
		var d Document
		return d, row.Scan(&d.ID, &d.Text)
	})
}

// Validate reports what is wrong with the document against schema (parse and validation errors, each as
// "line:column: message", joined by "; "), nil when it is a valid document of that schema.
func Validate(schema *ast.Schema, d Document) error {
	_, errs := gqlparser.LoadQueryWithRules(schema, d.Text, nil) // nil: the default rules
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Message
		if len(e.Locations) > 0 {
			msgs[i] = fmt.Sprintf("%d:%d: %s", e.Locations[0].Line, e.Locations[0].Column, e.Message)
		}
	}
	return errors.New(strings.Join(msgs, "; "))
}

// WriteManifest writes docs as a manifest of id to text, the format Parse reads first.
func WriteManifest(w io.Writer, docs []Document) error {
	m := make(map[string]string, len(docs))
	for _, d := range docs {
		m[d.ID] = d.Text
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(m)
}
