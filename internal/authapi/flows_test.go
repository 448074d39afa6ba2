package authapi

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"

	"github.com/pgreflect/pgreflect/internal/config"
	"github.com/pgreflect/pgreflect/oidc"
	"github.com/pgreflect/pgreflect/testidp"
)

func TestImplicitFlow(t *testing.T) {
	w := newWorld(t, nil)
	w.idp.SetUser(testidp.User{Sub: "sub-implicit", Email: "Implicit.User@Example.com", EmailVerified: true, Name: "Imp"})
	providerURL, final := w.flow(url.Values{"provider": {"google"}, "redirect_to": {tAppURL + "?keep=1"}})

	pq := providerURL.Query()
	if pq.Get("client_id") != tWebClient || pq.Get("redirect_uri") != w.inst.apiURL+"/auth/v1/callback" || pq.Get("response_type") != "code" {
		t.Errorf("provider URL %v", providerURL)
	}
	if got := strings.Fields(pq.Get("scope")); !slices.Contains(got, "openid") || !slices.Contains(got, "email") || !slices.Contains(got, "profile") {
		t.Errorf("scope %q", pq.Get("scope"))
	}

	if got := final.Scheme + "://" + final.Host + final.Path; got != tAppURL || final.Query().Get("keep") != "1" {
		t.Fatalf("final redirect %v", final)
	}
	// The fragment is url.Values.Encode(): keys sorted, provider_token always there, no provider refresh token
	// without offline access.
	var keys []string
	for _, kv := range strings.Split(final.Fragment, "&") {
		k, _, _ := strings.Cut(kv, "=")
		keys = append(keys, k)
	}
	want := []string{"access_token", "expires_at", "expires_in", "provider_token", "refresh_token", "sb", "token_type"}
	if !slices.Equal(keys, want) {
		t.Errorf("fragment keys %v, want %v", keys, want)
	}
	frag, _ := url.ParseQuery(final.Fragment)
	if frag.Get("token_type") != "bearer" || frag.Get("provider_token") == "" || len(frag.Get("refresh_token")) != 12 {
		t.Errorf("fragment %v", frag)
	}
	expiresAt, _ := strconv.ParseInt(frag.Get("expires_at"), 10, 64)
	expiresIn, _ := strconv.ParseInt(frag.Get("expires_in"), 10, 64)
	if d := expiresAt - time.Now().Unix() - expiresIn; d < -2 || d > 2 || expiresIn < 3590 || expiresIn > 3600 {
		t.Errorf("expires_at %d expires_in %d", expiresAt, expiresIn)
	}
	claims := w.claims(frag.Get("access_token"))
	if claims["iss"] != w.inst.apiURL+"/auth/v1" || claims["aud"] != "authenticated" || claims["role"] != "authenticated" ||
		claims["email"] != "implicit.user@example.com" || claims["phone"] != "" || claims["aal"] != "aal1" ||
		claims["is_anonymous"] != false || claims["session_id"] == "" {
		t.Errorf("claims %v", claims)
	}
	amr, _ := claims["amr"].([]any)
	if len(amr) != 1 || amr[0].(map[string]any)["method"] != "oauth" {
		t.Errorf("amr %v", claims["amr"])
	}
	if am, _ := claims["app_metadata"].(map[string]any); am["provider"] != "google" || !slices.Equal(toStrings(am["providers"]), []string{"google"}) {
		t.Errorf("app_metadata %v", claims["app_metadata"])
	}
	if n := w.count(`select count(*) from auth.flow_state`); n != 0 {
		t.Errorf("%d flow states left after an implicit flow", n)
	}

	u := w.api(http.MethodGet, "/user", nil, frag.Get("access_token"))
	if u.status != http.StatusOK || u.str("id") != claims["sub"] || u.str("email") != "implicit.user@example.com" {
		t.Fatalf("/user: %d %s", u.status, u.raw)
	}
	ids, _ := u.body["identities"].([]any)
	if len(ids) != 1 {
		t.Fatalf("identities %v", u.body["identities"])
	}
	id := ids[0].(map[string]any)
	if id["id"] != "sub-implicit" || id["provider"] != "google" || id["user_id"] != claims["sub"] || id["identity_id"] == "" ||
		id["email"] != "implicit.user@example.com" {
		t.Errorf("identity %v", id)
	}
	if md, _ := u.body["user_metadata"].(map[string]any); md["name"] != "Imp" || md["full_name"] != "Imp" || md["email_verified"] != true {
		t.Errorf("user_metadata %v", u.body["user_metadata"])
	}
}

func (w *world) claims(token string) map[string]any {
	w.t.Helper()
	c, err := w.keys.Verify(token)
	if err != nil {
		w.t.Fatalf("access token does not verify: %v", err)
	}
	return c
}

func toStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, e := range list {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}

