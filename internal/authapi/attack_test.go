package authapi

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pgreflect/pgreflect/internal/config"
	"github.com/pgreflect/pgreflect/testidp"
)

// Attack tests: each tries to break one security rule of the sign-in contract against the real server and
// checks both the contract's error and that the attempt left nothing behind.

// hashNonce is what an app sends to Google for a raw nonce, and so what the ID token carries. Computed here
// rather than with oidc.HashNonce so that the tests check the server's rule instead of sharing its code.
func hashNonce(raw string) string {
	sum := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(sum[:])
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// rowCounts is the number of rows in each auth table a sign-in writes to.
func (w *world) rowCounts() map[string]int {
	w.t.Helper()
	out := map[string]int{}
	for _, table := range []string{"users", "identities", "sessions", "refresh_tokens", "flow_state"} {
		out[table] = w.count("select count(*) from auth." + table)
	}
	return out
}

// wantUnchanged checks that the given auth tables (all of rowCounts' when none are named) hold as many rows
// as before.
func (w *world) wantUnchanged(t *testing.T, what string, before map[string]int, tables ...string) {
	t.Helper()
	after := w.rowCounts()
	if len(tables) == 0 {
		for table := range before {
			tables = append(tables, table)
		}
	}
	for _, table := range tables {
		if after[table] != before[table] {
			t.Errorf("%s: auth.%s went from %d to %d rows", what, table, before[table], after[table])
		}
	}
}

// The tables that hold what a sign-in grants (flow_state rows may come and go with a failed attempt).
var grantTables = []string{"users", "identities", "sessions", "refresh_tokens"}

// startFlow calls /auth/v1/authorize (redirect_to = tAppURL, PKCE when p is given, plus extra) and returns
// the provider URL it redirects to.
func (w *world) startFlow(p *pkce, extra url.Values) *url.URL {
	w.t.Helper()
	q := url.Values{"provider": {"google"}, "redirect_to": {tAppURL}}
	if p != nil {
		q.Set("code_challenge", p.challenge)
		q.Set("code_challenge_method", "s256")
	}
	for k, v := range extra {
		q[k] = v
	}
	status, loc := w.location(w.inst.apiURL + "/auth/v1/authorize?" + q.Encode())
	if status != http.StatusFound || loc == nil || !strings.HasPrefix(loc.String(), w.idp.URL()+"/authorize?") {
		w.t.Fatalf("authorize: status %d, Location %v", status, loc)
	}
	return loc
}

// consent runs the provider's automatic consent and returns the callback URL the browser is sent to.
func (w *world) consent(providerURL *url.URL) *url.URL {
	w.t.Helper()
	status, cb := w.location(providerURL.String())
	if status != http.StatusFound || cb == nil || !strings.HasPrefix(cb.String(), w.inst.apiURL+"/auth/v1/callback?") {
		w.t.Fatalf("provider: status %d, Location %v", status, cb)
	}
	return cb
}

// pkceCode runs a PKCE flow up to the auth code.
func (w *world) pkceCode(p pkce) string {
	w.t.Helper()
	q := url.Values{"provider": {"google"}, "redirect_to": {tAppURL}, "code_challenge": {p.challenge},
		"code_challenge_method": {"s256"}}
	_, final := w.flow(q)
	code := final.Query().Get("code")
	if code == "" {
		w.t.Fatalf("PKCE callback: %v", final)
	}
	return code
}

func (w *world) exchange(code, verifier string) response {
	w.t.Helper()
	return w.api(http.MethodPost, "/token?grant_type=pkce", map[string]string{"auth_code": code, "code_verifier": verifier}, "")
}

// wantStateError checks the redirect for a bad OAuth state at /callback: 303 to site_url (never the flow's
// redirect target, which an unknown state cannot name), error in the query only.
func wantStateError(t *testing.T, what string, status int, loc *url.URL, code, desc string) {
	t.Helper()
	if status != http.StatusSeeOther || loc == nil {
		t.Fatalf("%s: status %d Location %v, want a 303 redirect", what, status, loc)
	}
	if got := loc.Scheme + "://" + loc.Host + strings.TrimSuffix(loc.Path, "/"); got != tSiteURL {
		t.Errorf("%s: redirected to %s, want the site URL %s", what, loc, tSiteURL)
	}
	q := loc.Query()
	if q.Get("error") != "invalid_request" || q.Get("error_code") != code || q.Get("error_description") != desc {
		t.Errorf("%s: query %v, want error=invalid_request error_code=%s error_description=%q", what, q, code, desc)
	}
	if q.Has("code") || strings.Contains(loc.Fragment, "access_token") {
		t.Errorf("%s: the error redirect carries a token or code: %s", what, loc)
	}
}

func TestAttackPKCECodeVerifier(t *testing.T) {
	w := newWorld(t, nil)
	p := newPKCE()
	code := w.pkceCode(p)
	before := w.rowCounts()
	if before["sessions"] != 0 || before["flow_state"] != 1 {
		t.Fatalf("before the exchange: %v", before)
	}
	const bothNonEmpty = "invalid request: both auth code and code verifier should be non-empty"
	wantError(t, "empty code_verifier", w.exchange(code, ""), 400, "validation_failed", bothNonEmpty)
	wantError(t, "absent code_verifier",
		w.api(http.MethodPost, "/token?grant_type=pkce", map[string]string{"auth_code": code}, ""),
		400, "validation_failed", bothNonEmpty)
	const mismatch = "code challenge does not match previously saved code verifier"
	wantError(t, "wrong code_verifier", w.exchange(code, randomHex(t, 56)), 400, "bad_code_verifier", mismatch)
	// The challenge is public (it was in the authorize URL); it is not the verifier.
	wantError(t, "challenge sent as verifier", w.exchange(code, p.challenge), 400, "bad_code_verifier", mismatch)
	w.wantUnchanged(t, "failed exchanges", before)

	// A wrong verifier does not burn the flow: the right one still works.
	if r := w.exchange(code, p.verifier); r.status != http.StatusOK || r.str("access_token") == "" {
		t.Fatalf("right verifier after wrong ones: %d %s", r.status, r.raw)
	}
}

func TestAttackReusedCode(t *testing.T) {
	w := newWorld(t, nil)
	p := newPKCE()
	code := w.pkceCode(p)
	if r := w.exchange(code, p.verifier); r.status != http.StatusOK {
		t.Fatalf("first exchange: %d %s", r.status, r.raw)
	}
	before := w.rowCounts()
	wantError(t, "reused code", w.exchange(code, p.verifier), 404, "flow_state_not_found",
		"invalid flow state, no valid flow state found")
	wantError(t, "code nobody issued", w.exchange("3f0c7c1e-8a4b-4c55-9d4e-2a7e1f0b9c11", p.verifier), 404,
		"flow_state_not_found", "invalid flow state, no valid flow state found")
	wantError(t, "a code with a NUL byte", w.exchange("a\x00b", p.verifier), 400, "validation_failed", msgUnstorableText)
	w.wantUnchanged(t, "reused and unknown codes", before)
}

func TestAttackExpiredCode(t *testing.T) {
	w := newWorld(t, nil)
	p := newPKCE()
	code := w.pkceCode(p)
	// The five minutes count from /authorize.
	if _, err := w.pool.Exec(t.Context(), "update auth.flow_state set created_at = now() - interval '301 seconds'"); err != nil {
		t.Fatal(err)
	}
	before := w.rowCounts()
	wantError(t, "expired code", w.exchange(code, p.verifier), 422, "flow_state_expired",
		"invalid flow state, flow state has expired")
	w.wantUnchanged(t, "expired code", before, "sessions", "refresh_tokens")
}

func TestAttackExpiredState(t *testing.T) {
	w := newWorld(t, nil)
	for _, withPKCE := range []bool{false, true} {
		var p *pkce
		if withPKCE {
			pp := newPKCE()
			p = &pp
		}
		cb := w.consent(w.startFlow(p, nil))
		if _, err := w.pool.Exec(t.Context(), "update auth.flow_state set created_at = now() - interval '301 seconds'"); err != nil {
			t.Fatal(err)
		}
		before := w.rowCounts()
		status, loc := w.location(cb.String())
		wantStateError(t, "expired state", status, loc, "bad_oauth_state", "OAuth state has expired")
		w.wantUnchanged(t, "expired state", before, grantTables...)
	}
}

func TestAttackForgedState(t *testing.T) {
	w := newWorld(t, nil)
	// Real provider codes, obtained with a state pgreflect never issued.
	providerURL := w.startFlow(nil, nil)
	before := w.rowCounts()
	for _, c := range []struct{ name, state, code, desc string }{
		{"unknown UUID", "6b1f9a7e-2c3d-4e5f-8a9b-0c1d2e3f4a5b", "bad_oauth_state", "OAuth state not found or expired"},
		{"not a UUID", "attacker-state", "bad_oauth_state", "OAuth state parameter is invalid"},
		{"legacy signed-JWT state", "eyJhbGciOiJIUzI1NiJ9.eyJmbG93X3N0YXRlX2lkIjoiIn0.x", "bad_oauth_state", "OAuth state parameter is invalid"},
		{"missing", "", "bad_oauth_callback", "OAuth state parameter missing"},
	} {
		forged := *providerURL
		q := forged.Query()
		q.Set("state", c.state)
		if c.state == "" {
			q.Del("state")
		}
		forged.RawQuery = q.Encode()
		status, loc := w.location(w.consent(&forged).String())
		wantStateError(t, c.name, status, loc, c.code, c.desc)
		w.wantUnchanged(t, c.name, before)
	}
}

func TestAttackReplayedState(t *testing.T) {
	w := newWorld(t, nil)
	t.Run("implicit", func(t *testing.T) {
		cb := w.consent(w.startFlow(nil, nil))
		status, loc := w.location(cb.String())
		if status != http.StatusFound || loc == nil || !strings.Contains(loc.Fragment, "access_token=") {
			t.Fatalf("first callback: %d %v", status, loc)
		}
		before := w.rowCounts()
		status, loc = w.location(cb.String())
		wantStateError(t, "replayed implicit state", status, loc, "bad_oauth_state", "OAuth state not found or expired")
		w.wantUnchanged(t, "replayed implicit state", before)
	})
	t.Run("pkce", func(t *testing.T) {
		p := newPKCE()
		cb := w.consent(w.startFlow(&p, nil))
		status, loc := w.location(cb.String())
		if status != http.StatusFound || loc == nil || loc.Query().Get("code") == "" {
			t.Fatalf("first callback: %d %v", status, loc)
		}
		code := loc.Query().Get("code")
		before := w.rowCounts()
		status, loc = w.location(cb.String())
		wantStateError(t, "replayed pkce state", status, loc, "flow_state_already_used", "State has already been used")
		w.wantUnchanged(t, "replayed pkce state", before)
		// The replay did not disturb the code issued first.
		if r := w.exchange(code, p.verifier); r.status != http.StatusOK {
			t.Errorf("exchange after a replayed callback: %d %s", r.status, r.raw)
		}
	})
}

func TestAttackOpenRedirect(t *testing.T) {
	w := newWorld(t, nil)
	for _, target := range []string{
		"https://evil.example.net/steal",
		"https://app.example.com.evil.example.net/cb",
		"https://app.example.com@evil.example.net/cb",
		"https://evil.example.net/?next=https://app.example.com/",
		"//evil.example.net/cb",
		"javascript:alert(document.cookie)",
		"http://app.example.com/after-login", // http, where the allow list says https
		"https://app.example.com:8443/after-login",
		"https://10.0.0.1/cb",
		"https://2130706433/cb",                   // a decimal-integer host
		"https://app.example.com/after-login\xff", // not UTF-8: no flow state could hold it
	} {
		t.Run(target, func(t *testing.T) {
			// Also try to overwrite what pgreflect sends to the provider.
			providerURL := w.startFlow(nil, url.Values{
				"redirect_to":  {target},
				"redirect_uri": {"https://evil.example.net/cb"},
				"state":        {"attacker"},
				"client_id":    {"attacker-client"},
			})
			pq := providerURL.Query()
			if pq.Get("redirect_uri") != w.inst.apiURL+"/auth/v1/callback" || pq.Get("client_id") != tWebClient ||
				!uuidPattern.MatchString(pq.Get("state")) || len(pq["state"]) != 1 || len(pq["redirect_uri"]) != 1 ||
				len(pq["client_id"]) != 1 {
				t.Errorf("reserved parameters reached the provider: %v", pq)
			}
			status, loc := w.location(w.consent(providerURL).String())
			if status != http.StatusFound || loc == nil {
				t.Fatalf("callback: %d %v", status, loc)
			}
			if got := loc.Scheme + "://" + loc.Host + strings.TrimSuffix(loc.Path, "/"); got != tSiteURL {
				t.Errorf("redirected to %s, want the site URL %s", loc, tSiteURL)
			}
		})
	}
	t.Run("provider error", func(t *testing.T) {
		// An error from the provider goes to the flow's checked target, never to the attacker's.
		providerURL := w.startFlow(nil, url.Values{"redirect_to": {"https://evil.example.net/x"}})
		cb := w.inst.apiURL + "/auth/v1/callback?" + url.Values{"state": {providerURL.Query().Get("state")},
			"error": {"access_denied"}, "error_description": {"The user denied the request"}}.Encode()
		before := w.rowCounts()
		status, loc := w.location(cb)
		if status != http.StatusFound || loc == nil || loc.Scheme+"://"+loc.Host != tSiteURL {
			t.Fatalf("provider error: %d %v, want a 302 to the site URL", status, loc)
		}
		if loc.Query().Get("error") != "access_denied" || loc.Query().Get("error_description") != "The user denied the request" {
			t.Errorf("provider error not passed on: %v", loc)
		}
		w.wantUnchanged(t, "provider error", before, grantTables...)
	})
}

func TestAttackIDToken(t *testing.T) {
	w := newWorld(t, nil)
	user := testidp.User{Sub: "120000000000000000007", Email: "victim@example.com", EmailVerified: true, Name: "Victim"}
	raw := randomHex(t, 16)
	mint := func(change func(map[string]any), opt testidp.MintOptions) string {
		c := w.idp.Claims(user)
		c["nonce"] = hashNonce(raw)
		if change != nil {
			change(c)
		}
		return w.idp.MintIDToken(c, opt)
	}
	before := w.rowCounts()
	const bad = "Bad ID token"
	for _, c := range []struct{ name, token, nonce, err, desc string }{
		{"wrong audience", mint(func(c map[string]any) { c["aud"] = "attacker.apps.googleusercontent.com" }, testidp.MintOptions{}),
			raw, "invalid request", "Unacceptable audience in id_token: [attacker.apps.googleusercontent.com]"},
		{"wrong issuer", mint(func(c map[string]any) { c["iss"] = "https://evil.example.net" }, testidp.MintOptions{}),
			raw, "invalid request", bad},
		{"expired", mint(func(c map[string]any) {
			c["iat"] = time.Now().Add(-2 * time.Hour).Unix()
			c["exp"] = time.Now().Add(-time.Hour).Unix()
		}, testidp.MintOptions{}), raw, "invalid request", bad},
		{"bad signature", mint(nil, testidp.MintOptions{WrongKey: true}), raw, "invalid request", bad},
		{"alg none", mint(nil, testidp.MintOptions{Alg: "none"}), raw, "invalid request", bad},
		{"HS256 keyed with the client secret", mint(nil, testidp.MintOptions{Alg: "HS256"}), raw, "invalid request", bad},
		{"payload changed after signing", tamper(t, mint(nil, testidp.MintOptions{}), "sub", "someone-else"), raw, "invalid request", bad},
		{"mismatched nonce", mint(nil, testidp.MintOptions{}), "not-the-nonce", "invalid nonce", "Nonces mismatch"},
		{"hashed nonce sent as the raw one", mint(nil, testidp.MintOptions{}), hashNonce(raw), "invalid nonce", "Nonces mismatch"},
		{"nonce missing from the request", mint(nil, testidp.MintOptions{}), "", "invalid request",
			"Passed nonce and nonce in id_token should either both exist or not."},
		{"missing sub", mint(func(c map[string]any) { delete(c, "sub") }, testidp.MintOptions{}), raw, "invalid request",
			"Missing sub claim in id_token"},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := map[string]any{"provider": "google", "id_token": c.token}
			if c.nonce != "" {
				body["nonce"] = c.nonce
			}
			wantOAuthError(t, c.name, w.api(http.MethodPost, "/token?grant_type=id_token", body, ""), c.err, c.desc)
			w.wantUnchanged(t, c.name, before)
		})
	}
	t.Run("access token not the one the ID token came with", func(t *testing.T) {
		// at_hash binds the ID token to the provider's access token: the left half of its SHA-256.
		sum := sha256.Sum256([]byte("ya29.issued-with-the-id-token"))
		token := mint(func(c map[string]any) { c["at_hash"] = base64.RawURLEncoding.EncodeToString(sum[:16]) }, testidp.MintOptions{})
		body := map[string]any{"provider": "google", "id_token": token, "nonce": raw, "access_token": "ya29.from-another-app"}
		wantOAuthError(t, "at_hash mismatch", w.api(http.MethodPost, "/token?grant_type=id_token", body, ""), "invalid request", bad)
		w.wantUnchanged(t, "at_hash mismatch", before)
		// The right access token passes the check (the sign-in itself is the control below).
		body["access_token"] = "ya29.issued-with-the-id-token"
		if r := w.api(http.MethodPost, "/token?grant_type=id_token", body, ""); r.status != http.StatusOK {
			t.Errorf("matching access token: %d %s", r.status, r.raw)
		}
		before = w.rowCounts()
	})
	t.Run("missing id_token", func(t *testing.T) {
		wantOAuthError(t, "missing id_token", w.api(http.MethodPost, "/token?grant_type=id_token",
			map[string]any{"provider": "google"}, ""), "invalid request", "id_token required")
		w.wantUnchanged(t, "missing id_token", before)
	})
	// The control: the same claims, correctly signed and with the right nonce, are accepted.
	r := w.api(http.MethodPost, "/token?grant_type=id_token",
		map[string]any{"provider": "google", "id_token": mint(nil, testidp.MintOptions{}), "nonce": raw}, "")
	if r.status != http.StatusOK || r.str("access_token") == "" {
		t.Fatalf("valid token: %d %s", r.status, r.raw)
	}
}

