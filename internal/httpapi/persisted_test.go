package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/pgreflect/pgreflect/internal/dbsetup"
	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
)

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// apqBody is a POST body of Apollo's protocol: the hash, with the document when query is not "".
func apqBody(query, hash string) string {
	req := map[string]any{"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hash}}}
	if query != "" {
		req["query"] = query
	}
	b, _ := json.Marshal(req)
	return string(b)
}

// apqSchema is todoSchema with rows that anon may read, so that anonymous answers have something to change.
const apqSchema = todoSchema + `create policy anon_reads on todo for select to anon using (true);`

const apqQuery = `{ todoCollection(orderBy: [{id: AscNullsLast}]) { edges { node { task } } } }`

// The protocol as Apollo Client's persisted-query link speaks it, byte for byte where the link reads the
// answer: an unknown hash, then the document with its hash, then the hash alone on another instance (the
// documents live in the database, not in one server's memory).
func TestPersistedQueryProtocol(t *testing.T) {
	f := newFixture(t, apqSchema)
	anon := map[string]string{"apikey": f.anon}
	hash := sha256Hex(apqQuery)

	status, body := f.post("/graphql/v1", anon, apqBody("", hash))
	if want := `{"errors":[{"message":"PersistedQueryNotFound","extensions":{"code":"PERSISTED_QUERY_NOT_FOUND"}}]}`; status != 200 || body != want {
		t.Fatalf("unknown hash: %d %s, want 200 %s", status, body, want)
	}
	_, want := f.graphql(anon, apqQuery)
	if !strings.Contains(want, `"data"`) {
		t.Fatalf("the document itself fails: %s", want)
	}
	if status, body := f.post("/graphql/v1", anon, apqBody(apqQuery, hash)); status != 200 || body != want {
		t.Fatalf("document with its hash: %d %s, want %s", status, body, want)
	}
	other := f.secondServer(LiveLimits{}, false)
	if status, body := other.post("/graphql/v1", anon, apqBody("", hash)); status != 200 || body != want {
		t.Fatalf("hash alone on another instance: %d %s, want %s", status, body, want)
	}
	if !strings.Contains(f.logs.String(), `"persisted_query":"registered"`) || !strings.Contains(f.logs.String(), `"persisted_query":"hit"`) {
		t.Errorf("the request log does not say what the persisted queries came to:\n%s", f.logs.String())
	}

	bad := []struct {
		name, body string
		status     int
		want       string
	}{
		{"hash of another document", apqBody(`{ __typename }`, hash), 400,
			`{"errors":[{"message":"provided sha does not match query","extensions":{"code":"BAD_REQUEST"}}]}`},
		{"uppercase hash", apqBody(apqQuery, strings.ToUpper(hash)), 400, `provided sha does not match query`},
		{"version 2", `{"extensions":{"persistedQuery":{"version":2,"sha256Hash":"` + hash + `"}}}`, 400,
			`{"errors":[{"message":"Unsupported persisted query version","extensions":{"code":"BAD_REQUEST"}}]}`},
		{"extensions not an object", `{"query":"{ __typename }","extensions":[1]}`, 400, `extensions must be an object`},
		{"not a hash", apqBody("", "../../etc"), 200, `PERSISTED_QUERY_NOT_FOUND`},
	}
	for _, c := range bad {
		if status, body := f.post("/graphql/v1", anon, c.body); status != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s, want %d with %s", c.name, status, body, c.status, c.want)
		}
	}
	// Other extensions are no business of the protocol.
	if status, body := f.post("/graphql/v1", anon, `{"query":"{ __typename }","extensions":{"tracing":true}}`); status != 200 || !strings.Contains(body, `"Query"`) {
		t.Errorf("other extensions: %d %s", status, body)
	}
	var stored int
	if err := f.admin.QueryRow(t.Context(), `select count(*) from pgreflect.persisted_queries`).Scan(&stored); err != nil || stored != 1 {
		t.Errorf("stored documents: %d (%v), want only the one sent with its own hash", stored, err)
	}
}