func TestPKCEFlowProviderTokens(t *testing.T) {
	w := newWorld(t, nil)
	for _, offline := range []bool{false, true} {
		p := newPKCE()
		q := url.Values{"provider": {"google"}, "redirect_to": {tAppURL}, "code_challenge": {p.challenge}, "code_challenge_method": {"S256"}}
		if offline {
			q.Set("access_type", "offline")
			q.Set("prompt", "consent")
		}
		providerURL, final := w.flow(q)
		if offline && (providerURL.Query().Get("access_type") != "offline" || providerURL.Query().Get("prompt") != "consent") {
			t.Errorf("pass-through parameters missing: %v", providerURL)
		}
		if providerURL.Query().Has("code_challenge") {
			t.Errorf("the client's code challenge went to the provider: %v", providerURL)
		}
		code := final.Query().Get("code")
		if final.Fragment != "" || len(code) != 36 {
			t.Fatalf("PKCE callback redirect %v", final)
		}
		if n := w.count(`select count(*) from auth.flow_state where provider_access_token is not null`); n != 1 {
			t.Errorf("flow states holding provider tokens: %d", n)
		}
		r := w.api(http.MethodPost, "/token?grant_type=pkce", map[string]string{"auth_code": code, "code_verifier": p.verifier}, "")
		if r.status != http.StatusOK || r.str("provider_token") == "" || r.str("token_type") != "bearer" {
			t.Fatalf("pkce grant: %d %s", r.status, r.raw)
		}
		if _, has := r.body["provider_refresh_token"]; has != offline {
			t.Errorf("offline=%v: provider_refresh_token present=%v", offline, has)
		}
		if r.header.Get("sb-auth-user-id") == "" || r.header.Get("sb-auth-session-id") != w.claims(r.str("access_token"))["session_id"] {
			t.Errorf("sb-auth headers %v", r.header)
		}
		if n := w.count(`select count(*) from auth.flow_state`); n != 0 {
			t.Errorf("%d flow states left after the exchange (provider tokens must not outlive it)", n)
		}
		again := w.api(http.MethodPost, "/token?grant_type=pkce", map[string]string{"auth_code": code, "code_verifier": p.verifier}, "")
		wantError(t, "second exchange", again, 404, "flow_state_not_found", "invalid flow state, no valid flow state found")
	}
}

func TestPKCEPlainAndRetryAfterBadVerifier(t *testing.T) {
	w := newWorld(t, nil)
	verifier := strings.Repeat("v", 50)
	_, final := w.flow(url.Values{"provider": {"google"}, "code_challenge": {verifier}, "code_challenge_method": {"plain"}})
	if !strings.HasPrefix(final.String(), tSiteURL) {
		t.Errorf("without redirect_to the flow ends at the site URL, got %v", final)
	}
	code := final.Query().Get("code")
	bad := w.api(http.MethodPost, "/token?grant_type=pkce", map[string]string{"auth_code": code, "code_verifier": verifier + "x"}, "")
	wantError(t, "wrong verifier", bad, 400, "bad_code_verifier", "code challenge does not match previously saved code verifier")
	empty := w.api(http.MethodPost, "/token?grant_type=pkce", map[string]string{"auth_code": code}, "")
	wantError(t, "no verifier", empty, 400, "validation_failed", "invalid request: both auth code and code verifier should be non-empty")
	ok := w.api(http.MethodPost, "/token?grant_type=pkce", map[string]string{"auth_code": code, "code_verifier": verifier}, "")
	if ok.status != http.StatusOK {
		t.Fatalf("retry with the right verifier: %d %s", ok.status, ok.raw)
	}
}

func TestPKCECodeExpires(t *testing.T) {
	w := newWorld(t, nil)
	p := newPKCE()
	_, final := w.flow(url.Values{"provider": {"google"}, "code_challenge": {p.challenge}, "code_challenge_method": {"s256"}})
	if _, err := w.pool.Exec(t.Context(), `update auth.flow_state set created_at = now() - interval '301 seconds'`); err != nil {
		t.Fatal(err)
	}
	r := w.api(http.MethodPost, "/token?grant_type=pkce", map[string]string{"auth_code": final.Query().Get("code"), "code_verifier": p.verifier}, "")
	wantError(t, "expired code", r, 422, "flow_state_expired", "invalid flow state, flow state has expired")
	if n := w.count(`select count(*) from auth.sessions`); n != 0 {
		t.Errorf("an expired code opened %d sessions", n)
	}
}

