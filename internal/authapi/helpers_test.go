package authapi

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/config"
	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/testidp"
)

const (
	tSecret    = "unit-test-jwt-secret-with-at-least-32-characters"
	tRef       = "zyxwvutsrqponmlkjihg"
	tMgmtToken = "sbp_00112233445566778899aabbccddeeff00112233"
	tWebClient = "web-client.apps.example.com"
	tIOSClient = "ios-client.apps.example.com"
	tIDPSecret = "idp-client-secret"
	tSiteURL   = "https://site.example.com"
	tAppURL    = "https://app.example.com/after-login"
)

// instance is one server instance: a Service behind its own HTTP server, as in production (/auth/v1 and /v1).
type instance struct {
	svc    *Service
	srv    *httptest.Server
	apiURL string
}

// world is a database shared by one or more instances, with the test provider configured as "google".
type world struct {
	t       *testing.T
	pool    *pgxpool.Pool
	keys    *auth.Keys
	idp     *testidp.Server
	cfg     config.Auth
	anon    string
	service string
	inst    *instance
	logs    *testenv.SyncBuffer // what the instances log (JSON lines)
}

func newWorld(t *testing.T, change func(*config.Auth)) *world {
	t.Helper()
	return newWorldAs(t, change, nil)
}

// newWorldAs is newWorld whose instances connect with the URL that prepare returns for the superuser URL,
// having readied the database for it before the setup ran (nil: the superuser's).
func newWorldAs(t *testing.T, change func(*config.Auth), prepare func(conn *pgx.Conn, dbURL string) string) *world {
	t.Helper()
	ctx := t.Context()
	var poolURL string
	testenv.SetupDBPrepared(t, func(conn *pgx.Conn, dbURL string) {
		poolURL = dbURL
		if prepare != nil {
			poolURL = prepare(conn, dbURL)
		}
	}, "")
	pool, err := pgxpool.New(ctx, poolURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	keys, err := auth.NewKeys(tSecret)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, pool: pool, keys: keys, logs: &testenv.SyncBuffer{}}
	w.anon, _ = keys.SignAPIKey("anon", tRef)
	w.service, _ = keys.SignAPIKey("service_role", tRef)
	// The provider must know the callback URL, which needs the first instance's address: reserve it first.
	first := httptest.NewUnstartedServer(nil)
	callback := "http://" + first.Listener.Addr().String() + "/auth/v1/callback"
	w.idp, err = testidp.New(testidp.Options{ClientID: tWebClient, ClientSecret: tIDPSecret, RedirectURIs: []string{callback}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.idp.Close)
	w.cfg = config.Default().Auth
	w.cfg.SiteURL = tSiteURL
	w.cfg.AdditionalRedirectURLs = []string{"https://app.example.com/**", "myapp://**"}
	w.cfg.External = map[string]config.Provider{"google": {
		Enabled: true, ClientID: tWebClient + "," + tIOSClient, Secret: tIDPSecret, URL: w.idp.URL(),
	}}
	if change != nil {
		change(&w.cfg)
	}
	w.inst = w.start(first)
	return w
}

// start runs a Service on srv (a new server when nil).
func (w *world) start(srv *httptest.Server) *instance {
	w.t.Helper()
	if srv == nil {
		srv = httptest.NewUnstartedServer(nil)
	}
	apiURL := "http://" + srv.Listener.Addr().String()
	svc, err := New(w.t.Context(), Options{
		Pool: w.pool, Keys: w.keys, Config: w.cfg, APIURL: apiURL, ProjectRef: tRef,
		ManagementToken: tMgmtToken, AnonKey: w.anon, ServiceRoleKey: w.service,
		Logger: slog.New(slog.NewJSONHandler(w.logs, nil)),
	})
	if err != nil {
		w.t.Fatalf("New: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/auth/v1/", http.StripPrefix("/auth/v1", svc.AuthHandler()))
	mux.Handle("/v1/", svc.ManagementHandler())
	srv.Config.Handler = mux
	srv.Start()
	w.t.Cleanup(srv.Close)
	w.t.Cleanup(svc.Close)
	return &instance{svc: svc, srv: srv, apiURL: apiURL}
}

var noFollow = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout:       15 * time.Second,
}

// response is a decoded HTTP answer.
type response struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

func (r response) str(key string) string { s, _ := r.body[key].(string); return s }

func (w *world) do(method, rawURL string, body any, header map[string]string) response {
	w.t.Helper()
	var rd io.Reader
	if body != nil {
		if s, ok := body.(string); ok {
			rd = strings.NewReader(s)
		} else {
			b, err := json.Marshal(body)
			if err != nil {
				w.t.Fatal(err)
			}
			rd = bytes.NewReader(b)
		}
	}
	req, err := http.NewRequestWithContext(w.t.Context(), method, rawURL, rd)
	if err != nil {
		w.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json;charset=UTF-8")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := noFollow.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := response{status: resp.StatusCode, header: resp.Header, raw: raw}
	if len(raw) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &out.body); err != nil {
			w.t.Fatalf("%s %s: body not a JSON object: %s", method, rawURL, raw)
		}
	}
	return out
}

