package httpapi

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/golang-jwt/jwt/v5"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/internal/tracing"
)

// Spans of a query (under the client's traceparent), a mutation and a refused request reach an OTLP
// receiver with their parent-child structure and attributes; no key or token is in any of them; the request
// log names the trace.
func TestTracesToOTLP(t *testing.T) {
	receiver := testenv.NewOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50") // milliseconds: spans arrive while the test waits
	tp, shutdown, err := tracing.Setup(t.Context(), "test")
	if err != nil {
		t.Fatal(err)
	}
	// appName shows what Postgres sees of the request: its application_name.
	f := newFixture(t, apqSchema+`create function app_name() returns text language sql stable as $$ select current_setting('application_name') $$;
		comment on table todo is e'@graphql({"features": ["subscriptions"]})';`)
	f.opts.TracerProvider = tp
	f.server, f.srv = f.start(nil)

	const clientTrace, clientSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	status, answer := f.post("/graphql/v1", map[string]string{"apikey": f.anon, "traceparent": "00-" + clientTrace + "-" + clientSpan + "-01"},
		`{"query":"query Tasks { appName todoCollection { edges { node { task } } } }","operationName":"Tasks"}`)
	if status != 200 {
		t.Fatalf("query: %d %s", status, answer)
	}
	if status, _ := f.post("/graphql/v1", map[string]string{"apikey": f.anon}, `{"query":"query Tasks { appName todoCollection { edges { node { task } } } }","operationName":"Tasks"}`); status != 200 {
		t.Fatalf("query again: %d", status)
	}
	user := f.userToken(jwt.MapClaims{"sub": "11111111-1111-1111-1111-111111111111", "role": "authenticated", "exp": time.Now().Add(time.Hour).Unix()})
	if status, body := f.post("/graphql/v1", map[string]string{"apikey": f.anon, "Authorization": "Bearer " + user},
		`{"query":"mutation { insertIntoTodoCollection(objects: [{userId: \"11111111-1111-1111-1111-111111111111\", task: \"t\"}]) { affectedCount } }"}`); status != 200 || !strings.Contains(body, "affectedCount") {
		t.Fatalf("mutation: %d %s", status, body)
	}
	if status, _ := f.post("/graphql/v1", map[string]string{"apikey": "not-a-key-" + f.service[:20]}, `{"query":"{ __typename }"}`); status != 401 {
		t.Fatalf("refused: %d", status)
	}
	// A subscription over Server-Sent Events: its first answer comes from a refresh of the live query.
	q := url.Values{"query": {`subscription Live { todoCollection { edges { node { task } } } }`}, "operationName": {"Live"}}
	sse, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, f.srv.URL+"/graphql/v1?"+q.Encode(), nil)
	sse.Header.Set("Accept", "text/event-stream")
	sse.Header.Set("apikey", f.anon)
	stream, err := http.DefaultClient.Do(sse)
	if err != nil {
		t.Fatal(err)
	}
	if event, err := bufio.NewReader(stream.Body).ReadString('\n'); err != nil || event != "event: next\n" {
		t.Fatalf("subscription: %q %v", event, err)
	}
	stream.Body.Close()
	// A WebSocket's credentials come in connection_init: their checks are a span of the upgrade's request,
	// which ends with the connection.
	ws := f.dialWS()
	ws.init(`{"apikey": "` + f.anon + `"}`)
	ws.expect("connection_ack")
	ws.conn.Close(websocket.StatusNormalClosure, "")
	// The refresh's span ends after its answer is on its way, the socket's when the server has seen the close:
	// wait for them.
	testenv.Eventually(t, 10*time.Second, func() string {
		var refreshed, socket bool
		for _, s := range receiver.Spans() {
			refreshed = refreshed || s.Name == "live.refresh"
			socket = socket || s.Name == "GET /graphql/v1" && testenv.SpanAttrs(s)["http.response.status_code"] == "101"
		}
		if !refreshed || !socket {
			return fmt.Sprintf("the subscription's refresh span (%v) and the WebSocket's (%v)", refreshed, socket)
		}
		return ""
	})
	if err := shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}

	spans := receiver.Spans()
	byID := map[string]*tracepb.Span{}
	var requests []*tracepb.Span
	var refresh, socket *tracepb.Span
	for _, s := range spans {
		byID[hex.EncodeToString(s.SpanId)] = s
		if s.Name == "GET /graphql/v1" && testenv.SpanAttrs(s)["http.response.status_code"] == "101" {
			socket = s
		}
		if s.Kind == tracepb.Span_SPAN_KIND_SERVER && s.Name == "POST /graphql/v1" {
			requests = append(requests, s)
		}
		if s.Name == "live.refresh" {
			refresh = s
		}
		for k, v := range testenv.SpanAttrs(s) {
			for _, secret := range []string{f.anon, f.service, user, secret} {
				if strings.Contains(v, secret) || strings.Contains(v, secret[:24]) {
					t.Errorf("span %s attribute %s carries a key or token: %q", s.Name, k, v)
				}
			}
		}
	}
	if len(requests) != 4 {
		t.Fatalf("%d request spans of %d spans, want 4", len(requests), len(spans))
	}
	children := func(parent *tracepb.Span) map[string]*tracepb.Span {
		out := map[string]*tracepb.Span{}
		for _, s := range spans {
			if string(s.ParentSpanId) == string(parent.SpanId) {
				out[s.Name] = s
			}
		}
		return out
	}
	query, again, mutation, refused := requests[0], requests[1], requests[2], requests[3]
	if hex.EncodeToString(query.TraceId) != clientTrace || hex.EncodeToString(query.ParentSpanId) != clientSpan {
		t.Errorf("the query's span is not the client's child: trace %x parent %x", query.TraceId, query.ParentSpanId)
	}
	// compile is a child of the request's round trip, and says whether the compile cache had the request.
	compileOf := func(request *tracepb.Span) *tracepb.Span {
		if e := children(request)["graphql.execute"]; e != nil {
			return children(e)["graphql.compile"]
		}
		return nil
	}
	if c := compileOf(query); c == nil || testenv.SpanAttrs(c)["pgreflect.compile_cached"] != "false" {
		t.Errorf("the first query was compiled, not cached: %v", c)
	}
	if c := compileOf(again); c == nil || testenv.SpanAttrs(c)["pgreflect.compile_cached"] != "true" {
		t.Errorf("the same query again came from the compile cache: %v", c)
	}
	if hex.EncodeToString(mutation.TraceId) == clientTrace {
		t.Error("the mutation, sent without traceparent, joined the query's trace")
	}
	for _, c := range []struct {
		span          *tracepb.Span
		role, op      string
		status        string
		wantChildren  []string
		executeOpName string
	}{
		{query, "anon", "query", "200", []string{"authenticate", "graphql.execute"}, "Tasks"},
		{mutation, "authenticated", "mutation", "200", []string{"authenticate", "graphql.execute"}, ""},
		{refused, "", "", "401", []string{"authenticate"}, ""},
	} {
		a := testenv.SpanAttrs(c.span)
		if c.span.Name != "POST /graphql/v1" || a["http.response.status_code"] != c.status || a["pgreflect.role"] != c.role ||
			a["graphql.operation.type"] != c.op || a["pgreflect.request_id"] == "" {
			t.Errorf("request span %s %v", c.span.Name, a)
		}
		kids := children(c.span)
		if len(kids) != len(c.wantChildren) {
			t.Errorf("%s: children %v, want %v", c.status, keys(kids), c.wantChildren)
		}
		for _, name := range c.wantChildren {
			if kids[name] == nil {
				t.Errorf("%s: no child %s", c.status, name)
			}
		}
		if e := kids["graphql.execute"]; e != nil && c.op == "query" {
			// The trace reaches Postgres: the transaction's application_name names the trace and this span.
			if want := `"appName": "pgreflect ` + clientTrace + "-" + hex.EncodeToString(e.SpanId) + `"`; !strings.Contains(answer, want) {
				t.Errorf("the query's answer %s lacks %s", answer, want)
			}
		}
		if e := kids["graphql.execute"]; e != nil {
			if ea := testenv.SpanAttrs(e); ea["db.query.text"] != "" {
				t.Errorf("statement text without TraceStatements: %q", ea["db.query.text"])
			}
			if ea := testenv.SpanAttrs(e); ea["db.system.name"] != "postgresql" || ea["graphql.operation.type"] != c.op || ea["graphql.operation.name"] != c.executeOpName {
				t.Errorf("execute span %v", ea)
			}
		}
	}
	if a := children(refused)["authenticate"]; a == nil || a.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || testenv.SpanAttrs(a)["pgreflect.refused_status"] != "401" {
		t.Errorf("the refused request's authenticate span: %v", a)
	}
	if refresh == nil {
		t.Fatal("no span of the subscription's refresh")
	}
	// One subscriber, answered by one evaluation of its claims, which pushed its first answer.
	if a := testenv.SpanAttrs(refresh); len(refresh.ParentSpanId) != 0 || a["graphql.operation.name"] != "Live" ||
		a["pgreflect.live.subscribers"] != "1" || a["pgreflect.live.evaluations"] != "1" || a["pgreflect.live.pushed"] != "1" {
		t.Errorf("the subscription's refresh: %v", a)
	}
	if c := children(refresh)["graphql.compile"]; c == nil || testenv.SpanAttrs(c)["pgreflect.compile_cached"] != "false" {
		t.Errorf("the subscription's first refresh compiled its live query: %v", c)
	}
	if a := children(socket)["authenticate"]; a == nil || testenv.SpanAttrs(a)["pgreflect.role"] != "anon" {
		t.Errorf("the WebSocket's connection_init checks: %v", a)
	}
	if !strings.Contains(f.logs.String(), `"trace_id":"`+clientTrace+`"`) {
		t.Errorf("the request log does not name the trace:\n%s", f.logs.String())
	}
}