func TestIDTokenGrant(t *testing.T) {
	w := newWorld(t, nil)
	user := testidp.User{Sub: "sub-idtoken", Email: "id@example.com", EmailVerified: true}
	grant := func(claims map[string]any, body map[string]any) response {
		t.Helper()
		if body == nil {
			body = map[string]any{}
		}
		body["provider"] = "google"
		body["id_token"] = w.idp.MintIDToken(claims, testidp.MintOptions{})
		return w.api(http.MethodPost, "/token?grant_type=id_token", body, "")
	}

	// Without a nonce on either side.
	r := grant(w.idp.Claims(user), nil)
	if r.status != http.StatusOK || r.body["provider_token"] != nil {
		t.Fatalf("no nonce: %d %s", r.status, r.raw)
	}
	firstUser := w.claims(r.str("access_token"))["sub"]

	// With a nonce: the token carries hex(sha256(raw)), the request the raw value.
	c := w.idp.Claims(user)
	c["nonce"] = oidc.HashNonce("raw-nonce")
	r = grant(c, map[string]any{"nonce": "raw-nonce"})
	if r.status != http.StatusOK {
		t.Fatalf("nonce: %d %s", r.status, r.raw)
	}
	if got := w.claims(r.str("access_token"))["sub"]; got != firstUser {
		t.Errorf("the same identity signed in as another user: %v vs %v", got, firstUser)
	}
	r = grant(c, map[string]any{"nonce": "other"})
	wantOAuthError(t, "nonce mismatch", r, "invalid nonce", "Nonces mismatch")
	c["nonce"] = "raw-nonce" // the raw value in the token is not accepted either
	r = grant(c, map[string]any{"nonce": "raw-nonce"})
	wantOAuthError(t, "unhashed nonce in token", r, "invalid nonce", "Nonces mismatch")
	r = grant(c, nil)
	wantOAuthError(t, "nonce only in token", r, "invalid request", "Passed nonce and nonce in id_token should either both exist or not.")
	r = grant(w.idp.Claims(user), map[string]any{"nonce": "raw-nonce"})
	wantOAuthError(t, "nonce only in request", r, "invalid request", "Passed nonce and nonce in id_token should either both exist or not.")

	// Any configured client ID is an accepted audience.
	c = w.idp.Claims(user)
	c["aud"] = tIOSClient
	if r = grant(c, nil); r.status != http.StatusOK {
		t.Errorf("second client ID: %d %s", r.status, r.raw)
	}
	c["aud"] = "someone-else"
	wantOAuthError(t, "foreign audience", grant(c, nil), "invalid request", "Unacceptable audience in id_token: [someone-else]")

	// at_hash is checked when the access token is sent.
	c = w.idp.Claims(user)
	c["at_hash"] = "AAAAAAAAAAAAAAAAAAAAAA"
	wantOAuthError(t, "at_hash mismatch", grant(c, map[string]any{"access_token": "ya29.token"}), "invalid request", "Bad ID token")
	if r = grant(c, nil); r.status != http.StatusOK {
		t.Errorf("at_hash without access_token is ignored: %d %s", r.status, r.raw)
	}

	// Request-shape errors.
	r = w.api(http.MethodPost, "/token?grant_type=id_token", map[string]any{"provider": "google"}, "")
	wantOAuthError(t, "no id_token", r, "invalid request", "id_token required")
	r = w.api(http.MethodPost, "/token?grant_type=id_token", map[string]any{"id_token": "x"}, "")
	wantOAuthError(t, "no provider", r, "invalid request", "provider or client_id and issuer required")
	r = w.api(http.MethodPost, "/token?grant_type=id_token", map[string]any{"id_token": "x", "provider": "nosuch"}, "")
	wantError(t, "unknown provider", r, 400, "validation_failed", `Custom OIDC provider "nosuch" not allowed`)
	// By issuer instead of name.
	r = w.api(http.MethodPost, "/token?grant_type=id_token",
		map[string]any{"id_token": w.idp.MintIDToken(w.idp.Claims(user), testidp.MintOptions{}), "issuer": w.idp.URL(), "client_id": tWebClient}, "")
	if r.status != http.StatusOK {
		t.Errorf("by issuer: %d %s", r.status, r.raw)
	}
}

func TestIDTokenSkipNonceAndDisabledProvider(t *testing.T) {
	w := newWorld(t, func(a *config.Auth) {
		p := a.External["google"]
		p.SkipNonceCheck = true
		a.External["google"] = p
	})
	c := w.idp.Claims(testidp.DefaultUser())
	c["nonce"] = "whatever-the-ios-sdk-put-here"
	r := w.api(http.MethodPost, "/token?grant_type=id_token",
		map[string]any{"provider": "google", "id_token": w.idp.MintIDToken(c, testidp.MintOptions{})}, "")
	if r.status != http.StatusOK {
		t.Fatalf("skip_nonce_check: %d %s", r.status, r.raw)
	}

	w2 := newWorld(t, func(a *config.Auth) {
		p := a.External["google"]
		p.Enabled = false
		a.External["google"] = p
	})
	r = w2.api(http.MethodPost, "/token?grant_type=id_token",
		map[string]any{"provider": "google", "id_token": w2.idp.MintIDToken(w2.idp.Claims(testidp.DefaultUser()), testidp.MintOptions{})}, "")
	wantError(t, "disabled provider", r, 400, "provider_disabled", `Provider (issuer "`+w2.idp.URL()+`") is not enabled`)
}

func TestAccountLinkingAndSignupRules(t *testing.T) {
	w := newWorld(t, nil)
	// The code flow and the ID-token grant share accounts: same provider subject, same user.
	w.idp.SetUser(testidp.User{Sub: "sub-link", Email: "link@example.com", EmailVerified: true})
	_, final := w.flow(url.Values{"provider": {"google"}})
	frag, _ := url.ParseQuery(final.Fragment)
	viaCode := w.claims(frag.Get("access_token"))["sub"]
	viaID := w.claims(w.idTokenSignIn(testidp.User{Sub: "sub-link", Email: "link@example.com", EmailVerified: true}).str("access_token"))["sub"]
	if viaCode != viaID {
		t.Errorf("code flow user %v, id_token user %v", viaCode, viaID)
	}
	// A second provider identity with the same verified email links to that user.
	if _, err := w.pool.Exec(t.Context(), `insert into auth.identities (provider_id, user_id, identity_data, provider)
		select 'gh-1', id, '{"email":"other@example.com"}', 'github' from auth.users limit 0`); err != nil {
		t.Fatal(err)
	}
	other := w.idTokenSignIn(testidp.User{Sub: "sub-link-2", Email: "LINK@example.com", EmailVerified: true})
	if got := w.claims(other.str("access_token"))["sub"]; got != viaCode {
		t.Errorf("verified email did not link: %v vs %v", got, viaCode)
	}
	if n := w.count(`select count(*) from auth.identities where user_id = $1::uuid`, viaCode); n != 2 {
		t.Errorf("identities of the linked user: %d", n)
	}
	// An unverified email never links: a new user without the email, and the sign-in is refused until the
	// provider verifies it.
	r := w.api(http.MethodPost, "/token?grant_type=id_token", map[string]any{"provider": "google",
		"id_token": w.idp.MintIDToken(w.idp.Claims(testidp.User{Sub: "sub-unverified", Email: "link@example.com"}), testidp.MintOptions{})}, "")
	if r.status == http.StatusOK {
		t.Fatalf("unverified email signed in: %s", r.raw)
	}
	if n := w.count(`select count(*) from auth.identities i join auth.users u on u.id = i.user_id
		where i.provider_id = 'sub-unverified' and u.id = $1::uuid`, viaCode); n != 0 {
		t.Errorf("an unverified email was linked to the existing account")
	}
	// Unverified email that nobody holds: the account is created but must be verified first.
	r = w.api(http.MethodPost, "/token?grant_type=id_token", map[string]any{"provider": "google",
		"id_token": w.idp.MintIDToken(w.idp.Claims(testidp.User{Sub: "sub-new-unverified", Email: "new@example.com"}), testidp.MintOptions{})}, "")
	wantError(t, "unverified email", r, 422, "provider_email_needs_verification",
		"Unverified email with google. Verify the email with google in order to sign in")

	// Signups disabled: known users still sign in, new ones are refused.
	w2 := newWorld(t, func(a *config.Auth) { a.EnableSignup = false })
	r = w2.api(http.MethodPost, "/token?grant_type=id_token", map[string]any{"provider": "google",
		"id_token": w2.idp.MintIDToken(w2.idp.Claims(testidp.DefaultUser()), testidp.MintOptions{})}, "")
	wantError(t, "signup disabled", r, 422, "signup_disabled", "Signups not allowed for this instance")
	if n := w2.count(`select count(*) from auth.users`); n != 0 {
		t.Errorf("signup disabled created %d users", n)
	}
	_, final = w2.flow(url.Values{"provider": {"google"}, "redirect_to": {tAppURL}})
	if final.Query().Get("error") != "access_denied" || final.Query().Get("error_code") != "signup_disabled" {
		t.Errorf("signup disabled in the code flow: %v", final)
	}
}

