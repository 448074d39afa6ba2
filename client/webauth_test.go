package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pgreflect/pgreflect/internal/config"
	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/internal/stacktest"
	"github.com/pgreflect/pgreflect/testidp"
)

const appOrigin = "http://app.example.com"

// newWebStack is the server with the application's origin on the redirect allow list and no sign-in rate
// limit (the tests sign in once per case).
func newWebStack(t *testing.T) *stacktest.Stack {
	t.Helper()
	return stacktest.New(t, stacktest.Options{
		SignIn: true,
		Configure: func(c *config.Auth) {
			c.SiteURL = appOrigin
			c.AdditionalRedirectURLs = []string{appOrigin + "/**"}
			c.RateLimit.SignInSignUps = 0
		},
		Schema: `comment on schema public is '@graphql({"inflect_names": true})';
		create table note(id serial primary key, user_id uuid not null default auth.uid(), body text not null);
		alter table note enable row level security;
		create policy own on note for all to authenticated using (auth.uid() = user_id) with check (auth.uid() = user_id);
		grant all on note to authenticated; grant usage on sequence note_id_seq to authenticated;`,
	})
}

// callbackRequest runs SignIn for the app, follows the browser's redirects through the project and the
// provider, and returns the request the browser then makes to the app's callback route (with its code and
// the verifier cookie).
func callbackRequest(t *testing.T, a *WebAuth, next string) *http.Request {
	t.Helper()
	rec := httptest.NewRecorder()
	a.SignIn(rec, httptest.NewRequest("GET", appOrigin+"/login", nil), "google",
		AuthorizeOptions{RedirectTo: "/auth/callback?next=" + url.QueryEscape(next)})
	if rec.Code != http.StatusFound {
		t.Fatalf("SignIn answered %d: %s", rec.Code, rec.Body)
	}
	var verifier *http.Cookie
	for _, c := range rec.Result().Cookies() {
		if c.Name == a.CookieName()+"-code-verifier" {
			verifier = c
		}
	}
	if verifier == nil || !verifier.Secure || !verifier.HttpOnly || verifier.SameSite != http.SameSiteLaxMode {
		t.Fatalf("verifier cookie %+v, want Secure, HttpOnly, SameSite=Lax", verifier)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	loc := rec.Header().Get("Location")
	for i := 0; i < 6 && !strings.HasPrefix(loc, appOrigin); i++ {
		resp, err := noFollow.Get(loc)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 3 {
			t.Fatalf("%s answered %d", loc, resp.StatusCode)
		}
		loc = resp.Header.Get("Location")
	}
	if !strings.HasPrefix(loc, appOrigin+"/auth/callback?") {
		t.Fatalf("the flow ended at %s, not at the app's callback", loc)
	}
	r := httptest.NewRequest("GET", loc, nil)
	r.AddCookie(&http.Cookie{Name: verifier.Name, Value: verifier.Value})
	return r
}

// callback runs the callback route and returns the redirect target and the cookies it set.
func callback(t *testing.T, a *WebAuth, r *http.Request) (string, map[string]*http.Cookie) {
	t.Helper()
	rec := httptest.NewRecorder()
	a.Callback().ServeHTTP(rec, r)
	if rec.Code != http.StatusFound {
		t.Fatalf("callback answered %d: %s", rec.Code, rec.Body)
	}
	cookies := map[string]*http.Cookie{}
	for _, c := range rec.Result().Cookies() {
		cookies[c.Name] = c
	}
	return rec.Header().Get("Location"), cookies
}

// sessionFromCookies reassembles the session the way @supabase/ssr reads it.
func sessionFromCookies(t *testing.T, key string, cookies map[string]*http.Cookie) *Session {
	t.Helper()
	r := httptest.NewRequest("GET", appOrigin+"/", nil)
	for _, c := range cookies {
		if c.MaxAge >= 0 {
			r.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
		}
	}
	return cookieStore{key: key}.session(r)
}

func TestCallbackRedirectsOnlyWithinTheSite(t *testing.T) {
	s := newWebStack(t)
	a := NewWebAuth(s.URL, s.Anon, WebAuthOptions{Local: true})
	cases := map[string]string{
		"":                          "/",
		"/":                         "/",
		"/private/notes?tab=2#top":  "/private/notes?tab=2#top",
		"//evil.com":                "/",
		"//evil.com/private":        "/",
		`/\evil.com`:                "/",
		`/\/evil.com`:               "/",
		"https://evil.com/":         "/",
		"javascript:alert(1)":       "/",
		"evil.com":                  "/",
		"private":                   "/",
		"/\tevil":                   "/",
		"/ok\r\nSet-Cookie: x=1":    "/",
		"/ok\x7f":                   "/",
		"///evil.com":               "/",
		"/%2F%2Fevil.com":           "/%2F%2Fevil.com", // a path on this site, percent-encoded slashes and all
		"/users/me?next=//evil.com": "/users/me?next=//evil.com",
	}
	for next, want := range cases {
		t.Run(next, func(t *testing.T) {
			loc, cookies := callback(t, a, callbackRequest(t, a, next))
			if loc != appOrigin+want {
				t.Errorf("next %q redirected to %q, want %q", next, loc, appOrigin+want)
			}
			if sessionFromCookies(t, a.CookieName(), cookies) == nil {
				t.Errorf("no session cookie after a successful exchange")
			}
		})
	}
}

func TestCallbackRedirectHost(t *testing.T) {
	s := newWebStack(t)
	local := NewWebAuth(s.URL, s.Anon, WebAuthOptions{Local: true})
	deployed := NewWebAuth(s.URL, s.Anon, WebAuthOptions{})
	cases := []struct {
		name      string
		a         *WebAuth
		forwarded string
		want      string
	}{
		{"local ignores x-forwarded-host", local, "app.example.org", appOrigin + "/done"},
		{"deployed uses x-forwarded-host over https", deployed, "app.example.org", "https://app.example.org/done"},
		{"deployed with a port", deployed, "app.example.org:8443", "https://app.example.org:8443/done"},
		{"deployed takes the first of a proxy chain", deployed, "app.example.org, internal:8080", "https://app.example.org/done"},
		{"deployed without the header uses the origin", deployed, "", appOrigin + "/done"},
		{"a host with a path is ignored", deployed, "evil.com/x", appOrigin + "/done"},
		{"a host with credentials is ignored", deployed, "app.example.org@evil.com", appOrigin + "/done"},
		{"a host with a backslash is ignored", deployed, `evil.com\@app.example.org`, appOrigin + "/done"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := callbackRequest(t, c.a, "/done")
			if c.forwarded != "" {
				r.Header.Set("X-Forwarded-Host", c.forwarded)
			}
			if loc, _ := callback(t, c.a, r); loc != c.want {
				t.Errorf("redirected to %q, want %q", loc, c.want)
			}
		})
	}
}

