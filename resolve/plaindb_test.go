package resolve

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/pgtest"
)

// The engine as a library needs nothing installed in the database: on a plain one (no pgreflect setup, no
// schema pgreflect, no roles) every kind of request answers as pg_graphql does, atMost included.
func TestPlainDatabaseNeedsNoSetup(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.NewDB(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(ctx, `
create table item(id serial primary key, name text not null);
insert into item(name) values ('a'), ('b'), ('c');
create function _upper(item) returns text language sql stable as $$ select upper($1.name) $$;
comment on schema public is '@graphql({"inflect_names": true})';`); err != nil {
		t.Fatal(err)
	}
	var installed bool
	if err := conn.QueryRow(ctx, `select exists (select from pg_namespace where nspname = 'pgreflect')`).Scan(&installed); err != nil {
		t.Fatal(err)
	}
	if installed {
		t.Fatal("the test database has schema pgreflect")
	}
	engine := NewEngine(Options{})
	run := func(query string) string {
		t.Helper()
		return string(engine.Execute(ctx, conn, Request{Query: query}))
	}
	names := func() string {
		t.Helper()
		var s string
		if err := conn.QueryRow(ctx, `select string_agg(name, ',' order by id) from item`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	cases := []struct{ query, want string }{
		{`{ itemCollection(first: 2) { edges { node { id name upper } } } }`,
			`{"data": {"itemCollection": {"edges": [{"node": {"id": 1, "name": "a", "upper": "A"}}, {"node": {"id": 2, "name": "b", "upper": "B"}}]}}}`},
		{`mutation { updateItemCollection(set: {name: "x"}, filter: {id: {lt: 3}}) { affectedCount } }`,
			`{"data": null, "errors": [{"message": "update impacts too many records"}]}`},
		{`mutation { updateItemCollection(set: {name: "x"}, filter: {id: {lt: 3}}, atMost: 1) { affectedCount } }`,
			`{"data": null, "errors": [{"message": "update impacts too many records"}]}`},
		{`mutation { deleteFromItemCollection(atMost: 2) { affectedCount } }`,
			`{"data": null, "errors": [{"message": "delete impacts too many records"}]}`},
	}
	for _, c := range cases {
		if got := run(c.query); got != c.want {
			t.Errorf("%s\n got: %s\nwant: %s", c.query, got, c.want)
		}
	}
	if got := names(); got != "a,b,c" {
		t.Fatalf("rows after refused mutations: %s, want a,b,c (nothing written)", got)
	}

	// Inside the caller's transaction a refused mutation is rolled back to its savepoint and the transaction
	// goes on.
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if got, want := run(`mutation { deleteFromItemCollection(filter: {id: {gt: 1}}) { affectedCount } }`),
		`{"data": null, "errors": [{"message": "delete impacts too many records"}]}`; got != want {
		t.Errorf("delete in a transaction\n got: %s\nwant: %s", got, want)
	}
	if got, want := run(`mutation { updateItemCollection(set: {name: "z"}, filter: {id: {eq: 3}}) { records { name } } }`),
		`{"data": {"updateItemCollection": {"records": [{"name": "z"}]}}}`; got != want {
		t.Errorf("update within atMost\n got: %s\nwant: %s", got, want)
	}
	if got, want := run(`mutation { deleteFromItemCollection(filter: {id: {gt: 1}}, atMost: 2) { affectedCount } }`),
		`{"data": {"deleteFromItemCollection": {"affectedCount": 2}}}`; got != want {
		t.Errorf("delete within atMost\n got: %s\nwant: %s", got, want)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := names(); got != "a" {
		t.Fatalf("rows after the transaction: %s, want a", got)
	}
}

// On a database without pgreflect setup nothing marks a transaction that changed the catalog: Execute keeps no
// schema read in a transaction that has written anything, so a DDL rolled back leaves nothing behind, and keeps
// the one read in a transaction that has not.
func TestPlainDatabaseExecuteKeepsNoSchemaOfAWritingTransaction(t *testing.T) {
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, pgtest.NewDB(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	engine := NewEngine(Options{})
	var user string
	if err := conn.QueryRow(ctx, `select current_user::text`).Scan(&user); err != nil {
		t.Fatal(err)
	}
	kept := func() bool {
		_, err := engine.executed.Get(ctx, user, []string{"public"}, func(context.Context) (*gqlschema.Schema, error) {
			return nil, errors.New("not kept")
		})
		return err == nil
	}
	inTx := func(setup, query string) string {
		t.Helper()
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(context.Background())
		if _, err := tx.Exec(ctx, setup); err != nil {
			t.Fatal(err)
		}
		return string(engine.Execute(ctx, tx.Conn(), Request{Query: query}))
	}
	const ghost = `{ ghostCollection { edges { node { id } } } }`
	if got := inTx(`create table ghost (id int primary key)`, ghost); got != `{"data": {"ghostCollection": {"edges": []}}}` {
		t.Errorf("Execute after its transaction's own DDL: %s", got)
	}
	if kept() {
		t.Fatal("a schema read in a transaction that wrote was kept")
	}
	if got := inTx(`select 1`, ghost); !strings.Contains(got, "Unknown field") {
		t.Errorf("Execute after that transaction rolled back: %s", got)
	}
	if !kept() {
		t.Error("a schema read in a transaction that wrote nothing was not kept")
	}
}