func TestRefreshRotationAndReuse(t *testing.T) {
	w := newWorld(t, func(a *config.Auth) { a.RefreshTokenReuseInterval = 0 })
	s := w.idTokenSignIn(testidp.DefaultUser())
	refresh := func(tok string) response {
		t.Helper()
		return w.api(http.MethodPost, "/token?grant_type=refresh_token", map[string]string{"refresh_token": tok}, "")
	}
	t0 := s.str("refresh_token")
	r1 := refresh(t0)
	t1 := r1.str("refresh_token")
	if r1.status != http.StatusOK || t1 == t0 || len(t1) != 12 {
		t.Fatalf("refresh: %d %s", r1.status, r1.raw)
	}
	if w.claims(r1.str("access_token"))["session_id"] != w.claims(s.str("access_token"))["session_id"] {
		t.Errorf("refresh changed the session")
	}
	// The client lost the answer and retries with t0: it gets the live child t1 back, no new token.
	again := refresh(t0)
	if again.status != http.StatusOK || again.str("refresh_token") != t1 {
		t.Errorf("retry with the parent of the live token: %d %s (want %s)", again.status, again.raw, t1)
	}
	t2 := refresh(t1).str("refresh_token")
	// t0 is now two generations back and past the reuse interval: the family goes.
	wantError(t, "reused token", refresh(t0), 400, "refresh_token_already_used", "Invalid Refresh Token: Already Used")
	wantError(t, "live token after family revocation", refresh(t2), 400, "refresh_token_not_found", "")
	wantError(t, "access token after family revocation", w.api(http.MethodGet, "/user", nil, r1.str("access_token")),
		403, "session_not_found", "")
	if n := w.count(`select count(*) from auth.refresh_tokens`); n != 0 {
		t.Errorf("%d refresh tokens survive the revocation", n)
	}
	wantError(t, "short token", refresh("abc"), 400, "validation_failed", "Refresh token is not valid")
	wantError(t, "bad characters", refresh("ABCDEFGHIJKL"), 400, "validation_failed", "Refresh token is not valid")
}

func TestRefreshReuseIntervalTolerance(t *testing.T) {
	w := newWorld(t, func(a *config.Auth) { a.RefreshTokenReuseInterval = 30 })
	s := w.idTokenSignIn(testidp.DefaultUser())
	refresh := func(tok string) response {
		return w.api(http.MethodPost, "/token?grant_type=refresh_token", map[string]string{"refresh_token": tok}, "")
	}
	t0 := s.str("refresh_token")
	t1 := refresh(t0).str("refresh_token")
	t2 := refresh(t1).str("refresh_token")
	refresh(t2)
	// Within the interval, a stale token (two clients racing) still gets a fresh child.
	r := refresh(t1)
	if r.status != http.StatusOK || r.str("refresh_token") == t1 || r.str("refresh_token") == t2 {
		t.Fatalf("reuse within the interval: %d %s", r.status, r.raw)
	}
	// Outside it, the same reuse is an attack.
	if _, err := w.pool.Exec(t.Context(), `update auth.refresh_tokens set updated_at = now() - interval '31 seconds' where token = $1`, t0); err != nil {
		t.Fatal(err)
	}
	wantError(t, "reuse after the interval", refresh(t0), 400, "refresh_token_already_used", "Invalid Refresh Token: Already Used")
}