func TestCallbackFailures(t *testing.T) {
	s := newWebStack(t)
	a := NewWebAuth(s.URL, s.Anon, WebAuthOptions{})
	errorURL := appOrigin + AuthCodeErrorPath
	check := func(t *testing.T, r *http.Request) {
		t.Helper()
		r.Header.Set("X-Forwarded-Host", "app.example.org") // the error page is on the request origin all the same
		loc, cookies := callback(t, a, r)
		if loc != errorURL {
			t.Errorf("redirected to %q, want %q", loc, errorURL)
		}
		if sessionFromCookies(t, a.CookieName(), cookies) != nil {
			t.Error("a failed callback set a session cookie")
		}
		if _, err := r.Cookie(a.CookieName() + "-code-verifier"); err == nil {
			if v := cookies[a.CookieName()+"-code-verifier"]; v == nil || v.MaxAge >= 0 {
				t.Errorf("the verifier cookie was not deleted: %+v", v)
			}
		}
	}
	t.Run("missing code", func(t *testing.T) {
		r := callbackRequest(t, a, "/done")
		q := r.URL.Query()
		q.Del("code")
		r.URL.RawQuery = q.Encode()
		check(t, r)
	})
	t.Run("provider error instead of a code", func(t *testing.T) {
		r := httptest.NewRequest("GET", appOrigin+"/auth/callback?error=access_denied&next=/done", nil)
		check(t, r)
	})
	t.Run("missing verifier cookie", func(t *testing.T) {
		r := callbackRequest(t, a, "/done")
		r.Header.Del("Cookie")
		check(t, r)
	})
	t.Run("wrong verifier", func(t *testing.T) {
		r := callbackRequest(t, a, "/done")
		other := callbackRequest(t, a, "/done") // a verifier of another sign-in attempt
		r.Header.Set("Cookie", other.Header.Get("Cookie"))
		check(t, r)
	})
	t.Run("code used twice", func(t *testing.T) {
		r := callbackRequest(t, a, "/done")
		first := r.Clone(context.Background())
		if loc, _ := callback(t, a, first); loc != appOrigin+"/done" {
			t.Fatalf("first exchange redirected to %q", loc)
		}
		check(t, r)
	})
	t.Run("made-up code", func(t *testing.T) {
		r := callbackRequest(t, a, "/done")
		q := r.URL.Query()
		q.Set("code", "00000000-0000-4000-8000-000000000000")
		r.URL.RawQuery = q.Encode()
		check(t, r)
	})
}

