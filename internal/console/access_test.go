package console_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/console"
	"github.com/pgreflect/pgreflect/internal/stacktest"
)

// request is one request as the server sees it: the peer's address, the Host header, and headers.
func request(h http.Handler, method, path, remote, host string, header map[string]string, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.RemoteAddr = remote
	req.Host = host
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestOnlyLoopbackOrTheManagementTokenGetIn(t *testing.T) {
	anon, service := testKeys(t)
	keys, err := auth.NewKeys(stacktest.JWTSecret)
	if err != nil {
		t.Fatal(err)
	}
	// The Schema pages' JSON stands in as a handler that answers: what is tested is the console's guard before it.
	schemaPages := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(`{"page":"` + r.URL.Path + `"}`)) })
	h := console.Handler(console.Options{APIURL: "http://api.internal.test:54321", AnonKey: anon, ServiceRoleKey: service,
		ManagementToken: mgmtToken, ProjectRef: stacktest.ProjectRef, MintToken: console.Minter(keys), Schema: schemaPages})
	guarded := []string{"/console/", "/console/index.html", "/console/api/credentials", "/console/api/token?role=service_role", "/console/console.js",
		"/console/auth-pages.js", "/console/graphiql.html", "/console/vendor/graphiql.min.js", "/console/schema-pages.js",
		"/console/api/schema/access", "/console/api/schema/graphql?role=anon", "/console/api/schema/lint", "/console/api/schema/drift"}
	bearer := map[string]string{"Authorization": "Bearer " + mgmtToken}

	for _, c := range []struct {
		what, remote, host string
		header             map[string]string
		in                 bool
	}{
		{"loopback naming 127.0.0.1", "127.0.0.1:5000", "127.0.0.1:54321", nil, true},
		{"loopback naming localhost", "127.0.0.1:5000", "localhost:54321", nil, true},
		{"IPv6 loopback", "[::1]:5000", "[::1]:54321", nil, true},
		{"loopback naming the API host", "127.0.0.1:5000", "api.internal.test:54321", nil, true},
		{"another machine", "192.0.2.10:5000", "api.internal.test:54321", nil, false},
		{"another machine naming localhost", "192.0.2.10:5000", "localhost:54321", nil, false},
		{"DNS rebinding: loopback naming another site", "127.0.0.1:5000", "evil.example:54321", nil, false},
		{"a proxy on this machine (X-Forwarded-For)", "127.0.0.1:5000", "127.0.0.1:54321", map[string]string{"X-Forwarded-For": "198.51.100.7"}, false},
		{"a proxy on this machine (Forwarded)", "127.0.0.1:5000", "127.0.0.1:54321", map[string]string{"Forwarded": "for=198.51.100.7"}, false},
		{"a proxy on this machine (X-Real-IP)", "127.0.0.1:5000", "localhost", map[string]string{"X-Real-IP": "198.51.100.7"}, false},
		{"Cloudflare (CF-Connecting-IP)", "127.0.0.1:5000", "localhost", map[string]string{"CF-Connecting-IP": "198.51.100.7"}, false},
		{"a CDN (True-Client-IP)", "127.0.0.1:5000", "localhost", map[string]string{"True-Client-IP": "198.51.100.7"}, false},
		{"an ingress (X-Original-Forwarded-For)", "127.0.0.1:5000", "localhost", map[string]string{"X-Original-Forwarded-For": "198.51.100.7"}, false},
		{"a proxy that sends an empty X-Forwarded-For", "127.0.0.1:5000", "localhost", map[string]string{"X-Forwarded-For": ""}, false},
		{"a proxy that says only Via", "127.0.0.1:5000", "localhost", map[string]string{"Via": "1.1 proxy"}, false},
		{"a TLS proxy (X-Forwarded-Proto)", "127.0.0.1:5000", "localhost", map[string]string{"X-Forwarded-Proto": "https"}, false},
		{"another machine with the management token", "192.0.2.10:5000", "api.internal.test:54321", bearer, true},
		{"through a proxy with the management token", "127.0.0.1:5000", "api.internal.test", map[string]string{"Authorization": "Bearer " + mgmtToken, "X-Forwarded-For": "198.51.100.7"}, true},
		{"another machine with a wrong token", "192.0.2.10:5000", "api.internal.test:54321", map[string]string{"Authorization": "Bearer " + mgmtToken + "0"}, false},
		{"another machine with the service_role key", "192.0.2.10:5000", "api.internal.test:54321", map[string]string{"Authorization": "Bearer " + service}, false},
		{"another machine with the token as a cookie", "192.0.2.10:5000", "api.internal.test:54321", map[string]string{"Cookie": "pgreflect-console=" + mgmtToken}, false},
	} {
		for _, p := range guarded {
			rec := request(h, http.MethodGet, p, c.remote, c.host, c.header, "")
			if got := rec.Code == http.StatusOK; got != c.in {
				t.Errorf("%s: GET %s: status %d, want in=%v", c.what, p, rec.Code, c.in)
			}
			if !c.in {
				body := rec.Body.String()
				if strings.Contains(body, anon) || strings.Contains(body, service) || strings.Contains(body, stacktest.ProjectRef) {
					t.Errorf("%s: GET %s: the refusal carries project data", c.what, p)
				}
				if !strings.Contains(body, "Management token") || rec.Header().Get("Cache-Control") != "no-store" {
					t.Errorf("%s: GET %s: the refusal is not the login form", c.what, p)
				}
			}
		}
	}
	// The Schema pages are read-only, and get the path after api/schema/.
	if rec := request(h, http.MethodGet, "/console/api/schema/lint", "127.0.0.1:5000", "localhost", nil, ""); rec.Body.String() != `{"page":"/lint"}` {
		t.Errorf("api/schema/lint reached the schema pages as %s", rec.Body)
	}
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		if rec := request(h, method, "/console/api/schema/access", "127.0.0.1:5000", "localhost", nil, "{}"); rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s api/schema/access: %d", method, rec.Code)
		}
	}
	without := console.Handler(console.Options{AnonKey: anon})
	if rec := request(without, http.MethodGet, "/console/api/schema/access", "127.0.0.1:5000", "localhost", nil, ""); rec.Code != http.StatusNotFound ||
		!strings.Contains(rec.Body.String(), "no Schema pages") {
		t.Errorf("api/schema/access without Schema: %d %s", rec.Code, rec.Body)
	}
	// The login page's stylesheet is the one file anyone may load.
	if rec := request(h, http.MethodGet, "/console/console.css", "192.0.2.10:5000", "api.internal.test", nil, ""); rec.Code != http.StatusOK {
		t.Errorf("console.css from another machine: %d", rec.Code)
	}
}