func TestLogoutScopes(t *testing.T) {
	w := newWorld(t, nil)
	a := w.idTokenSignIn(testidp.DefaultUser()).str("access_token")
	b := w.idTokenSignIn(testidp.DefaultUser()).str("access_token")
	c := w.idTokenSignIn(testidp.DefaultUser()).str("access_token")
	wantError(t, "bad scope", w.api(http.MethodPost, "/logout?scope=everything", nil, a), 400, "validation_failed", "")

	if r := w.api(http.MethodPost, "/logout?scope=local", nil, a); r.status != http.StatusNoContent || len(r.raw) != 0 {
		t.Fatalf("local logout: %d %s", r.status, r.raw)
	}
	wantError(t, "/user after local logout", w.api(http.MethodGet, "/user", nil, a), 403, "session_not_found", "")
	wantError(t, "logout again", w.api(http.MethodPost, "/logout", nil, a), 403, "session_not_found", "")
	if r := w.api(http.MethodGet, "/user", nil, b); r.status != http.StatusOK {
		t.Errorf("other session after local logout: %d", r.status)
	}

	if r := w.api(http.MethodPost, "/logout?scope=others", nil, b); r.status != http.StatusNoContent {
		t.Fatalf("others logout: %d %s", r.status, r.raw)
	}
	wantError(t, "/user of another session", w.api(http.MethodGet, "/user", nil, c), 403, "session_not_found", "")
	if r := w.api(http.MethodGet, "/user", nil, b); r.status != http.StatusOK {
		t.Errorf("own session after others logout: %d", r.status)
	}

	d := w.idTokenSignIn(testidp.DefaultUser())
	if r := w.api(http.MethodPost, "/logout", nil, b); r.status != http.StatusNoContent {
		t.Fatalf("global logout: %d %s", r.status, r.raw)
	}
	wantError(t, "/user after global logout", w.api(http.MethodGet, "/user", nil, d.str("access_token")), 403, "session_not_found", "")
	r := w.api(http.MethodPost, "/token?grant_type=refresh_token", map[string]string{"refresh_token": d.str("refresh_token")}, "")
	wantError(t, "refresh after global logout", r, 400, "refresh_token_not_found", "")
	if n := w.count(`select count(*) from auth.sessions`); n != 0 {
		t.Errorf("%d sessions left after global logout", n)
	}
}

func TestUserAuthentication(t *testing.T) {
	w := newWorld(t, nil)
	wantError(t, "no bearer", w.do(http.MethodGet, w.inst.apiURL+"/auth/v1/user", nil,
		map[string]string{"apikey": w.anon, "X-Supabase-Api-Version": "2024-01-01"}), 401, "no_authorization", "This endpoint requires a valid Bearer token")
	wantError(t, "garbage", w.api(http.MethodGet, "/user", nil, "not-a-jwt"), 403, "bad_jwt", "")
	wantError(t, "anon key as user", w.api(http.MethodGet, "/user", nil, w.anon), 403, "bad_jwt", "")
	other, _ := w.keys.Sign(jwt.MapClaims{"sub": "not-a-uuid", "exp": time.Now().Add(time.Minute).Unix()})
	wantError(t, "sub not a uuid", w.api(http.MethodGet, "/user", nil, other), 400, "bad_jwt", "")
	ghost, _ := w.keys.Sign(jwt.MapClaims{"sub": "6b1f9a7e-2c3d-4e5f-8a9b-0c1d2e3f4a5b", "exp": time.Now().Add(time.Minute).Unix()})
	wantError(t, "unknown user", w.api(http.MethodGet, "/user", nil, ghost), 403, "user_not_found", "")
	s := w.idTokenSignIn(testidp.DefaultUser())
	r := w.do(http.MethodGet, w.inst.apiURL+"/auth/v1/user", nil, map[string]string{"apikey": w.anon,
		"Authorization": "Bearer " + s.str("access_token"), "X-JWT-AUD": "something-else", "X-Supabase-Api-Version": "2024-01-01"})
	wantError(t, "X-JWT-AUD mismatch", r, 400, "validation_failed", "")
}

func TestAPIKeyGateAndInfoRoutes(t *testing.T) {
	w := newWorld(t, nil)
	base := w.inst.apiURL + "/auth/v1"
	r := w.do(http.MethodGet, base+"/settings", nil, nil)
	if r.status != 401 || r.str("message") != "No API key found in request" {
		t.Errorf("no apikey: %d %s", r.status, r.raw)
	}
	r = w.do(http.MethodGet, base+"/settings", nil, map[string]string{"apikey": "wrong"})
	if r.status != 401 || r.str("message") != "Invalid API key" {
		t.Errorf("wrong apikey: %d %s", r.status, r.raw)
	}
	r = w.do(http.MethodPost, base+"/token?grant_type=refresh_token", `{"refresh_token":"abcdefghijkl"}`, nil)
	if r.status != 401 {
		t.Errorf("token without apikey: %d", r.status)
	}
	if r = w.do(http.MethodOptions, base+"/token?grant_type=pkce", nil, map[string]string{"Origin": "https://app.example.com",
		"Access-Control-Request-Method": "POST"}); r.status == 401 {
		t.Errorf("preflight rejected by the apikey check")
	}
	// The service-role key is an API key too.
	if r = w.do(http.MethodGet, base+"/health", nil, map[string]string{"apikey": w.service}); r.status != 200 || r.str("name") != "GoTrue" {
		t.Errorf("health: %d %s", r.status, r.raw)
	}
	r = w.api(http.MethodGet, "/settings", nil, "")
	ext, _ := r.body["external"].(map[string]any)
	if r.status != 200 || ext["google"] != true || ext["github"] != false || r.body["disable_signup"] != false {
		t.Errorf("settings: %d %s", r.status, r.raw)
	}
	// The JWKS is public and never lists the HMAC secret.
	r = w.do(http.MethodGet, base+"/.well-known/jwks.json", nil, nil)
	if keys, ok := r.body["keys"].([]any); r.status != 200 || !ok || len(keys) != 0 || r.header.Get("Cache-Control") != "public, max-age=600" {
		t.Errorf("jwks: %d %s %v", r.status, r.raw, r.header)
	}
}