// requestThrough runs Middleware over a handler that records the request's client.
func requestThrough(a *WebAuth, cookies map[string]*http.Cookie) (*Client, *httptest.ResponseRecorder) {
	r := httptest.NewRequest("GET", appOrigin+"/private", nil)
	for _, c := range cookies {
		if c.MaxAge >= 0 {
			r.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
		}
	}
	var seen *Client
	rec := httptest.NewRecorder()
	a.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = a.RequestClient(r)
	})).ServeHTTP(rec, r)
	return seen, rec
}

func cookieMap(rec *httptest.ResponseRecorder) map[string]*http.Cookie {
	m := map[string]*http.Cookie{}
	for _, c := range rec.Result().Cookies() {
		m[c.Name] = c
	}
	return m
}

func TestSessionCookiesAreChunkedLikeSupabaseSSR(t *testing.T) {
	s := newWebStack(t)
	a := NewWebAuth(s.URL, s.Anon, WebAuthOptions{Local: true})
	if want := "sb-127-auth-token"; a.CookieName() != want {
		t.Fatalf("cookie name %q, want supabase-js's %q for %s", a.CookieName(), want, s.URL)
	}
	// A long display name makes the session (it carries the user and their metadata) several chunks long.
	long := testidp.DefaultUser()
	long.Sub, long.Email, long.Name = "sub-long", "long@example.com", strings.Repeat("Ünïcödé name ", 400)
	s.IDP.SetUser(long)
	_, cookies := callback(t, a, callbackRequest(t, a, "/"))
	if _, whole := cookies[a.CookieName()]; whole {
		t.Fatal("a session longer than a chunk was written as one cookie")
	}
	var joined string
	for i := 0; ; i++ {
		c, ok := cookies[a.CookieName()+"."+strconv.Itoa(i)]
		if !ok {
			if i < 2 {
				t.Fatalf("%d chunks, want at least 2; cookies: %v", i, cookies)
			}
			break
		}
		if len(c.Value) > maxChunkSize || !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" {
			t.Errorf("chunk %s: %d bytes, attributes %+v", c.Name, len(c.Value), c)
		}
		joined += c.Value
	}
	if !strings.HasPrefix(joined, "base64-") {
		t.Fatalf("session cookie is not in @supabase/ssr's base64url encoding: %.40s", joined)
	}
	var wire map[string]any
	if err := decodeCookieValue(joined, &wire); err != nil {
		t.Fatal(err)
	}
	user, _ := wire["user"].(map[string]any)
	if wire["access_token"] == "" || wire["refresh_token"] == "" || user["email"] != "long@example.com" {
		t.Fatalf("decoded session: %.300v", wire)
	}

	// The middleware reads the chunks back; the user's GraphQL requests run as the user.
	c, _ := requestThrough(a, cookies)
	if c.Auth.Session() == nil || c.Auth.Session().User.Email != "long@example.com" {
		t.Fatalf("middleware session: %+v", c.Auth.Session())
	}
	if err := c.GraphQL(context.Background(), `mutation { insertIntoNoteCollection(objects: [{body: "mine"}]) { affectedCount } }`, nil, nil); err != nil {
		t.Fatal(err)
	}

	// A short session next replaces the chunks: every stale chunk is deleted.
	s.IDP.SetUser(testidp.DefaultUser())
	r := callbackRequest(t, a, "/")
	for name, c := range cookies {
		r.AddCookie(&http.Cookie{Name: name, Value: c.Value})
	}
	_, after := callback(t, a, r)
	if c := after[a.CookieName()]; c == nil || c.MaxAge <= 0 {
		t.Fatalf("the short session is not one cookie: %+v", after)
	}
	for name := range cookies {
		if c := after[name]; c == nil || c.MaxAge >= 0 {
			t.Errorf("stale chunk %s not deleted: %+v", name, c)
		}
	}
}