// Subscriptions speak the protocol too, over WebSocket (where graphql-ws clients send "query": "" beside a
// hash) and Server-Sent Events: an unknown hash gets HTTP's PersistedQueryNotFound as the operation's error,
// the document with its hash is stored, and the hash alone then runs it.
func TestPersistedQueriesOverSubscriptions(t *testing.T) {
	const live = `subscription Live { todoCollection(orderBy: [{id: AscNullsLast}]) { edges { node { task } } } }`
	f := newFixture(t, apqSchema+`comment on table todo is e'@graphql({"features": ["subscriptions"]})';`)
	anon := map[string]string{"apikey": f.anon}
	hash := sha256Hex(live)
	hashOnly := `{"query":"",` + strings.TrimPrefix(apqBody("", hash), "{")

	ws := f.dialWS()
	ws.init(`{"apikey": "` + f.anon + `"}`)
	ws.expect("connection_ack")
	subscribe := func(id, payload, answer string) wsMessage {
		t.Helper()
		ws.send(`{"id":"` + id + `","type":"subscribe","payload":` + payload + `}`)
		return ws.expect(answer)
	}
	notFound := `[{"message":"PersistedQueryNotFound","extensions":{"code":"PERSISTED_QUERY_NOT_FOUND"}}]`
	if m := subscribe("unknown", hashOnly, "error"); m.ID != "unknown" || string(m.Payload) != notFound {
		t.Errorf("an unknown hash over WebSocket: %+v %s, want the error %s", m, m.Payload, notFound)
	}
	if status, body := f.eventStream(anon, apqBody("", hash)); status != 200 || body != `{"errors":`+notFound+`}` {
		t.Errorf("an unknown hash over Server-Sent Events: %d %s", status, body)
	}
	mismatch := subscribe("mismatch", apqBody(`subscription { todoCollection { edges { node { id } } } }`, hash), "error")
	if !strings.Contains(string(mismatch.Payload), "provided sha does not match query") {
		t.Errorf("a hash of another document over WebSocket: %+v %s", mismatch, mismatch.Payload)
	}
	if m := subscribe("register", apqBody(live, hash), "next"); !strings.Contains(string(m.Payload), "alice") {
		t.Errorf("the document with its hash over WebSocket: %+v %s", m, m.Payload)
	}
	if m := subscribe("hit", hashOnly, "next"); !strings.Contains(string(m.Payload), "alice") {
		t.Errorf("the hash alone over WebSocket: %+v %s", m, m.Payload)
	}
	if status, body := f.eventStream(anon, apqBody("", hash)); status != 200 || !strings.Contains(body, "alice") {
		t.Errorf("the hash alone over Server-Sent Events: %d %s", status, body)
	}
	var stored int
	if err := f.admin.QueryRow(t.Context(), `select count(*) from pgreflect.persisted_queries`).Scan(&stored); err != nil || stored != 1 {
		t.Errorf("stored documents: %d (%v), want the subscription's", stored, err)
	}
}

// Off, the server says so in the shape that makes the link stop sending hashes.
func TestPersistedQueriesOff(t *testing.T) {
	f := newFixture(t, apqSchema)
	f.opts.PersistedQueries = 0
	f.server, f.srv = f.start(nil)
	status, body := f.post("/graphql/v1", map[string]string{"apikey": f.anon}, apqBody("", sha256Hex(apqQuery)))
	if want := `{"errors":[{"message":"PersistedQueryNotSupported","extensions":{"code":"PERSISTED_QUERY_NOT_SUPPORTED"}}]}`; status != 200 || body != want {
		t.Errorf("%d %s, want 200 %s", status, body, want)
	}
}

// A database set up by an older pgreflect lacks the store's functions: the server says it does not support
// persisted queries (so that clients send documents), and once `pgreflect setup` has added them, a schema change
// the server follows, they are back without a restart.
func TestPersistedQueriesComeBackWithTheirFunctions(t *testing.T) {
	f := newFixture(t, apqSchema)
	if _, err := f.admin.Exec(t.Context(), `drop function pgreflect.persisted_query(text);
		drop function pgreflect.persist_query(text, text, integer)`); err != nil {
		t.Fatal(err)
	}
	anon := map[string]string{"apikey": f.anon}
	const unsupported = `{"errors":[{"message":"PersistedQueryNotSupported","extensions":{"code":"PERSISTED_QUERY_NOT_SUPPORTED"}}]}`
	if status, body := f.post("/graphql/v1", anon, apqBody(apqQuery, sha256Hex(apqQuery))); status != 200 || body != unsupported {
		t.Fatalf("without the functions: %d %s, want 200 %s", status, body, unsupported)
	}
	if err := dbsetup.Apply(t.Context(), f.admin); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, func() string {
		if status, body := f.post("/graphql/v1", anon, apqBody(apqQuery, sha256Hex(apqQuery))); status != 200 || body == unsupported {
			return fmt.Sprintf("after setup added the functions: %d %s", status, body)
		}
		return ""
	})
	if status, body := f.post("/graphql/v1", anon, apqBody("", sha256Hex(apqQuery))); status != 200 || !strings.Contains(body, "todoCollection") {
		t.Errorf("the hash alone after setup: %d %s", status, body)
	}
}