func TestErrorShapes(t *testing.T) {
	w := newWorld(t, nil)
	url := w.inst.apiURL + "/auth/v1/token?grant_type=magic"
	old := w.do(http.MethodPost, url, `{}`, map[string]string{"apikey": w.anon})
	if old.status != 400 || old.body["code"] != float64(400) || old.str("error_code") != "invalid_credentials" ||
		old.str("msg") != "unsupported_grant_type" || old.header.Get("X-Supabase-Api-Version") != "" ||
		old.header.Get("x-sb-error-code") != "invalid_credentials" {
		t.Errorf("legacy shape: %d %s %v", old.status, old.raw, old.header)
	}
	cur := w.do(http.MethodPost, url, `{}`, map[string]string{"apikey": w.anon, "X-Supabase-Api-Version": "2024-01-01"})
	if cur.status != 400 || cur.str("code") != "invalid_credentials" || cur.str("message") != "unsupported_grant_type" ||
		cur.header.Get("X-Supabase-Api-Version") != "2024-01-01" || cur.body["msg"] != nil {
		t.Errorf("2024-01-01 shape: %d %s %v", cur.status, cur.raw, cur.header)
	}
	bad := w.do(http.MethodPost, w.inst.apiURL+"/auth/v1/token?grant_type=pkce", `{not json`, map[string]string{"apikey": w.anon})
	if bad.status != 400 || bad.str("error_code") != "bad_json" {
		t.Errorf("bad json: %d %s", bad.status, bad.raw)
	}
	big := w.do(http.MethodPost, w.inst.apiURL+"/auth/v1/token?grant_type=pkce", `{"auth_code":"`+strings.Repeat("a", 2<<20)+`"}`,
		map[string]string{"apikey": w.anon, "X-Supabase-Api-Version": "2024-01-01"})
	if big.status != http.StatusRequestEntityTooLarge || big.str("code") != "request_entity_too_large" {
		t.Errorf("large body: %d %.200s", big.status, big.raw)
	}
}

func TestAuthorizeValidation(t *testing.T) {
	w := newWorld(t, func(a *config.Auth) {
		a.External["github"] = config.Provider{Enabled: false, ClientID: "gh", Secret: "s", URL: "http://127.0.0.1:1"}
	})
	get := func(q url.Values) response {
		return w.do(http.MethodGet, w.inst.apiURL+"/auth/v1/authorize?"+q.Encode(), nil, map[string]string{"X-Supabase-Api-Version": "2024-01-01"})
	}
	wantError(t, "unknown provider", get(url.Values{"provider": {"nosuch"}}), 400, "validation_failed", "Unsupported provider: Provider nosuch could not be found")
	wantError(t, "disabled provider", get(url.Values{"provider": {"github"}}), 400, "validation_failed", "Unsupported provider: provider is not enabled")
	ch := newPKCE().challenge
	wantError(t, "challenge without method", get(url.Values{"provider": {"google"}, "code_challenge": {ch}}), 400,
		"validation_failed", "PKCE flow requires code_challenge_method and code_challenge")
	wantError(t, "bad method", get(url.Values{"provider": {"google"}, "code_challenge": {ch}, "code_challenge_method": {"md5"}}), 400,
		"validation_failed", "Invalid code_challenge_method")
	wantError(t, "short challenge", get(url.Values{"provider": {"google"}, "code_challenge": {"abc"}, "code_challenge_method": {"s256"}}), 400,
		"validation_failed", "")
	wantError(t, "bad characters", get(url.Values{"provider": {"google"}, "code_challenge": {strings.Repeat("#", 43)}, "code_challenge_method": {"s256"}}), 400,
		"validation_failed", "")
	if n := w.count(`select count(*) from auth.flow_state`); n != 0 {
		t.Errorf("rejected requests left %d flow states", n)
	}

	// Reserved parameters never reach the provider; others do, and scopes always include openid email profile.
	r := get(url.Values{"provider": {"Google"}, "state": {"evil"}, "client_id": {"evil"}, "redirect_uri": {"https://evil.example"},
		"response_type": {"token"}, "Code_Verifier": {"x"}, "login_hint": {"me@example.com"}, "nonce": {"n1"}, "scopes": {"calendar drive"}})
	if r.status != http.StatusFound {
		t.Fatalf("authorize: %d %s", r.status, r.raw)
	}
	loc, _ := url.Parse(r.header.Get("Location"))
	q := loc.Query()
	var state string
	if err := w.pool.QueryRow(t.Context(), `select id::text from auth.flow_state`).Scan(&state); err != nil {
		t.Fatal(err)
	}
	if q.Get("state") != state || q.Get("client_id") != tWebClient || q.Get("redirect_uri") != w.inst.apiURL+"/auth/v1/callback" ||
		q.Get("response_type") != "code" || q.Has("Code_Verifier") || q.Get("login_hint") != "me@example.com" || q.Get("nonce") != "n1" {
		t.Errorf("provider query %v", q)
	}
	if got := strings.Fields(q.Get("scope")); !slices.Equal(got, []string{"openid", "email", "profile", "calendar", "drive"}) {
		t.Errorf("scope %v", got)
	}
}

