package obs

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
)

// A panic in a handler becomes a 500 with the request id, logged with the panic under that id, and the request
// still has its line.
func TestPanicIsLoggedWithItsID(t *testing.T) {
	var logs bytes.Buffer
	h := Handler(slog.New(slog.NewJSONHandler(&logs, nil)), nil, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("boom in a handler")
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/auth/v1/user")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	id := resp.Header.Get(RequestIDHeader)
	if resp.StatusCode != 500 || id == "" || string(body) != `{"message":"Internal server error (request id `+id+`)"}` {
		t.Fatalf("%d %s (id %q)", resp.StatusCode, body, id)
	}
	var sawPanic, sawLine bool
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if m["request_id"] != id {
			continue
		}
		sawPanic = sawPanic || m["msg"] == "panic" && m["panic"] == "boom in a handler"
		sawLine = sawLine || m["msg"] == "request" && m["status"] == float64(500)
	}
	if !sawPanic || !sawLine {
		t.Errorf("panic logged %v, request line %v:\n%s", sawPanic, sawLine, logs.String())
	}
}

func TestNewRequestID(t *testing.T) {
	if got := NewRequestID("abc-DEF_1.2:3"); got != "abc-DEF_1.2:3" {
		t.Errorf("sane id replaced: %s", got)
	}
	for _, bad := range []string{"", "a b", "x\ny", `"quoted"`, strings.Repeat("a", 129), "é"} {
		if got := NewRequestID(bad); got == bad || len(got) != 36 {
			t.Errorf("NewRequestID(%q) = %q", bad, got)
		}
	}
	if first, second := NewRequestID(""), NewRequestID(""); first == second {
		t.Error("two new ids are the same")
	}
	// New ids are version 4 UUIDs, unique across goroutines.
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 25000 {
				id := NewRequestID("")
				u, err := uuid.Parse(id)
				mu.Lock()
				if err != nil || u.Version() != 4 || u.Variant() != uuid.RFC4122 || seen[id] {
					t.Errorf("id %s: %v, version %d, variant %s, seen before %v", id, err, u.Version(), u.Variant(), seen[id])
				}
				seen[id] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

func TestRouteIsBounded(t *testing.T) {
	for path, want := range map[string]string{"/graphql/v1": "/graphql/v1", "/auth/v1/token": "/auth/v1/token",
		"/auth/v1/xyz-123": "/auth/v1/other", "/v1/projects/x/config/auth": "/v1", "/console/a.js": "/console",
		"/random/123": "other", "/graphql/v1/": "other"} {
		if got := Route(path); got != want {
			t.Errorf("Route(%q) = %s, want %s", path, got, want)
		}
	}
}

// Each request is counted under its own route, operation and status, however many requests share them (the
// series are looked up once and kept).
func TestRequestsCountedPerSeries(t *testing.T) {
	m := NewMetrics()
	status := http.StatusOK
	h := Handler(slog.New(slog.NewTextHandler(io.Discard, nil)), m, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		FromContext(r.Context()).Operation = "query"
		w.WriteHeader(status)
	}))
	for _, s := range []int{200, 200, 200, 400} {
		status = s
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/graphql/v1", nil))
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, want := range []string{
		`pgreflect_http_requests_total{code="200",operation="query",route="/graphql/v1"} 3`,
		`pgreflect_http_requests_total{code="400",operation="query",route="/graphql/v1"} 1`,
		`pgreflect_http_request_duration_seconds_count{operation="query",route="/graphql/v1"} 4`,
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// Under a handler whose level is above info (--log-level warn), a request gets no line, and what the request's
// handler logs at warn or above still gets one, with the request id.
func TestRequestLineFollowsTheLevel(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelWarn} {
		var out bytes.Buffer
		logger := slog.New(NewTextHandler(&out, level))
		h := Handler(logger, NewMetrics(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			Logger(r.Context(), logger).WarnContext(r.Context(), "provider unreachable")
			w.WriteHeader(http.StatusBadGateway)
		}))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/auth/v1/authorize", nil))
		id := rec.Header().Get(RequestIDHeader)
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if !strings.Contains(lines[0], "level=WARN msg=\"provider unreachable\" request_id="+id) {
			t.Errorf("level %s: the warning %q", level, lines[0])
		}
		if got, want := len(lines), map[slog.Level]int{slog.LevelInfo: 2, slog.LevelWarn: 1}[level]; got != want ||
			(level == slog.LevelInfo && !strings.Contains(lines[1], "msg=request method=GET path=/auth/v1/authorize status=502")) {
			t.Errorf("level %s: %d lines, want %d:\n%s", level, got, want, out.String())
		}
	}
}