func TestLoginFormSetsASessionCookie(t *testing.T) {
	anon, service := testKeys(t)
	h := console.Handler(console.Options{AnonKey: anon, ServiceRoleKey: service, ManagementToken: mgmtToken})
	const remote, host = "192.0.2.10:5000", "api.example.test"
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}

	rec := request(h, http.MethodPost, "/console/login", remote, host, form, url.Values{"token": {"sbp_wrong"}}.Encode())
	if rec.Code != http.StatusUnauthorized || rec.Header().Get("Set-Cookie") != "" ||
		!strings.Contains(rec.Body.String(), "not the project&#39;s management token") {
		t.Fatalf("wrong token: %d %q\n%s", rec.Code, rec.Header().Get("Set-Cookie"), rec.Body)
	}
	rec = request(h, http.MethodPost, "/console/login", remote, host, form, url.Values{"token": {mgmtToken}}.Encode())
	cookies := rec.Result().Cookies()
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/console/" || len(cookies) != 1 {
		t.Fatalf("right token: %d, Location %q, cookies %v", rec.Code, rec.Header().Get("Location"), cookies)
	}
	c := cookies[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/console/" || c.Value == mgmtToken ||
		strings.Contains(c.Value, mgmtToken) {
		t.Errorf("session cookie %+v", c)
	}
	with := map[string]string{"Cookie": c.Name + "=" + c.Value}
	rec = request(h, http.MethodGet, "/console/api/credentials", remote, host, with, "")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), service) {
		t.Errorf("with the session cookie: %d", rec.Code)
	}
	forged := map[string]string{"Cookie": c.Name + "=" + strings.Repeat("0", len(c.Value))}
	if rec := request(h, http.MethodGet, "/console/", remote, host, forged, ""); rec.Code != http.StatusUnauthorized {
		t.Errorf("forged cookie: %d", rec.Code)
	}
	// Behind a TLS proxy the cookie is Secure.
	form["X-Forwarded-Proto"] = "https"
	rec = request(h, http.MethodPost, "/console/login", remote, host, form, url.Values{"token": {mgmtToken}}.Encode())
	if cs := rec.Result().Cookies(); len(cs) != 1 || !cs[0].Secure {
		t.Errorf("behind TLS: cookies %v", cs)
	}
	// The session is tied to the token: another server's token opens nothing here.
	other := console.Handler(console.Options{AnonKey: anon, ManagementToken: mgmtToken + "x"})
	if rec := request(other, http.MethodGet, "/console/", remote, host, with, ""); rec.Code != http.StatusUnauthorized {
		t.Errorf("a cookie of another token: %d", rec.Code)
	}
}

