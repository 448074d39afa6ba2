package resolve

import (
	"context"
	"slices"
	"testing"

	"github.com/pgreflect/pgreflect/gqlschema"
)

// A stream's cursor column has a unique key of its own that Postgres enforces: the primary key and a unique
// constraint are offered; a deferrable unique constraint, a unique index left invalid by a failed CREATE UNIQUE
// INDEX CONCURRENTLY (it holds duplicates) and a unique key over two columns are not.
func TestStreamCursorOnlyOnEnforcedUniqueColumns(t *testing.T) {
	d := newTestDB(t, `
create table note(id int primary key, code text unique, ref int, tag int, a int, b int, body text,
  constraint note_ref_key unique (ref) deferrable, unique (a, b));
comment on table note is e'@graphql({"features": ["subscriptions"]})';
insert into note values (1, 'x', 1, 7, 1, 1, 'one'), (2, 'y', 2, 7, 1, 2, 'two');
grant select on note to anon;
`)
	if _, err := d.conn.Exec(context.Background(), "create unique index concurrently note_tag_key on note(tag)"); err == nil {
		t.Fatal("the unique index on duplicates was built")
	}
	schema := d.schemaOf("anon", gqlschema.Options{})
	value := schema.Types["noteStreamCursorValue"]
	if value == nil {
		t.Fatal("no noteStreamCursorValue: the table has no stream")
	}
	var fields []string
	for _, f := range value.InputFields {
		fields = append(fields, f.Name)
	}
	slices.Sort(fields)
	if !slices.Equal(fields, []string{"code", "id"}) {
		t.Errorf("stream cursor columns %v, want [code id]", fields)
	}
}