// A document the store cannot hold (a NUL byte) is no document: sent with its hash it is answered as sent without
// one, with its parse error, and nothing is stored. (Bytes that are not UTF-8 do not come through a JSON body:
// the decoder makes them U+FFFD.)
func TestPersistedQueriesStoreNoText(t *testing.T) {
	f := newFixture(t, apqSchema)
	anon := map[string]string{"apikey": f.anon}
	const doc = "{ __typename }\x00"
	plain, _ := json.Marshal(map[string]string{"query": doc})
	plainStatus, want := f.post("/graphql/v1", anon, string(plain))
	if status, body := f.post("/graphql/v1", anon, apqBody(doc, sha256Hex(doc))); status != plainStatus || body != want || status >= 500 {
		t.Errorf("a document with a NUL byte and its hash: %d %s, want what it gets alone: %d %s", status, body, plainStatus, want)
	}
	var stored int
	if err := f.admin.QueryRow(t.Context(), `select count(*) from pgreflect.persisted_queries`).Scan(&stored); err != nil || stored != 0 {
		t.Errorf("stored documents: %d (%v)", stored, err)
	}
}

// The store is bounded: beyond its size the least recently used document goes, and a document read again
// counts as used.
func TestPersistedQueriesEvictLeastRecentlyUsed(t *testing.T) {
	f := newFixture(t, apqSchema)
	f.opts.PersistedQueries = 2
	f.server, f.srv = f.start(nil)
	anon := map[string]string{"apikey": f.anon}
	docs := []string{`{ a: __typename }`, `{ b: __typename }`, `{ c: __typename }`}
	register := func(doc string) {
		t.Helper()
		if status, body := f.post("/graphql/v1", anon, apqBody(doc, sha256Hex(doc))); status != 200 || !strings.Contains(body, `"Query"`) {
			t.Fatalf("register %s: %d %s", doc, status, body)
		}
	}
	register(docs[0])
	register(docs[1])
	// The first is used again (by another instance, which must ask the database), long after it was stored.
	if _, err := f.admin.Exec(t.Context(), `update pgreflect.persisted_queries set last_used_at = now() - interval '1 hour'`); err != nil {
		t.Fatal(err)
	}
	other := f.secondServer(LiveLimits{}, false)
	if status, body := other.post("/graphql/v1", anon, apqBody("", sha256Hex(docs[0]))); status != 200 || !strings.Contains(body, `"a"`) {
		t.Fatalf("read the first: %d %s", status, body)
	}
	register(docs[2])
	rows, err := f.admin.Query(t.Context(), `select document from pgreflect.persisted_queries order by document`)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, d)
	}
	if want := []string{docs[0], docs[2]}; fmt.Sprint(kept) != fmt.Sprint(want) {
		t.Errorf("kept %q, want %q (the second was the least recently used)", kept, want)
	}
}

