package httpapi

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/internal/documents"
	"github.com/pgreflect/pgreflect/internal/obs"
	"github.com/pgreflect/pgreflect/internal/schemadiff"
	"github.com/pgreflect/pgreflect/internal/sdl"
	"github.com/pgreflect/pgreflect/resolve"
)

// trustedFixture serves apqSchema with the trusted documents mode given and one trusted document, apqQuery,
// under the id "tasks".
func trustedFixture(t *testing.T, mode TrustedDocuments) *fixture {
	t.Helper()
	f := newFixture(t, apqSchema)
	if _, err := documents.Push(t.Context(), f.admin, []documents.Document{{ID: "tasks", Text: apqQuery}}); err != nil {
		t.Fatal(err)
	}
	f.opts.TrustedDocuments = mode
	f.server, f.srv = f.start(obs.NewMetrics())
	return f
}

// With "only", anon and authenticated run trusted documents alone, by id, hash or text; service_role runs any
// document unless told otherwise; the refusals are counted.
func TestTrustedDocumentsOnly(t *testing.T) {
	f := trustedFixture(t, TrustedDocuments{Mode: TrustedOnly})
	_, want := f.graphql(map[string]string{"apikey": f.service}, apqQuery)
	if !strings.Contains(want, "alice") {
		t.Fatalf("service_role runs the trusted document's text: %s", want)
	}
	user := f.userToken(jwt.MapClaims{"sub": "11111111-1111-1111-1111-111111111111", "role": "authenticated", "exp": time.Now().Add(time.Hour).Unix()})
	roles := map[string]map[string]string{
		"anon":          {"apikey": f.anon},
		"authenticated": {"apikey": f.anon, "Authorization": "Bearer " + user},
	}
	refused := `{"errors":[{"message":"only trusted documents may run here, and this document is not one of them: send the id of a document added with ` + "`pgreflect documents push`" + `"}]}`
	for role, headers := range roles {
		for name, body := range map[string]string{
			"Relay's doc_id":  `{"doc_id":"tasks"}`,
			"documentId":      `{"documentId":"tasks","variables":{}}`,
			"Apollo's hash":   apqBody("", sha256Hex(apqQuery)),
			"the text itself": `{"query":` + jsonString(apqQuery) + `}`,
		} {
			status, got := f.post("/graphql/v1", headers, body)
			if status != 200 || !strings.Contains(got, `"data"`) || role == "anon" && got != want {
				t.Errorf("%s, %s: %d %s", role, name, status, got)
			}
		}
		for name, body := range map[string]string{
			"another document":           `{"query":"{ __typename }"}`,
			"another document with hash": apqBody(`{ __typename }`, sha256Hex(`{ __typename }`)),
			"an unknown hash":            apqBody("", sha256Hex(`{ __typename }`)),
		} {
			if status, got := f.post("/graphql/v1", headers, body); status != http.StatusForbidden || got != refused {
				t.Errorf("%s, %s: %d %s, want 403 %s", role, name, status, got, refused)
			}
		}
		if status, got := f.post("/graphql/v1", headers, `{"doc_id":"nope"}`); status != 400 || !strings.Contains(got, `unknown document id \"nope\"`) {
			t.Errorf("%s, unknown id: %d %s", role, status, got)
		}
		// An id no document can have (the database could not even compare it) is unknown as well.
		if status, got := f.post("/graphql/v1", headers, `{"doc_id":"no\u0000pe"}`); status != 400 || !strings.Contains(got, `unknown document id`) {
			t.Errorf("%s, an id with a NUL byte: %d %s", role, status, got)
		}
	}
	if status, got := f.post("/graphql/v1", map[string]string{"apikey": f.service}, `{"query":"{ __typename }"}`); status != 200 || !strings.Contains(got, `"Query"`) {
		t.Errorf("service_role, another document: %d %s", status, got)
	}
	// GET, as a CDN would cache it: by id.
	resp, got := f.get(url.Values{"documentId": {"tasks"}}, roles["anon"])
	if resp.StatusCode != 200 || got != want {
		t.Errorf("GET by id: %d %s", resp.StatusCode, got)
	}
	if n := f.metricLines("pgreflect_limit_refusals_total"); !strings.Contains(n, `pgreflect_limit_refusals_total{limit="untrusted_document"} 6`) {
		t.Errorf("refusals not counted:\n%s", n)
	}
	var stored int
	if err := f.admin.QueryRow(t.Context(), `select count(*) from pgreflect.persisted_queries`).Scan(&stored); err != nil || stored != 0 {
		t.Errorf("refused documents were stored as persisted queries: %d (%v)", stored, err)
	}

	strict := trustedFixture(t, TrustedDocuments{Mode: TrustedOnly, ServiceRole: true})
	if status, got := strict.post("/graphql/v1", map[string]string{"apikey": strict.service}, `{"query":"{ __typename }"}`); status != http.StatusForbidden {
		t.Errorf("service_role under ServiceRole: %d %s", status, got)
	}
}

