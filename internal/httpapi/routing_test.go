package httpapi

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/pgtest"
	"github.com/pgreflect/pgreflect/resolve"
)

// The server routes by the operation the engine parsed, never by the look of the text: a query goes to the
// replica whatever words its comments and strings hold, a mutation to the primary even behind a fragment
// named query (which a lexer of keywords takes for a query), an operation name chooses between the two, and a
// GET of such a mutation is refused; the request log names the parsed operation, and /ready checks the replica.
func TestRoutingFollowsTheParsedOperation(t *testing.T) {
	// The replica's stand-in answers with its own row, and would fail a mutation that reached it.
	replicaURL := testenv.ReadOnlyDB(t, testenv.RoutedSchema("on the replica"))
	f := newFixtureEngine(t, pgtest.NewDB(t), testenv.RoutedSchema("on the primary"), 0, Options{},
		resolve.Options{Replicas: []*pgxpool.Pool{testenv.LoginPool(t, replicaURL)}})
	anon := map[string]string{"apikey": f.anon}
	const items = `itemCollection(orderBy: [{id: AscNullsLast}]) { edges { node { name } } }`
	const both = `query Q { ` + items + ` } mutation M { insertIntoitemCollection(objects: [{id: 3, name: "by name"}]) { affectedCount } }`
	const hidden = `fragment query on itemInsertResponse { affectedCount }
		mutation { insertIntoitemCollection(objects: [{id: 2, name: "fragment"}]) { ...query } }`
	post := func(query, operationName string) string {
		t.Helper()
		body, _ := json.Marshal(map[string]string{"query": query, "operationName": operationName})
		status, out := f.post("/graphql/v1", anon, string(body))
		if status != http.StatusOK {
			t.Fatalf("%s: %d %s", query, status, out)
		}
		return out
	}
	for _, c := range []struct{ query, operationName, want string }{
		{"# mutation {\n{ " + items + " }", "", "on the replica"},
		{`query Q($s: String = "mutation { x }") { ` + items + ` }`, "", "on the replica"},
		{both, "Q", "on the replica"},
		{both, "M", `"affectedCount": 1`},
		{hidden, "", `"affectedCount": 1`},
	} {
		if got := post(c.query, c.operationName); !strings.Contains(got, c.want) {
			t.Errorf("%s (operation %q): %s, want %s", c.query, c.operationName, got, c.want)
		}
	}
	var names string
	if err := f.admin.QueryRow(t.Context(), "select string_agg(name, ', ' order by id) from item").Scan(&names); err != nil {
		t.Fatal(err)
	}
	if names != "on the primary, fragment, by name" {
		t.Errorf("the primary's rows after the mutations: %s", names)
	}
	if log := f.logs.String(); !strings.Contains(log, `"operation":"mutation"`) || !strings.Contains(log, `"operation":"query"`) {
		t.Errorf("the request log does not name the operations:\n%s", log)
	}

	resp, body := f.get(url.Values{"query": {hidden}}, anon)
	if resp.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(body, "send a mutation with POST") {
		t.Errorf("GET of a mutation behind a fragment named query: %d %s", resp.StatusCode, body)
	}
	resp, body = f.get(url.Values{"query": {both}, "operationName": {"Q"}}, anon)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "on the replica") {
		t.Errorf("GET of the query a document names beside a mutation: %d %s", resp.StatusCode, body)
	}
	if status, body := f.send(http.MethodGet, "/ready", nil, nil, nil); status.StatusCode != http.StatusOK || !strings.Contains(body, `"replica_1":"ok"`) {
		t.Errorf("/ready: %d %s", status.StatusCode, body)
	}
}
