package resolve

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// Behind a transaction pooler one backend serves many client connections, so a statement name one connection
// prepared must never be one another connection would take for its own: that one would run the other's SQL.
func TestStatementNamesAreUniqueToTheirConnection(t *testing.T) {
	d := newTestDB(t, blogFixture)
	ctx := context.Background()
	session := Session{Role: "service_role", Claims: map[string]any{"role": "service_role"}, SearchPath: []string{"public"}}
	engine := NewEngine(Options{})
	names := map[string]int{}
	for i := range 2 {
		conn, _ := countedConn(t, d)
		engine.ExecuteAs(ctx, conn, session, Request{Query: `{ accountCollection(first: 1) { edges { node { id } } } }`})
		rows, err := conn.Query(ctx, "select name from pg_prepared_statements where name like 'pgreflect%'")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				t.Fatal(err)
			}
			if prev, ok := names[name]; ok && prev != i {
				t.Errorf("connections %d and %d both prepared a statement named %s", prev, i, name)
			}
			names[name] = i
		}
		if rows.Err() != nil {
			t.Fatal(rows.Err())
		}
	}
	if len(names) < 2 {
		t.Fatalf("prepared statements seen: %v", names)
	}
}

// After the server lost its statements (a pooler handed the connection another backend), names already used
// are not used again: the new backend may still hold one of them with other SQL.
func TestForgottenStatementNamesAreNotReused(t *testing.T) {
	d := newTestDB(t, "")
	conn, _ := countedConn(t, d)
	c := statementsOf(conn.PgConn())
	first := c.newName()
	forgetStatements(conn.PgConn())
	if again := statementsOf(conn.PgConn()).newName(); again == first {
		t.Errorf("name %s used again after forgetting", again)
	}
}

// A statement prepared once runs again with the description its preparation returned, as pgx's own cache
// does: no Describe is sent and Postgres sends no row description, for every request after the first.
func TestPreparedStatementsRunWithoutDescribe(t *testing.T) {
	d := newTestDB(t, blogFixture)
	ctx := context.Background()
	session := Session{Role: "anon", Claims: map[string]any{"role": "anon"}, SearchPath: []string{"public"}}
	engine := NewEngine(Options{})
	conn, _ := countedConn(t, d)
	req := Request{Query: `{ accountCollection(first: 2) { edges { node { id } } } }`}
	first := engine.ExecuteAs(ctx, conn, session, req)
	var trace bytes.Buffer
	conn.PgConn().Frontend().Trace(&trace, pgproto3.TracerOptions{SuppressTimestamps: true})
	again := engine.ExecuteAs(ctx, conn, session, req)
	conn.PgConn().Frontend().Untrace()
	if !bytes.Equal(first, again) || !bytes.Contains(again, []byte(`"edges"`)) {
		t.Fatalf("answers differ or failed:\n%s\n%s", first, again)
	}
	if n := strings.Count(trace.String(), "\tBind\t"); n != 2 {
		t.Fatalf("%d Bind messages, want the prelude's and the query's:\n%s", n, trace.String())
	}
	for _, msg := range []string{"\tDescribe\t", "\tRowDescription\t", "\tParse\t"} {
		if strings.Contains(trace.String(), msg) {
			t.Errorf("the second request's pipeline has %s:\n%s", strings.TrimSpace(msg), trace.String())
		}
	}
}