func TestMiddlewareRefreshesNearExpiry(t *testing.T) {
	s := newWebStack(t)
	a := NewWebAuth(s.URL, s.Anon, WebAuthOptions{Local: true})
	_, cookies := callback(t, a, callbackRequest(t, a, "/"))
	first := sessionFromCookies(t, a.CookieName(), cookies)

	// A fresh session is used as it is: no refresh, no cookie written.
	c, rec := requestThrough(a, cookies)
	if got := c.Auth.Session(); got == nil || got.AccessToken != first.AccessToken || len(rec.Result().Cookies()) != 0 {
		t.Fatalf("fresh session: %+v, cookies %v", got, rec.Result().Cookies())
	}

	// Close to expiry: refreshed before the handler runs, and the new session is written back.
	near := *first
	near.ExpiresAt = time.Now().Add(30 * time.Second).Unix()
	v, _ := encodeCookieValue(near)
	c, rec = requestThrough(a, map[string]*http.Cookie{a.CookieName(): {Name: a.CookieName(), Value: v}})
	refreshed := sessionFromCookies(t, a.CookieName(), cookieMap(rec))
	if refreshed == nil || refreshed.RefreshToken == first.RefreshToken || refreshed.ExpiresAt <= near.ExpiresAt {
		t.Fatalf("no refreshed session written: %+v", refreshed)
	}
	if got := c.Auth.Session(); got == nil || got.AccessToken != refreshed.AccessToken {
		t.Fatalf("the handler did not get the refreshed session: %+v", got)
	}
	u, err := c.Auth.User(context.Background())
	if err != nil || u.Email != testidp.DefaultUser().Email {
		t.Fatalf("user with the refreshed session: %+v, %v", u, err)
	}

	// After sign-out everywhere the old refresh token is refused: the cookies go, the request has no session.
	rec = httptest.NewRecorder()
	r := httptest.NewRequest("POST", appOrigin+"/logout", nil)
	r = r.WithContext(context.WithValue(r.Context(), requestClientKey{}, c))
	r.AddCookie(&http.Cookie{Name: a.CookieName(), Value: v})
	if err := a.SignOut(rec, r, "global"); err != nil {
		t.Fatal(err)
	}
	if del := cookieMap(rec)[a.CookieName()]; del == nil || del.MaxAge >= 0 {
		t.Fatalf("sign-out did not delete the session cookie: %+v", del)
	}
	c, rec = requestThrough(a, map[string]*http.Cookie{a.CookieName(): {Name: a.CookieName(), Value: v}})
	if c.Auth.Session() != nil {
		t.Fatalf("a revoked session was kept: %+v", c.Auth.Session())
	}
	if del := cookieMap(rec)[a.CookieName()]; del == nil || del.MaxAge >= 0 {
		t.Fatalf("the revoked session's cookie was not deleted: %+v", del)
	}

	// A project that cannot be reached keeps the cookies for later.
	down := NewWebAuth("http://127.0.0.1:1", s.Anon, WebAuthOptions{Local: true})
	v2, _ := encodeCookieValue(near)
	c, rec = requestThrough(down, map[string]*http.Cookie{down.CookieName(): {Name: down.CookieName(), Value: v2}})
	if c.Auth.Session() != nil || len(rec.Result().Cookies()) != 0 {
		t.Fatalf("unreachable project: session %+v, cookies %v", c.Auth.Session(), rec.Result().Cookies())
	}
}

func TestCookieValueReadsBothSupabaseEncodings(t *testing.T) {
	want := Session{AccessToken: "at", RefreshToken: "rt", ExpiresAt: 1}
	plain, _ := json.Marshal(want)
	encoded, _ := encodeCookieValue(want)
	for name, v := range map[string]string{"base64url": encoded, "plain JSON": string(plain)} {
		var got Session
		if err := decodeCookieValue(v, &got); err != nil || got != want {
			t.Errorf("%s: %+v, %v", name, got, err)
		}
	}
	var s Session
	if err := decodeCookieValue("base64-!!!", &s); err == nil {
		t.Error("a corrupt cookie decoded")
	}
}