// Without a management token only this machine gets in: no token, empty or not, opens the console.
func TestWithoutAManagementTokenOnlyLoopback(t *testing.T) {
	anon, _ := testKeys(t)
	h := console.Handler(console.Options{AnonKey: anon})
	for _, header := range []map[string]string{nil, {"Authorization": "Bearer "}, {"Authorization": "Bearer x"}} {
		rec := request(h, http.MethodGet, "/console/", "192.0.2.10:5000", "api.example.test", header, "")
		if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "answers only on its own machine") {
			t.Errorf("%v: status %d\n%s", header, rec.Code, rec.Body)
		}
	}
	rec := request(h, http.MethodPost, "/console/login", "192.0.2.10:5000", "api.example.test",
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, "token=")
	if rec.Code != http.StatusUnauthorized || rec.Header().Get("Set-Cookie") != "" {
		t.Errorf("empty token login: %d %q", rec.Code, rec.Header().Get("Set-Cookie"))
	}
}

// login logs in from remote with the management token and returns the session cookie's "name=value".
func login(t *testing.T, h http.Handler, remote string) string {
	t.Helper()
	rec := request(h, http.MethodPost, "/console/login", remote, "api.example.test",
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, url.Values{"token": {mgmtToken}}.Encode())
	cs := rec.Result().Cookies()
	if rec.Code != http.StatusSeeOther || len(cs) != 1 {
		t.Fatalf("login: %d %v\n%s", rec.Code, cs, rec.Body)
	}
	return cs[0].Name + "=" + cs[0].Value
}

