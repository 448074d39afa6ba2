package stack_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pgreflect/pgreflect/client"
	"github.com/pgreflect/pgreflect/internal/devtools/pgbouncertest"
	"github.com/pgreflect/pgreflect/internal/stacktest"
	"github.com/pgreflect/pgreflect/pgtest"
)

// TestLiveQueriesBehindPgBouncer serves subscriptions through a pooler in transaction mode: no change feed
// there, so they are polled, and each refresh's transactions (one per subscriber's claims) run on unnamed
// statements whichever server session the pooler gives them.
func TestLiveQueriesBehindPgBouncer(t *testing.T) {
	bouncer := pgbouncertest.Start(t, pgtest.ServerURL(t), pgbouncertest.Options{PoolSize: 2, Users: map[string]string{"authenticator": ""}})
	through := func(u string) string { return bouncer.URL(t, u, "authenticator") + "&pgbouncer=true" }
	s := stacktest.New(t, stacktest.Options{LoginURL: through, Schema: `create table note (id serial primary key, body text not null);
		comment on table note is e'@graphql({"features": ["subscriptions"]})';`})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	subs := make([]*client.Subscription, 3)
	for i := range subs {
		sub, err := client.New(s.URL, s.Anon).Subscribe(ctx, `subscription { noteCollection { edges { node { body } } } }`, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		if err := sub.Next(ctx, nil); err != nil {
			t.Fatal(err)
		}
		subs[i] = sub
	}
	if _, err := s.Admin.Exec(ctx, `insert into note (body) values ('through the pooler')`); err != nil {
		t.Fatal(err)
	}
	for _, sub := range subs {
		var out struct {
			NoteCollection struct {
				Edges []struct{ Node struct{ Body string } }
			}
		}
		if err := sub.Next(ctx, &out); err != nil {
			t.Fatal(err)
		}
		if len(out.NoteCollection.Edges) != 1 || !strings.Contains(out.NoteCollection.Edges[0].Node.Body, "pooler") {
			t.Fatalf("pushed %+v", out)
		}
	}
}