func TestRedirectAllowListAndCallbackErrors(t *testing.T) {
	w := newWorld(t, nil)
	// A redirect_to outside the list falls back to the site URL: no open redirect.
	_, final := w.flow(url.Values{"provider": {"google"}, "redirect_to": {"https://evil.example.com/steal"}})
	if !strings.HasPrefix(final.String(), tSiteURL+"#") && !strings.HasPrefix(final.String(), tSiteURL+"/#") {
		t.Errorf("disallowed redirect_to went to %v", final)
	}
	_, final = w.flow(url.Values{"provider": {"google"}, "redirect_to": {"myapp://callback"}})
	if !strings.HasPrefix(final.String(), "myapp://callback#access_token=") {
		t.Errorf("custom scheme redirect %v", final)
	}

	// The provider reports an error: passed through to the app, query and fragment, no error_code.
	status, providerURL := w.location(w.inst.apiURL + "/auth/v1/authorize?provider=google&redirect_to=" + url.QueryEscape(tAppURL))
	if status != http.StatusFound {
		t.Fatal(status)
	}
	state := providerURL.Query().Get("state")
	status, loc := w.location(w.inst.apiURL + "/auth/v1/callback?error=access_denied&error_description=User+cancelled&state=" + state)
	frag, _ := url.ParseQuery(loc.Fragment)
	if status != http.StatusFound || !strings.HasPrefix(loc.String(), tAppURL+"?") || loc.Query().Get("error") != "access_denied" ||
		loc.Query().Get("error_description") != "User cancelled" || loc.Query().Has("error_code") || frag.Get("error") != "access_denied" || !frag.Has("sb") {
		t.Errorf("provider error redirect: %d %v", status, loc)
	}
	// Missing code.
	_, providerURL = w.location(w.inst.apiURL + "/auth/v1/authorize?provider=google&redirect_to=" + url.QueryEscape(tAppURL))
	status, loc = w.location(w.inst.apiURL + "/auth/v1/callback?state=" + providerURL.Query().Get("state"))
	if status != http.StatusFound || loc.Query().Get("error_code") != "bad_oauth_callback" || loc.Query().Get("error") != "invalid_request" {
		t.Errorf("missing code: %d %v", status, loc)
	}
	// A code the provider never issued.
	_, providerURL = w.location(w.inst.apiURL + "/auth/v1/authorize?provider=google&redirect_to=" + url.QueryEscape(tAppURL))
	status, loc = w.location(w.inst.apiURL + "/auth/v1/callback?code=forged-code&state=" + providerURL.Query().Get("state"))
	if status != http.StatusFound || loc.Query().Get("error") != "server_error" || loc.Query().Get("error_description") != "Unable to exchange external code: forg" {
		t.Errorf("forged code: %d %v", status, loc)
	}
	// POST /callback (form_post) reads the state from the form.
	r := w.do(http.MethodPost, w.inst.apiURL+"/auth/v1/callback", nil, nil)
	if loc, _ := url.Parse(r.header.Get("Location")); r.status != http.StatusSeeOther || loc.Query().Get("error_code") != "bad_oauth_callback" ||
		!strings.HasPrefix(loc.String(), tSiteURL) {
		t.Errorf("POST callback without state: %d %v", r.status, r.header.Get("Location"))
	}
	if n := w.count(`select count(*) from auth.sessions`); n != 2 {
		t.Errorf("sessions: %d, want only the two successful sign-ins", n)
	}
}

