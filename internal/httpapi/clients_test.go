package httpapi

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
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
			testenv.RunNodeScript(t, "../../testdata/live-clients", "live.mjs", nil, map[string]string{
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

// TestTrustedSubscriptionsFromJavaScriptClients subscribes under trusted_documents = "only" with graphql-ws and
// graphql-sse from npm, naming the trusted document by id or hash instead of sending it: each gets its answer,
// and graphql-ws hands its caller HTTP's refusal of a document that is not trusted.
func TestTrustedSubscriptionsFromJavaScriptClients(t *testing.T) {
	const live = `subscription Live { todoCollection(orderBy: [{id: AscNullsLast}]) { edges { node { task } } } }`
	f := trustedLiveFixture(t, live)
	var out struct {
		ByID, ByHash, SSEByID []string
		Refused               []struct{ Message string }
	}
	testenv.RunNodeScript(t, "../../testdata/live-clients", "trusted.mjs", nil, map[string]string{
		"httpURL":    f.srv.URL + "/graphql/v1",
		"wsURL":      "ws" + strings.TrimPrefix(f.srv.URL, "http") + "/graphql/v1",
		"anonKey":    f.anon,
		"documentId": "live",
		"hash":       sha256Hex(live),
		"untrusted":  untrustedLive,
	}, &out)
	want := []string{"alice", "bob"}
	for name, got := range map[string][]string{"graphql-ws by documentId": out.ByID, "graphql-ws by hash": out.ByHash, "graphql-sse by documentId": out.SSEByID} {
		if !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if len(out.Refused) != 1 || out.Refused[0].Message != msgUntrustedDocument {
		t.Errorf("an untrusted subscription: %+v, want the error %q", out.Refused, msgUntrustedDocument)
	}
}