// metricLines is the lines of /metrics, as the service_role key sees them, that start with prefix.
func (f *fixture) metricLines(prefix string) string {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/metrics", nil)
	req.Header.Set("apikey", f.service)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var lines []string
	for l := range strings.SplitSeq(string(b), "\n") {
		if strings.HasPrefix(l, prefix) {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

func jsonString(s string) string {
	q, _ := jsonQuote(s)
	return q
}

// With "allow", an id or hash names a trusted document and any other document runs too; with "off", an id
// is refused with a word on what to send instead.
func TestTrustedDocumentsAllowAndOff(t *testing.T) {
	f := trustedFixture(t, TrustedDocuments{Mode: TrustedAllow})
	anon := map[string]string{"apikey": f.anon}
	_, want := f.graphql(anon, apqQuery)
	if status, got := f.post("/graphql/v1", anon, `{"doc_id":"tasks"}`); status != 200 || got != want {
		t.Errorf("allow, by id: %d %s", status, got)
	}
	if status, got := f.post("/graphql/v1", anon, `{"query":"{ __typename }"}`); status != 200 || !strings.Contains(got, `"Query"`) {
		t.Errorf("allow, another document: %d %s", status, got)
	}
	if status, got := f.post("/graphql/v1", anon, apqBody("", sha256Hex(`{ __typename }`))); status != 200 || !strings.Contains(got, "PERSISTED_QUERY_NOT_FOUND") {
		t.Errorf("allow, an unknown hash goes on to Apollo's protocol: %d %s", status, got)
	}

	off := trustedFixture(t, TrustedDocuments{Mode: TrustedOff})
	if status, got := off.post("/graphql/v1", map[string]string{"apikey": off.anon}, `{"doc_id":"tasks"}`); status != 400 || got != `{"errors":[{"message":"trusted documents are off: send the document's text in query"}]}` {
		t.Errorf("off, by id: %d %s", status, got)
	}
}

// A mode that needs the table refuses to start on a database without it.
func TestTrustedDocumentsNeedTheSetup(t *testing.T) {
	f := newFixture(t, apqSchema)
	if _, err := f.admin.Exec(t.Context(), `drop function pgreflect.trusted_document(text)`); err != nil {
		t.Fatal(err)
	}
	_, err := New(context.Background(), Options{Pool: f.pool, Engine: resolve.NewEngine(resolve.Options{Pool: f.pool}), Keys: f.keys, AnonKey: f.anon, ServiceRoleKey: f.service,
		Logger: slog.New(slog.DiscardHandler), TrustedDocuments: TrustedDocuments{Mode: TrustedOnly}})
	if err == nil || !strings.Contains(err.Error(), "pgreflect setup") {
		t.Errorf("New: %v", err)
	}
}

// The manifests graphql-codegen's client preset and relay-compiler write (from npm, against this schema's
// SDL) load with `documents.Load`, and their ids run under "only" the way those clients send them: the
// client preset's hash as documentId, Relay's id as doc_id.
func TestTrustedDocumentsFromCodegenAndRelay(t *testing.T) {
	f := newFixture(t, apqSchema)
	side, err := schemadiff.LoadDatabase(t.Context(), f.admin, "anon", []string{"public"}, gqlschema.NewestVersion)
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Codegen, Relay string }
	testenv.RunNodeScript(t, "../../testdata/trusted-documents", "manifests.mjs", nil,
		map[string]string{"schema": string(sdl.Print(side.Schema)), "dir": t.TempDir()}, &out)
	ids := map[string]string{}
	for field, path := range map[string]string{"documentId": out.Codegen, "doc_id": out.Relay} {
		docs, err := documents.Load(path)
		if err != nil || len(docs) != 1 {
			t.Fatalf("%s: %v %v", path, docs, err)
		}
		if _, err := documents.Push(t.Context(), f.admin, docs); err != nil {
			t.Fatal(err)
		}
		ids[field] = docs[0].ID
	}
	f.opts.TrustedDocuments = TrustedDocuments{Mode: TrustedOnly}
	f.server, f.srv = f.start(nil)
	anon := map[string]string{"apikey": f.anon}
	for field, id := range ids {
		status, got := f.post("/graphql/v1", anon, `{"`+field+`":`+jsonString(id)+`}`)
		// Relay adds nodeId to what it selects.
		if status != 200 || !strings.Contains(got, `{"task": "alice"`) || !strings.Contains(got, `{"task": "bob"`) || strings.Contains(got, "errors") {
			t.Errorf("%s %s: %d %s", field, id, status, got)
		}
	}
	if ids["documentId"] == ids["doc_id"] {
		t.Errorf("both tools gave the id %s: the test does not tell them apart", ids["doc_id"])
	}
}

// Under "only", subscriptions (and one-off operations) over WebSocket and Server-Sent Events may run trusted
// documents alone, named by id or hash or sent as text, like requests over HTTP; what they may not run is
// refused with the errors HTTP answers.
func TestTrustedDocumentsOnlyOverSubscriptions(t *testing.T) {
	const live = `subscription Live { todoCollection { edges { node { task } } } }`
	f := trustedLiveFixture(t, live)
	anon := map[string]string{"apikey": f.anon}

	ws := f.dialWS()
	ws.init(`{"apikey": "` + f.anon + `"}`)
	ws.expect("connection_ack")
	for i, payload := range []string{
		`{"query":` + jsonString(live) + `}`,
		`{"query":"","documentId":"live"}`,
		`{"doc_id":"live"}`,
		`{"query":"",` + strings.TrimPrefix(apqBody("", sha256Hex(live)), "{"),
	} {
		id := fmt.Sprint("ok", i)
		ws.send(`{"id":"` + id + `","type":"subscribe","payload":` + payload + `}`)
		if m := ws.expect("next"); m.ID != id || !strings.Contains(string(m.Payload), "alice") {
			t.Errorf("a trusted subscription over WebSocket, %s: %+v %s", payload, m, m.Payload)
		}
		ws.send(`{"id":"` + id + `","type":"complete"}`)
	}
	for i, payload := range []string{
		`{"query":` + jsonString(untrustedLive) + `}`,
		apqBody(untrustedLive, sha256Hex(untrustedLive)),
		`{"query":"",` + strings.TrimPrefix(apqBody("", sha256Hex(untrustedLive)), "{"),
		`{"query":"","documentId":"nope"}`,
	} {
		id := fmt.Sprint("refused", i)
		ws.send(`{"id":"` + id + `","type":"subscribe","payload":` + payload + `}`)
		m := ws.expect("error")
		_, overHTTP := f.post("/graphql/v1", anon, payload)
		if m.ID != id || `{"errors":`+string(m.Payload)+`}` != overHTTP {
			t.Errorf("%s over WebSocket: %+v %s, want the errors of HTTP's %s", payload, m, m.Payload, overHTTP)
		}
	}

	for _, c := range []struct {
		body   string
		status int
	}{
		{`{"query":` + jsonString(untrustedLive) + `}`, http.StatusForbidden},
		{apqBody("", sha256Hex(untrustedLive)), http.StatusForbidden},
		{`{"documentId":"nope"}`, http.StatusBadRequest},
		{`{"query":` + jsonString(live) + `}`, http.StatusOK},
		{`{"documentId":"live"}`, http.StatusOK},
		{apqBody("", sha256Hex(live)), http.StatusOK},
	} {
		status, got := f.eventStream(anon, c.body)
		_, overHTTP := f.post("/graphql/v1", anon, c.body)
		switch {
		case status != c.status:
			t.Errorf("over Server-Sent Events %s: %d %s, want %d", c.body, status, got, c.status)
		case status == http.StatusOK && (!strings.HasPrefix(got, "event: next\ndata: ") || !strings.Contains(got, "alice")):
			t.Errorf("over Server-Sent Events %s: %q", c.body, got)
		case status != http.StatusOK && got != overHTTP:
			t.Errorf("over Server-Sent Events %s: %s, want HTTP's %s", c.body, got, overHTTP)
		}
	}
}

// untrustedLive is a subscription that trustedLiveFixture does not trust.
const untrustedLive = `subscription { todoCollection { edges { node { task } } } }`

// trustedLiveFixture serves apqSchema with subscriptions under trusted_documents = "only", with one trusted
// document, live, under the id "live".
func trustedLiveFixture(t *testing.T, live string) *fixture {
	t.Helper()
	f := newFixture(t, apqSchema+`comment on table todo is e'@graphql({"features": ["subscriptions"]})';`)
	if _, err := documents.Push(t.Context(), f.admin, []documents.Document{{ID: "live", Text: live}}); err != nil {
		t.Fatal(err)
	}
	f.opts.TrustedDocuments = TrustedDocuments{Mode: TrustedOnly}
	f.server, f.srv = f.start(nil)
	return f
}

// eventStream POSTs body to /graphql/v1 asking for an event stream and returns the status and the first event
// (or the whole body of a refusal).
func (f *fixture) eventStream(headers map[string]string, body string) (int, string) {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/graphql/v1", strings.NewReader(body))
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := testClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	r := bufio.NewReader(resp.Body)
	name, _ := r.ReadString('\n')
	data, _ := r.ReadString('\n')
	return resp.StatusCode, name + data
}