// clock is a console's Now that a test moves.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// The login form's session ends after SessionLifetime (the cookie says so too), and Sign out ends one session or,
// with all, every session, while the management token stays the same and still logs in.
func TestLoginSessionExpiresAndIsRevocable(t *testing.T) {
	anon, _ := testKeys(t)
	c := &clock{now: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
	h := console.Handler(console.Options{AnonKey: anon, ManagementToken: mgmtToken, Now: c.Now})
	const remote, host = "192.0.2.10:5000", "api.example.test"
	in := func(cookie string) bool {
		return request(h, http.MethodGet, "/console/", remote, host, map[string]string{"Cookie": cookie}, "").Code == http.StatusOK
	}

	rec := request(h, http.MethodPost, "/console/login", remote, host,
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, url.Values{"token": {mgmtToken}}.Encode())
	if cs := rec.Result().Cookies(); len(cs) != 1 || cs[0].MaxAge != int(console.SessionLifetime/time.Second) ||
		!cs[0].Expires.Equal(c.now.Add(console.SessionLifetime).Truncate(time.Second)) {
		t.Fatalf("the cookie does not say when it expires: %+v", cs)
	}
	first := login(t, h, remote)
	if !in(first) {
		t.Fatal("a fresh session is refused")
	}
	c.now = c.now.Add(console.SessionLifetime - time.Second)
	if !in(first) {
		t.Error("a session refused before its end")
	}
	c.now = c.now.Add(time.Second)
	if in(first) {
		t.Error("an expired session still opens the console")
	}

	a, b := login(t, h, remote), login(t, h, "198.51.100.20:6000")
	rec = request(h, http.MethodPost, "/console/logout", remote, host, map[string]string{"Cookie": a, "Content-Type": "application/x-www-form-urlencoded"}, "")
	if rec.Code != http.StatusSeeOther || len(rec.Result().Cookies()) != 1 || rec.Result().Cookies()[0].MaxAge >= 0 {
		t.Errorf("sign out: %d %v", rec.Code, rec.Result().Cookies())
	}
	if in(a) || !in(b) {
		t.Errorf("after signing a out: a in %v, b in %v", in(a), in(b))
	}
	// Signing out without a session (another machine, no cookie) is refused: it could end others' sessions.
	if rec := request(h, http.MethodPost, "/console/logout", remote, host, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, "all=1"); rec.Code != http.StatusUnauthorized || !in(b) {
		t.Errorf("sign out everywhere without a session: %d, b in %v", rec.Code, in(b))
	}
	c.now = c.now.Add(time.Minute)
	d := login(t, h, remote)
	request(h, http.MethodPost, "/console/logout", remote, host, map[string]string{"Cookie": d, "Content-Type": "application/x-www-form-urlencoded"}, "all=1")
	if in(b) || in(d) {
		t.Errorf("after signing out everywhere: b in %v, d in %v", in(b), in(d))
	}
	c.now = c.now.Add(time.Second)
	if e := login(t, h, remote); !in(e) {
		t.Error("the same management token no longer logs in after signing out everywhere")
	}
	// A session of the old scheme (an HMAC of the token alone) or a tampered one opens nothing.
	e := login(t, h, remote)
	name, value, _ := strings.Cut(e, "=")
	payload, sig, _ := strings.Cut(value, ".")
	tampered := []byte(payload)
	tampered[len(tampered)-1] ^= 1
	for _, forged := range []string{name + "=" + string(tampered) + "." + sig, name + "=" + payload, name + "=." + sig} {
		if in(forged) {
			t.Errorf("forged session %q opens the console", forged)
		}
	}
}

// Wrong tokens from an address make it wait, even with the right token then; other addresses keep trying until
// the failures of all of them reach the overall limit; after the window everyone may try again.
func TestLoginFormIsRateLimited(t *testing.T) {
	anon, _ := testKeys(t)
	c := &clock{now: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
	h := console.Handler(console.Options{AnonKey: anon, ManagementToken: mgmtToken, Now: c.Now})
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	try := func(remote, token string) *httptest.ResponseRecorder {
		return request(h, http.MethodPost, "/console/login", remote, "api.example.test", form, url.Values{"token": {token}}.Encode())
	}
	for i := range 5 {
		if rec := try("192.0.2.10:5000", fmt.Sprintf("sbp_guess%d", i)); rec.Code != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d", i, rec.Code)
		}
	}
	rec := try("192.0.2.10:5001", mgmtToken) // another port of the same machine
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "60" || len(rec.Result().Cookies()) != 0 ||
		!strings.Contains(rec.Body.String(), "Too many wrong tokens") {
		t.Fatalf("the sixth try: %d Retry-After %q %v", rec.Code, rec.Header().Get("Retry-After"), rec.Result().Cookies())
	}
	if rec := try("198.51.100.20:5000", mgmtToken); rec.Code != http.StatusSeeOther {
		t.Errorf("another address is limited too: %d", rec.Code)
	}
	for i := range 15 {
		try(fmt.Sprintf("198.51.100.%d:5000", 30+i), "sbp_wrong")
	}
	if rec := try("203.0.113.1:5000", mgmtToken); rec.Code != http.StatusTooManyRequests {
		t.Errorf("past the overall limit a fresh address still tries: %d", rec.Code)
	}
	c.now = c.now.Add(time.Minute)
	if rec := try("192.0.2.10:5000", mgmtToken); rec.Code != http.StatusSeeOther {
		t.Errorf("after the window: %d", rec.Code)
	}
}
