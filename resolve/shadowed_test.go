package resolve

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// A table of the same name in a later schema of the search path vanishes from the API, as in pg_graphql; the
// engine says so in its log when it builds the schema (issue 20), and says nothing when names differ.
func TestShadowedRelationLoggedAtLoad(t *testing.T) {
	d := newTestDB(t, `
		create schema app;
		grant usage on schema app to anon, authenticated, service_role;
		create table public.profiles (id serial primary key, name text);
		create table app.profiles (id serial primary key, bio text);
		create table app.teams (id serial primary key);
		grant select on all tables in schema app to service_role;`)
	var log bytes.Buffer
	d.engine = NewEngine(Options{Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // a line to compare whole
			}
			return a
		},
	}))})
	session := Session{Role: "service_role", Claims: map[string]any{"role": "service_role"}, SearchPath: []string{"public", "app"}}
	body := string(d.engine.ExecuteAs(context.Background(), d.conn, session, Request{Query: `{ teamsCollection { edges { node { id } } } }`}))
	if strings.Contains(body, "errors") {
		t.Fatal(body)
	}
	want := `level=WARN msg="relation hidden by another of the same GraphQL name earlier on the search path" role=service_role hidden=app.profiles shown=public.profiles type=profiles fix="pgreflect lint"`
	if got := strings.TrimSpace(log.String()); got != want {
		t.Errorf("log:\n got: %s\nwant: %s", got, want)
	}

	log.Reset()
	d.exec(`alter table app.profiles rename to app_profiles`)
	d.engine.ExecuteAs(context.Background(), d.conn, session, Request{Query: `{ app_profilesCollection { edges { node { id } } } }`})
	if log.Len() != 0 {
		t.Errorf("a schema without namesakes logged: %s", log.String())
	}
}