func keys(m map[string]*tracepb.Span) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// BenchmarkTracingOff is what tracing adds to a request when no collector is configured: no middleware, and
// the spans of authenticate and graphql.execute that startSpan does not start, against the same handler
// without them.
func BenchmarkTracingOff(b *testing.B) {
	s := &Server{} // no TracerProvider: off
	off := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, span := s.startSpan(r.Context(), "authenticate")
		span.End()
		_, span = s.startExecute(r.Context(), "query", "", false)
		span.End()
	})
	for name, h := range map[string]http.Handler{"none": http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), "off": off} {
		b.Run(name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodPost, "/graphql/v1", nil)
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, req)
			}
		})
	}
}

// Untraced, a request leaves the connection's application_name as it is.
func TestUntracedRequestKeepsApplicationName(t *testing.T) {
	f := newFixture(t, `create function app_name() returns text language sql stable as $$ select current_setting('application_name') $$;`)
	sep := "?"
	if strings.Contains(f.dbURL, "?") {
		sep = "&"
	}
	f.pool = testenv.LoginPool(t, f.dbURL+sep+"application_name=pool-own-name")
	f.server, f.srv = f.start(nil)
	_, answer := f.graphql(map[string]string{"apikey": f.anon, "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, `{ app_name }`)
	if want := `{"data": {"app_name": "pool-own-name"}}`; answer != want {
		t.Errorf("%s, want %s", answer, want)
	}
}

// With TraceStatements the execute span has the SQL text, and never a variable's value.
func TestTracedStatementText(t *testing.T) {
	receiver := testenv.NewOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.URL)
	tp, shutdown, err := tracing.Setup(t.Context(), "test")
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, apqSchema)
	f.opts.TracerProvider, f.opts.TraceStatements = tp, true
	f.server, f.srv = f.start(nil)
	status, body := f.post("/graphql/v1", map[string]string{"apikey": f.anon},
		`{"query":"query($t: String) { todoCollection(filter: {task: {eq: $t}}) { edges { node { id } } } }","variables":{"t":"value-never-traced"}}`)
	if status != 200 || !strings.Contains(body, `"edges": []`) {
		t.Fatalf("%d %s", status, body)
	}
	if err := shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	var text string
	for _, s := range receiver.Spans() {
		for k, v := range testenv.SpanAttrs(s) {
			if strings.Contains(v, "value-never-traced") {
				t.Errorf("span %s attribute %s has the variable's value", s.Name, k)
			}
		}
		if s.Name == "graphql.execute" {
			text = testenv.SpanAttrs(s)["db.query.text"]
		}
	}
	if !strings.Contains(text, `"todo"`) || !strings.Contains(text, "$1") {
		t.Errorf("db.query.text %q: want the statement on table todo with its parameter", text)
	}
}