// The tables cannot be read or written around the functions by the login role (no superuser, as on managed
// Postgres), which reaches them through the functions alone, and the functions refuse a document under a hash
// that is not its own, whoever calls them. Nor may the login role add a trusted document.
func TestPersistedQueriesStoreRefusesForeignHashes(t *testing.T) {
	f := newFixture(t, apqSchema)
	ctx := t.Context()
	var super bool
	if err := f.pool.QueryRow(ctx, `select rolsuper from pg_roles where rolname = current_user`).Scan(&super); err != nil || super {
		t.Fatalf("the login role is a superuser (%v): the test proves nothing", err)
	}
	if _, err := f.pool.Exec(ctx, `select pgreflect.persist_query($1, '{ __typename }', 10)`, sha256Hex(apqQuery)); err == nil ||
		!strings.Contains(err.Error(), "provided sha does not match query") {
		t.Errorf("a document under another's hash: %v", err)
	}
	for _, q := range []string{`select * from pgreflect.persisted_queries`,
		`insert into pgreflect.persisted_queries (hash, document) values (repeat('0', 64), '{ x }')`,
		`select * from pgreflect.trusted_documents`,
		`insert into pgreflect.trusted_documents (id, sha256, document) values ('x', repeat('0', 64), '{ x }')`} {
		if _, err := f.pool.Exec(ctx, q); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("%s as the login role: %v, want permission denied", q, err)
		}
	}
}

// get sends a GET to /graphql/v1 with the parameters and headers given.
func (f *fixture) get(params url.Values, headers map[string]string) (*http.Response, string) {
	f.t.Helper()
	return f.send(http.MethodGet, "/graphql/v1?"+params.Encode(), nil, headers, nil)
}