// What testdata/supabase-js/ssr.mjs reports.
type ssrResult struct {
	URL     string
	Cookies []struct{ Name, Value string }
	Session *Session
	User    *User
	Error   *struct{ Message string }
}

func runSSR(t *testing.T, scenario string, input map[string]any) ssrResult {
	t.Helper()
	var out ssrResult
	testenv.RunNodeScript(t, filepath.Join("..", "testdata", "supabase-js"), "ssr.mjs", []string{scenario}, input, &out)
	return out
}

// followToApp follows the browser's redirects from a sign-in URL to the app's callback.
func followToApp(t *testing.T, start string) string {
	t.Helper()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	loc := start
	for i := 0; i < 6 && !strings.HasPrefix(loc, appOrigin); i++ {
		resp, err := noFollow.Get(loc)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 3 {
			t.Fatalf("%s answered %d", loc, resp.StatusCode)
		}
		loc = resp.Header.Get("Location")
	}
	return loc
}

// TestCookiesInteroperateWithSupabaseSSR runs @supabase/ssr's server client (npm) on the same cookies: a
// sign-in it starts finishes in WebAuth's callback route, and the session WebAuth writes is the one it reads.
func TestCookiesInteroperateWithSupabaseSSR(t *testing.T) {
	testenv.Node(t) // skips (fails under CI) before any setup when Node is missing
	s := newWebStack(t)
	a := NewWebAuth(s.URL, s.Anon, WebAuthOptions{Local: true})
	for _, flowIDs := range []bool{false, true} {
		t.Run(fmt.Sprintf("sign-in started by @supabase/ssr, sb_flow_id=%v", flowIDs), func(t *testing.T) {
			out := runSSR(t, "signin", map[string]any{"url": s.URL, "anonKey": s.Anon, "flowIds": flowIDs,
				"redirectTo": appOrigin + "/auth/callback?next=/from-ssr"})
			if out.URL == "" || out.Error != nil {
				t.Fatalf("signInWithOAuth: %+v", out)
			}
			r := httptest.NewRequest("GET", followToApp(t, out.URL), nil)
			if got := r.URL.Query().Has(flowIDParam); got != flowIDs {
				t.Fatalf("callback URL %s: sb_flow_id present %v, want %v", r.URL, got, flowIDs)
			}
			for _, c := range out.Cookies {
				r.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
			}
			loc, cookies := callback(t, a, r)
			if loc != appOrigin+"/from-ssr" || sessionFromCookies(t, a.CookieName(), cookies) == nil {
				t.Fatalf("callback with @supabase/ssr's verifier cookie: redirected to %q", loc)
			}
			// Every verifier cookie of the flow is gone.
			for _, c := range out.Cookies {
				if strings.HasSuffix(c.Name, "code-verifier") {
					if d := cookies[c.Name]; d == nil || d.MaxAge >= 0 {
						t.Errorf("%s not deleted: %+v", c.Name, d)
					}
				}
			}
		})
	}

	t.Run("@supabase/ssr reads the chunked session WebAuth wrote", func(t *testing.T) {
		long := testidp.DefaultUser()
		long.Sub, long.Email, long.Name = "sub-ssr", "ssr@example.com", strings.Repeat("Ünïcödé name ", 400)
		s.IDP.SetUser(long)
		_, cookies := callback(t, a, callbackRequest(t, a, "/"))
		written := sessionFromCookies(t, a.CookieName(), cookies)
		var jar []map[string]string
		for _, c := range cookies {
			if c.MaxAge > 0 && !strings.HasSuffix(c.Name, "code-verifier") {
				jar = append(jar, map[string]string{"name": c.Name, "value": c.Value})
			}
		}
		if len(jar) < 2 {
			t.Fatalf("want a chunked session, got %d cookies", len(jar))
		}
		out := runSSR(t, "read", map[string]any{"url": s.URL, "anonKey": s.Anon, "cookies": jar})
		if out.Session == nil || out.Session.AccessToken != written.AccessToken || out.Session.User == nil ||
			out.Session.User.UserMetadata["full_name"] != long.Name {
			t.Fatalf("getSession from WebAuth's cookies: %+v", out.Session)
		}
		if out.User == nil || out.User.Email != "ssr@example.com" {
			t.Fatalf("getUser (checked by the server) from WebAuth's cookies: %+v", out.User)
		}
	})
}