// Tracing costs no statement: the trace id reaches application_name as a bound parameter of the session's one
// statement, so a request of another trace reuses the statements the previous one prepared.
func TestTracedRequestsReusePreparedStatements(t *testing.T) {
	f := newFixture(t, apqSchema+`create function app_name() returns text language sql stable as $$ select current_setting('application_name') $$;`)
	f.pool = testenv.LoginPoolOf(t, f.dbURL, 1) // one connection: every request's statements are on it
	tp := sdktrace.NewTracerProvider()          // samples every request (no exporter: nothing to send)
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	f.opts.TracerProvider = tp
	f.server, f.srv = f.start(nil)
	prepared := func() int {
		conn, err := f.pool.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Release()
		var n int
		if err := conn.QueryRow(t.Context(), `select count(*) from pg_prepared_statements where name like 'pgreflect%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var counts []int
	for _, traceID := range []string{"4bf92f3577b34da6a3ce929d0e0e4736", "0af7651916cd43dd8448eb211c80319c"} {
		_, answer := f.graphql(map[string]string{"apikey": f.anon, "traceparent": "00-" + traceID + "-00f067aa0ba902b7-01"},
			`{ appName todoCollection { edges { node { task } } } }`)
		if !strings.Contains(answer, `"appName": "pgreflect `+traceID+"-") || !strings.Contains(answer, "alice") {
			t.Fatalf("trace %s: %s", traceID, answer)
		}
		counts = append(counts, prepared())
	}
	if counts[0] == 0 || counts[1] != counts[0] {
		t.Errorf("prepared statements after the first trace's request %d, after the second's %d: want the same, not 0", counts[0], counts[1])
	}
}

// With tracing off, a span an embedding program's handler started around the server is left to that handler:
// the server neither ends it nor takes it for its own spans.
func TestUntracedServerLeavesAnOuterSpanAlone(t *testing.T) {
	f := newFixture(t, "")
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tracer := tp.Tracer("embedder")
	req := httptest.NewRequest(http.MethodPost, "/graphql/v1", strings.NewReader(`{"query":"{ __typename }"}`))
	req.Header.Set("apikey", f.anon)
	req.Header.Set("Content-Type", "application/json")
	ctx, outer := tracer.Start(req.Context(), "embedder's request")
	w := httptest.NewRecorder()
	f.server.ServeHTTP(w, req.WithContext(ctx))
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"__typename": "Query"`) {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	if !outer.IsRecording() {
		t.Error("the server ended the embedder's span")
	}
	outer.End()
}