// Queries over GET, cacheable by a CDN when anonymous, revalidated with ETags; never a mutation.
func TestGETQueries(t *testing.T) {
	f := newFixture(t, apqSchema)
	f.opts.GETCacheControl = "public, max-age=60"
	f.server, f.srv = f.start(nil)
	anon := map[string]string{"apikey": f.anon}
	_, want := f.graphql(anon, apqQuery)

	resp, body := f.get(url.Values{"query": {apqQuery}}, anon)
	if resp.StatusCode != 200 || body != want {
		t.Fatalf("GET: %d %s, want %s", resp.StatusCode, body, want)
	}
	etag := resp.Header.Get("ETag")
	if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=60" || etag == "" || !strings.Contains(resp.Header.Get("Vary"), "apikey") {
		t.Errorf("anonymous GET: Cache-Control %q, ETag %q, Vary %q", cc, etag, resp.Header.Get("Vary"))
	}
	// supabase-js sends the anon key as the bearer token too: still everybody's answer.
	if resp, _ := f.get(url.Values{"query": {apqQuery}}, map[string]string{"apikey": f.anon, "Authorization": "Bearer " + f.anon}); resp.Header.Get("Cache-Control") != "public, max-age=60" {
		t.Errorf("anon key as bearer: Cache-Control %q", resp.Header.Get("Cache-Control"))
	}
	resp, body = f.get(url.Values{"query": {apqQuery}}, map[string]string{"apikey": f.anon, "If-None-Match": `"other", ` + etag})
	if resp.StatusCode != http.StatusNotModified || body != "" {
		t.Errorf("If-None-Match with the ETag: %d %q, want 304 and no body", resp.StatusCode, body)
	}
	if _, err := f.admin.Exec(t.Context(), `update todo set task = 'changed' where task = 'alice'`); err != nil {
		t.Fatal(err)
	}
	resp, body = f.get(url.Values{"query": {apqQuery}}, map[string]string{"apikey": f.anon, "If-None-Match": etag})
	if resp.StatusCode != 200 || resp.Header.Get("ETag") == etag {
		t.Errorf("If-None-Match after a change: %d %s with ETag %q", resp.StatusCode, body, resp.Header.Get("ETag"))
	}

	user := f.userToken(jwt.MapClaims{"sub": "11111111-1111-1111-1111-111111111111", "role": "authenticated", "exp": time.Now().Add(time.Hour).Unix()})
	resp, body = f.get(url.Values{"query": {apqQuery}}, map[string]string{"apikey": f.anon, "Authorization": "Bearer " + user})
	if resp.StatusCode != 200 || !strings.Contains(body, "changed") || resp.Header.Get("Cache-Control") != "private, no-store" {
		t.Errorf("a user's GET: %d %s, Cache-Control %q", resp.StatusCode, body, resp.Header.Get("Cache-Control"))
	}
	resp, _ = f.get(url.Values{"query": {apqQuery}}, map[string]string{"apikey": f.service})
	if resp.Header.Get("Cache-Control") != "private, no-store" {
		t.Errorf("service_role GET: Cache-Control %q", resp.Header.Get("Cache-Control"))
	}
	resp, body = f.get(url.Values{"query": {`{ nope }`}}, anon)
	if !strings.Contains(body, "Unknown field") || resp.Header.Get("Cache-Control") != "" {
		t.Errorf("an error answer: %s, Cache-Control %q (no cache may keep it)", body, resp.Header.Get("Cache-Control"))
	}
	resp, body = f.get(url.Values{"query": {`{ todo: todoCollection { edges { node { id } } } }`}, "variables": {`{"x": 1}`}, "operationName": {""}}, anon)
	if resp.StatusCode != 200 || !strings.Contains(body, `"data"`) {
		t.Errorf("variables in the URL: %d %s", resp.StatusCode, body)
	}

	mutation := `mutation { insertIntoTodoCollection(objects: [{userId: "11111111-1111-1111-1111-111111111111", task: "x"}]) { affectedCount } }`
	resp, body = f.get(url.Values{"query": {mutation}}, map[string]string{"apikey": f.service})
	if want := `{"errors":[{"message":"GET requests may only run queries; send a mutation with POST"}]}`; resp.StatusCode != 405 || body != want || resp.Header.Get("Allow") != "POST" {
		t.Errorf("mutation over GET: %d %s (Allow %q), want 405 %s", resp.StatusCode, body, resp.Header.Get("Allow"), want)
	}
	var n int
	if err := f.admin.QueryRow(t.Context(), `select count(*) from todo where task = 'x'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("the GET mutation wrote %d rows (%v)", n, err)
	}
	// A persisted mutation over GET is refused too, once its document is known.
	if status, _ := f.post("/graphql/v1", map[string]string{"apikey": f.service}, apqBody(mutation, sha256Hex(mutation))); status != 200 {
		t.Fatalf("register the mutation: %d", status)
	}
	ext := `{"persistedQuery":{"version":1,"sha256Hash":"` + sha256Hex(mutation) + `"}}`
	if resp, body := f.get(url.Values{"extensions": {ext}}, map[string]string{"apikey": f.service}); resp.StatusCode != 405 {
		t.Errorf("persisted mutation over GET: %d %s", resp.StatusCode, body)
	}
	req, _ := http.NewRequest(http.MethodPut, f.srv.URL+"/graphql/v1", strings.NewReader(`{"query":"{ __typename }"}`))
	req.Header.Set("apikey", f.anon)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, POST" {
		t.Errorf("PUT: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// POST answers are as before: no validators, no cache headers.
	if resp, err := http.Post(f.srv.URL+"/graphql/v1?apikey="+f.anon, "application/json", strings.NewReader(`{"query":"{ __typename }"}`)); err == nil {
		resp.Body.Close()
		if resp.Header.Get("ETag") != "" || resp.Header.Get("Cache-Control") != "" {
			t.Errorf("POST answer with ETag %q, Cache-Control %q", resp.Header.Get("ETag"), resp.Header.Get("Cache-Control"))
		}
	}
}

// Apollo Client's persisted-query link from npm, hashed queries over GET: the first request misses and the link
// sends the document, later requests (from a fresh client, on another instance) send only the hash.
func TestApolloPersistedQueryLink(t *testing.T) {
	f := newFixture(t, apqSchema)
	f.opts.GETCacheControl = "public, max-age=30"
	f.server, f.srv = f.start(nil)
	other := f.secondServer(LiveLimits{}, false)
	var out struct {
		First, Second []string
		Requests      []struct {
			Method, Status, CacheControl string
			HasQuery, HasHash            bool
		}
	}
	testenv.RunNodeScript(t, "../../testdata/apollo-persisted", "apq.mjs", nil, map[string]string{
		"firstURL":  f.srv.URL + "/graphql/v1",
		"secondURL": other.srv.URL + "/graphql/v1",
		"anonKey":   f.anon,
	}, &out)
	want := "[alice bob]"
	if fmt.Sprint(out.First) != want || fmt.Sprint(out.Second) != want {
		t.Errorf("answers %q and %q, want %s", out.First, out.Second, want)
	}
	got := fmt.Sprint(out.Requests)
	// The miss over GET, the document over POST, then the hash alone over GET, cacheable.
	if want := "[{GET 200 private, no-cache, must-revalidate false true} {POST 200  true true} {GET 200 public, max-age=30 false true}]"; got != want {
		t.Errorf("requests %s\nwant     %s", got, want)
	}
}