// api calls an /auth/v1 route the way supabase-js does (apikey, 2024-01-01 API version).
func (w *world) api(method, path string, body any, bearer string) response {
	w.t.Helper()
	h := map[string]string{"apikey": w.anon, "X-Supabase-Api-Version": "2024-01-01", "Authorization": "Bearer " + w.anon}
	if bearer != "" {
		h["Authorization"] = "Bearer " + bearer
	}
	return w.do(method, w.inst.apiURL+"/auth/v1"+path, body, h)
}

// location follows one browser hop (no apikey) and returns the status and the Location.
func (w *world) location(rawURL string) (int, *url.URL) {
	w.t.Helper()
	r := w.do(http.MethodGet, rawURL, nil, nil)
	loc := r.header.Get("Location")
	if loc == "" {
		return r.status, nil
	}
	u, err := url.Parse(loc)
	if err != nil {
		w.t.Fatalf("bad Location %q", loc)
	}
	base, _ := url.Parse(rawURL)
	return r.status, base.ResolveReference(u)
}

// flow runs /authorize with q, the provider's consent, and /callback; it returns the provider URL and the
// final redirect to the app.
func (w *world) flow(q url.Values) (providerURL, final *url.URL) {
	w.t.Helper()
	status, providerURL := w.location(w.inst.apiURL + "/auth/v1/authorize?" + q.Encode())
	if status != http.StatusFound || providerURL == nil || !strings.HasPrefix(providerURL.String(), w.idp.URL()+"/authorize?") {
		w.t.Fatalf("authorize: %d %v", status, providerURL)
	}
	status, cb := w.location(providerURL.String())
	if status != http.StatusFound || cb == nil || cb.Path != "/auth/v1/callback" {
		w.t.Fatalf("provider consent: %d %v", status, cb)
	}
	status, final = w.location(cb.String())
	if status != http.StatusFound || final == nil {
		w.t.Fatalf("callback: %d %v", status, final)
	}
	return providerURL, final
}

type pkce struct{ verifier, challenge string }

func newPKCE() pkce {
	b := make([]byte, 56)
	_, _ = rand.Read(b)
	v := hex.EncodeToString(b) // 112 hex characters, like supabase-js
	sum := sha256.Sum256([]byte(v))
	return pkce{v, base64.RawURLEncoding.EncodeToString(sum[:])}
}

// idTokenSignIn signs a provider user in through the ID-token grant and returns the session.
func (w *world) idTokenSignIn(u testidp.User) response {
	w.t.Helper()
	r := w.api(http.MethodPost, "/token?grant_type=id_token",
		map[string]any{"provider": "google", "id_token": w.idp.MintIDToken(w.idp.Claims(u), testidp.MintOptions{})}, "")
	if r.status != http.StatusOK {
		w.t.Fatalf("id_token sign-in: %d %s", r.status, r.raw)
	}
	return r
}

func (w *world) count(query string, args ...any) int {
	w.t.Helper()
	var n int
	if err := w.pool.QueryRow(w.t.Context(), query, args...).Scan(&n); err != nil {
		w.t.Fatalf("%s: %v", query, err)
	}
	return n
}

// wantError checks the 2024-01-01 error shape.
func wantError(t *testing.T, what string, r response, status int, code, msg string) {
	t.Helper()
	if r.status != status || r.str("code") != code || msg != "" && r.str("message") != msg {
		t.Errorf("%s: got %d %s, want %d code=%s message=%q", what, r.status, r.raw, status, code, msg)
	}
}

// wantOAuthError checks the {"error","error_description"} shape.
func wantOAuthError(t *testing.T, what string, r response, errStr, desc string) {
	t.Helper()
	if r.status != http.StatusBadRequest || r.str("error") != errStr || r.str("error_description") != desc || r.body["code"] != nil {
		t.Errorf("%s: got %d %s, want 400 error=%q error_description=%q", what, r.status, r.raw, errStr, desc)
	}
}
