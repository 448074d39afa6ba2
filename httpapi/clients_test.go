package httpapi

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/pgreflect/pgreflect/internal/testenv"
)

// TestLiveQueriesFromJavaScriptClients subscribes with the clients people use, from npm: each sees its live
// list and then the list with a todo added over HTTP by another database session.
func TestLiveQueriesFromJavaScriptClients(t *testing.T) {
	f := newFixture(t, liveSchema)
	for _, client := range []string{"graphql-ws", "apollo", "urql", "graphql-sse"} {
		t.Run(client, func(t *testing.T) {
			user := uuid.New()
			if _, err := f.admin.Exec(t.Context(), `insert into todo (owner, task) values ($1, 'already there')`, user); err != nil {
				t.Fatal(err)
			}
			token := f.userToken(jwt.MapClaims{"sub": user.String(), "role": "authenticated", "exp": time.Now().Add(time.Hour).Unix()})
			var out struct{ First, Updated []string }
			testenv.RunNodeScript(t, "../testdata/live-clients", "live.mjs", nil, map[string]string{
				"client":  client,
				"httpURL": f.srv.URL + "/graphql/v1",
				"wsURL":   "ws" + strings.TrimPrefix(f.srv.URL, "http") + "/graphql/v1",
				"anonKey": f.anon,
				"token":   token,
				"task":    "added with " + client,
			}, &out)
			if !slices.Equal(out.First, []string{"already there"}) {
				t.Errorf("first answer %q, want only the user's own todo", out.First)
			}
			if !slices.Equal(out.Updated, []string{"already there", "added with " + client}) {
				t.Errorf("pushed answer %q", out.Updated)
			}
		})
	}
}