// tamper changes one claim of a signed JWT without signing it again.
func tamper(t *testing.T, token, claim string, value any) string {
	t.Helper()
	parts := strings.Split(token, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatal(err)
	}
	m[claim] = value
	if payload, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	parts[1] = base64.RawURLEncoding.EncodeToString(payload)
	return strings.Join(parts, ".")
}

func TestAttackRefreshTokenReplay(t *testing.T) {
	const interval = 1 // seconds
	w := newWorld(t, func(a *config.Auth) {
		a.EnableRefreshTokenRotation = true
		a.RefreshTokenReuseInterval = interval
	})
	refresh := func(token string) response {
		return w.api(http.MethodPost, "/token?grant_type=refresh_token", map[string]string{"refresh_token": token}, "")
	}
	signIn := w.idTokenSignIn(testidp.User{Sub: "130000000000000000009", Email: "rt@example.com", EmailVerified: true})
	t0 := signIn.str("refresh_token")
	claims, err := w.keys.Verify(signIn.str("access_token"))
	if err != nil {
		t.Fatal(err)
	}
	sessionID, _ := claims["session_id"].(string)
	rotate := func(token string) string {
		r := refresh(token)
		if r.status != http.StatusOK || r.str("refresh_token") == "" || r.str("refresh_token") == token {
			t.Fatalf("refresh: %d %s", r.status, r.raw)
		}
		return r.str("refresh_token")
	}
	t1 := rotate(t0)
	t2 := rotate(t1)

	// After the reuse interval, t0 (two generations back) is a replay: the whole family is revoked.
	time.Sleep((interval + 1) * time.Second)
	sessionsBefore := w.count("select count(*) from auth.sessions")
	wantError(t, "replayed refresh token", refresh(t0), 400, "refresh_token_already_used", "Invalid Refresh Token: Already Used")
	if n := w.count("select count(*) from auth.refresh_tokens where session_id = $1 and not revoked", sessionID); n != 0 {
		t.Errorf("%d live refresh tokens left in the session after the replay", n)
	}
	if n := w.count("select count(*) from auth.sessions"); n > sessionsBefore {
		t.Errorf("the replay created a session")
	}
	// The legitimate holder's current token went with its family.
	if r := refresh(t2); r.status != http.StatusBadRequest || r.str("access_token") != "" {
		t.Errorf("current token after the family was revoked: %d %s", r.status, r.raw)
	}
	wantError(t, "unknown refresh token", refresh("abcdefghijkl"), 400, "refresh_token_not_found",
		"Invalid Refresh Token: Refresh Token Not Found")
	wantError(t, "malformed refresh token", refresh("x"), 400, "validation_failed", "")
}