func TestValidRedirect(t *testing.T) {
	st, err := buildSettings(config.Auth{SiteURL: "https://site.example.com",
		AdditionalRedirectURLs: []string{"http://localhost:3000", "https://*.example.org/**", "myapp://**", "https://exact.example.net/cb"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for raw, want := range map[string]bool{
		"https://site.example.com/anything?x=1":  true,
		"https://site.example.com:8443/x":        false,
		"http://site.example.com/x":              false,
		"http://localhost:3000":                  true,
		"http://localhost:3000/auth/callback":    false, // exact entry, no glob
		"https://a.example.org/cb":               true,
		"https://a.b.example.org/cb":             false, // * does not cross dots
		"https://evil.com/?x=.example.org/":      false,
		"https://exact.example.net/cb#frag":      true,
		"https://exact.example.net/cb2":          false,
		"myapp://login":                          true,
		"http://127.0.0.1:9999/x":                true, // loopback IPs, as Supabase Auth
		"http://10.0.0.1/x":                      false,
		"http://2130706433/":                     false, // decimal host
		"https://evil.com\\@site.example.com/":   false,
		"javascript:alert(1)":                    false,
		"":                                       false,
		"//evil.com":                             false,
		"https://site.example.com.evil.com/":     false,
		"https://user@evil.com/site.example.com": false,
	} {
		if got := st.validRedirect(raw); got != want {
			t.Errorf("validRedirect(%q) = %v, want %v", raw, got, want)
		}
	}
	if got := st.redirectTarget("https://evil.com", "https://a.example.org/from"); got != "https://a.example.org/from" {
		t.Errorf("referer fallback: %s", got)
	}
}

func TestSQLHelpersSeeTheUser(t *testing.T) {
	w := newWorld(t, nil)
	token := w.idTokenSignIn(testidp.DefaultUser()).str("access_token")
	claims := w.claims(token)
	raw, _ := json.Marshal(claims)
	tx, err := w.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(t.Context())
	if _, err := tx.Exec(t.Context(), `select set_config('request.jwt.claims', $1, true)`, string(raw)); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(t.Context(), `set local role authenticated`); err != nil {
		t.Fatal(err)
	}
	var uid, role, email, provider string
	if err := tx.QueryRow(t.Context(), `select auth.uid()::text, auth.role(), auth.email(), auth.jwt()->'app_metadata'->>'provider'`).
		Scan(&uid, &role, &email, &provider); err != nil {
		t.Fatal(err)
	}
	if uid != claims["sub"] || role != "authenticated" || email != testidp.DefaultUser().Email || provider != "google" {
		t.Errorf("helpers: %s %s %s %s", uid, role, email, provider)
	}
	// The API roles cannot read the auth tables.
	if _, err := tx.Exec(t.Context(), `select * from auth.users`); err == nil {
		t.Errorf("role authenticated reads auth.users")
	}
}

func TestAsymmetricUserTokens(t *testing.T) {
	w := newWorld(t, nil)
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jwk, _ := json.Marshal(jose.JSONWebKey{Key: ec, KeyID: "b81269f1-21d8-4f2e-b719-c2240a840d90"})
	keys, err := w.keys.WithSigningKeys([]byte("[" + string(jwk) + "]"))
	if err != nil {
		t.Fatal(err)
	}
	w.keys = keys
	w.inst = w.start(nil)
	s := w.idTokenSignIn(testidp.DefaultUser())
	if h := tokenHeader(t, s.str("access_token")); h["alg"] != "ES256" || h["kid"] != "b81269f1-21d8-4f2e-b719-c2240a840d90" {
		t.Fatalf("header %v", h)
	}
	if r := w.api(http.MethodGet, "/user", nil, s.str("access_token")); r.status != http.StatusOK {
		t.Errorf("/user with an ES256 token: %d %s", r.status, r.raw)
	}
	r := w.do(http.MethodGet, w.inst.apiURL+"/auth/v1/.well-known/jwks.json", nil, nil)
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(r.raw, &set); err != nil || len(set.Keys) != 1 || set.Keys[0].KeyID != "b81269f1-21d8-4f2e-b719-c2240a840d90" || !set.Keys[0].IsPublic() {
		t.Errorf("jwks %s %v", r.raw, err)
	}
	// The refresh grant signs with the same key.
	ref := w.api(http.MethodPost, "/token?grant_type=refresh_token", map[string]string{"refresh_token": s.str("refresh_token")}, "")
	if tokenHeader(t, ref.str("access_token"))["alg"] != "ES256" {
		t.Errorf("refreshed token: %s", ref.raw)
	}
}

func TestFailingUserTriggerRedirectsWithError(t *testing.T) {
	w := newWorld(t, nil)
	if _, err := w.pool.Exec(t.Context(), `
		create function public.refuse_user() returns trigger language plpgsql as $$
		begin raise exception 'profiles table is broken'; end $$;
		create trigger refuse before insert on auth.users for each row execute function public.refuse_user()`); err != nil {
		t.Fatal(err)
	}
	_, final := w.flow(url.Values{"provider": {"google"}, "redirect_to": {tAppURL}})
	if final.Query().Get("error") != "server_error" || final.Query().Get("error_description") != "Database error saving new user" ||
		!strings.HasPrefix(final.String(), tAppURL+"?") {
		t.Errorf("failing trigger: %v", final)
	}
	if n := w.count(`select count(*) from auth.identities`) + w.count(`select count(*) from auth.sessions`); n != 0 {
		t.Errorf("a failed sign-in left %d rows", n)
	}
	// The ID-token grant reports the same failure as a 500 without internals.
	r := w.api(http.MethodPost, "/token?grant_type=id_token",
		map[string]any{"provider": "google", "id_token": w.idp.MintIDToken(w.idp.Claims(testidp.DefaultUser()), testidp.MintOptions{})}, "")
	wantError(t, "id_token grant with failing trigger", r, 500, "unexpected_failure", "")
	if strings.Contains(string(r.raw), "profiles") {
		t.Errorf("the 500 leaks the database error: %s", r.raw)
	}
}

func TestAnyDiscoveryProvider(t *testing.T) {
	// A provider other than Google, known only by its issuer URL, works the same way.
	var issuer string
	w := newWorld(t, func(a *config.Auth) {
		g := a.External["google"]
		issuer = g.URL
		a.External["mycorp"] = config.Provider{Enabled: true, ClientID: tWebClient, Secret: tIDPSecret, URL: g.URL}
		g.Enabled = false
		a.External["google"] = g
	})
	_, final := w.flow(url.Values{"provider": {"MyCorp"}, "redirect_to": {tAppURL}})
	frag, _ := url.ParseQuery(final.Fragment)
	claims := w.claims(frag.Get("access_token"))
	if am, _ := claims["app_metadata"].(map[string]any); am["provider"] != "mycorp" {
		t.Errorf("app_metadata %v", claims["app_metadata"])
	}
	r := w.api(http.MethodPost, "/token?grant_type=id_token", map[string]any{"issuer": issuer, "client_id": tWebClient,
		"id_token": w.idp.MintIDToken(w.idp.Claims(testidp.DefaultUser()), testidp.MintOptions{})}, "")
	if r.status != http.StatusOK || w.claims(r.str("access_token"))["sub"] != claims["sub"] {
		t.Errorf("id_token by issuer: %d %s", r.status, r.raw)
	}
	s := w.api(http.MethodGet, "/settings", nil, "")
	if ext := s.body["external"].(map[string]any); ext["mycorp"] != true || ext["google"] != false {
		t.Errorf("settings %s", s.raw)
	}
}

func TestFormPostCallback(t *testing.T) {
	w := newWorld(t, nil)
	p := newPKCE()
	q := url.Values{"provider": {"google"}, "redirect_to": {tAppURL}, "code_challenge": {p.challenge}, "code_challenge_method": {"s256"}}
	_, providerURL := w.location(w.inst.apiURL + "/auth/v1/authorize?" + q.Encode())
	_, cb := w.location(providerURL.String())
	// A form_post provider sends code and state in the body of a POST.
	r := w.do(http.MethodPost, w.inst.apiURL+"/auth/v1/callback", cb.Query().Encode(), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	loc, _ := url.Parse(r.header.Get("Location"))
	if r.status != http.StatusFound || loc == nil || !strings.HasPrefix(loc.String(), tAppURL+"?code=") {
		t.Fatalf("form_post callback: %d %v %s", r.status, loc, r.raw)
	}
	tok := w.api(http.MethodPost, "/token?grant_type=pkce", map[string]string{"auth_code": loc.Query().Get("code"), "code_verifier": p.verifier}, "")
	if tok.status != http.StatusOK {
		t.Errorf("exchange: %d %s", tok.status, tok.raw)
	}
}
