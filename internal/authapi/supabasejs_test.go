package authapi

import (
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/testidp"
)

// End-to-end tests with the real client: testdata/supabase-js/flows.mjs drives supabase-js from npm against
// a server set up by newWorld (database, /auth/v1, the test provider as "google"), prints what the client
// saw, and the tests here check it and the database.

// ---- running supabase-js ----

var jsDir = filepath.Join("..", "..", "testdata", "supabase-js")

// runJS runs one scenario of flows.mjs with input on stdin and decodes its RESULT line into out.
func runJS(t *testing.T, scenario string, input, out any) {
	t.Helper()
	testenv.RunNodeScript(t, jsDir, "flows.mjs", []string{scenario}, input, out)
}

// What flows.mjs reports.
type (
	jsError struct {
		Name    string `json:"name"`
		Code    string `json:"code"`
		Status  int    `json:"status"`
		Message string `json:"message"`
	}
	jsIdentity struct {
		ID           string         `json:"id"`
		IdentityID   string         `json:"identity_id"`
		UserID       string         `json:"user_id"`
		Provider     string         `json:"provider"`
		Email        string         `json:"email"`
		IdentityData map[string]any `json:"identity_data"`
	}
	jsUser struct {
		ID           string         `json:"id"`
		Aud          string         `json:"aud"`
		Role         string         `json:"role"`
		Email        string         `json:"email"`
		AppMetadata  map[string]any `json:"app_metadata"`
		UserMetadata map[string]any `json:"user_metadata"`
		Identities   []jsIdentity   `json:"identities"`
	}
	jsSession struct {
		AccessToken          string  `json:"access_token"`
		RefreshToken         string  `json:"refresh_token"`
		TokenType            string  `json:"token_type"`
		ExpiresIn            float64 `json:"expires_in"` // computed by the client after setSession
		ExpiresAt            int64   `json:"expires_at"`
		ProviderToken        string  `json:"provider_token"`
		ProviderRefreshToken string  `json:"provider_refresh_token"`
		User                 jsUser  `json:"user"`
	}
	jsResult struct {
		Error   *jsError   `json:"error"`
		Session *jsSession `json:"session"`
		User    *jsUser    `json:"user"`
	}
	jsHop struct {
		URL      string `json:"url"`
		Status   int    `json:"status"`
		Location string `json:"location"`
		Body     string `json:"body"`
	}
	jsURL struct {
		Href         string            `json:"href"`
		Base         string            `json:"base"`
		Query        map[string]string `json:"query"`
		FragmentKeys []string          `json:"fragmentKeys"`
		Fragment     map[string]string `json:"fragment"`
	}
	jsLifecycle struct {
		GetSession          jsResult `json:"getSession"`
		GetUser             jsResult `json:"getUser"`
		Refresh             jsResult `json:"refresh"`
		RefreshReuse        jsResult `json:"refreshReuse"`
		GetUserAfterRefresh jsResult `json:"getUserAfterRefresh"`
		SignOut             struct {
			Error *jsError `json:"error"`
		} `json:"signOut"`
		SessionAfterSignOut *jsSession `json:"sessionAfterSignOut"`
		GetUserAfterSignOut jsResult   `json:"getUserAfterSignOut"`
		RefreshAfterSignOut jsResult   `json:"refreshAfterSignOut"`
	}
	jsFlow struct {
		SignInWithOAuth struct {
			Error *jsError `json:"error"`
			URL   string   `json:"url"`
		} `json:"signInWithOAuth"`
		VerifierKeysBefore      []string `json:"verifierKeysBefore"`
		Hops                    []jsHop  `json:"hops"`
		Final                   *jsURL   `json:"final"`
		Exchange                jsResult `json:"exchange"`
		ExchangeWithoutVerifier jsResult `json:"exchangeWithoutVerifier"`
		SetSession              jsResult `json:"setSession"`
		jsLifecycle
	}
)

type jsInput struct {
	URL          string      `json:"url"`
	AnonKey      string      `json:"anonKey"`
	ServiceKey   string      `json:"serviceRoleKey,omitempty"`
	RedirectTo   string      `json:"redirectTo,omitempty"`
	Offline      bool        `json:"offline,omitempty"`
	SignOutScope string      `json:"signOutScope,omitempty"`
	Attempts     []jsAttempt `json:"attempts,omitempty"`
	Lifecycle    string      `json:"lifecycle,omitempty"`
}

type jsAttempt struct {
	Name        string `json:"name"`
	Token       string `json:"token"`
	Nonce       string `json:"nonce,omitempty"`
	AccessToken string `json:"accessToken,omitempty"`
}

func (w *world) jsInput() jsInput {
	return jsInput{URL: w.inst.apiURL, AnonKey: w.anon, RedirectTo: tAppURL}
}

// ---- assertions shared by the flows ----

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func noJSError(t *testing.T, what string, r jsResult) {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("%s: %+v", what, *r.Error)
	}
}

func wantJSError(t *testing.T, what string, got *jsError, name, code string, status int) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: no error, want %s %q (%d)", what, name, code, status)
		return
	}
	if got.Name != name || got.Code != code || got.Status != status {
		t.Errorf("%s: error %+v, want %s %q (%d)", what, *got, name, code, status)
	}
}

// checkSession checks a session as the server issued it, and the claims of its access token.
func (w *world) checkSession(t *testing.T, what string, s *jsSession, email string) {
	t.Helper()
	if s == nil {
		t.Fatalf("%s: no session", what)
	}
	if s.AccessToken == "" || s.RefreshToken == "" || s.TokenType != "bearer" || s.ExpiresIn <= 0 || s.ExpiresAt <= time.Now().Unix() {
		t.Errorf("%s: session token fields: type %q expires_in %v expires_at %d", what, s.TokenType, s.ExpiresIn, s.ExpiresAt)
	}
	claims, err := w.keys.Verify(s.AccessToken)
	if err != nil {
		t.Fatalf("%s: access token does not verify with the project secret: %v", what, err)
	}
	if claims["sub"] != s.User.ID || claims["role"] != "authenticated" || claims["aud"] != "authenticated" ||
		claims["email"] != email || !uuidPattern.MatchString(fmt.Sprint(claims["session_id"])) {
		t.Errorf("%s: access token claims %v", what, claims)
	}
	// amr is an array of objects, newest first.
	var newest map[string]any
	if amr, _ := claims["amr"].([]any); len(amr) > 0 {
		newest, _ = amr[0].(map[string]any)
	}
	if newest["method"] != "oauth" {
		t.Errorf("%s: amr %v", what, claims["amr"])
	}
	if exp, _ := claims["exp"].(float64); int64(exp) != s.ExpiresAt {
		t.Errorf("%s: expires_at %d, token exp %v", what, s.ExpiresAt, claims["exp"])
	}
	u := s.User
	if !uuidPattern.MatchString(u.ID) || u.Email != email || u.Role != "authenticated" || u.Aud != "authenticated" ||
		u.AppMetadata["provider"] != "google" {
		t.Errorf("%s: user %+v", what, u)
	}
}

// checkLifecycle checks what lifecycle() in flows.mjs saw, and that global sign-out left no session behind.
func (w *world) checkLifecycle(t *testing.T, l jsLifecycle, first *jsSession, scope string) {
	t.Helper()
	noJSError(t, "getSession", l.GetSession)
	if l.GetSession.Session == nil || l.GetSession.Session.AccessToken != first.AccessToken {
		t.Errorf("getSession did not return the stored session")
	}
	noJSError(t, "getUser", l.GetUser)
	if l.GetUser.User == nil || l.GetUser.User.ID != first.User.ID {
		t.Errorf("getUser: %+v", l.GetUser.User)
	}
	noJSError(t, "refreshSession", l.Refresh)
	r := l.Refresh.Session
	w.checkSession(t, "refreshSession", r, first.User.Email)
	// (The access token may come out identical: same claims within the same second.)
	if r.RefreshToken == first.RefreshToken {
		t.Errorf("refreshSession did not rotate the refresh token")
	}
	// Provider tokens are handed out once, never on refresh.
	if r.ProviderToken != "" || r.ProviderRefreshToken != "" {
		t.Errorf("refresh returned provider tokens")
	}
	// Within the reuse interval the old refresh token still works (a client that failed to save).
	noJSError(t, "refreshSession with the previous token within the reuse interval", l.RefreshReuse)
	noJSError(t, "getUser after refresh", l.GetUserAfterRefresh)
	if l.SignOut.Error != nil {
		t.Fatalf("signOut: %+v", *l.SignOut.Error)
	}
	if l.SessionAfterSignOut != nil {
		t.Errorf("the client still holds a session after signOut")
	}
	// The server refuses the still-unexpired access token of the logged-out session: 403 session_not_found,
	// which auth-js turns into AuthSessionMissingError.
	wantJSError(t, "getUser after signOut", l.GetUserAfterSignOut.Error, "AuthSessionMissingError", "", 400)
	wantJSError(t, "refreshSession after signOut", l.RefreshAfterSignOut.Error, "AuthApiError", "refresh_token_not_found", 400)
	remaining := w.count("select count(*) from auth.sessions where user_id = $1", first.User.ID)
	if scope == "global" && remaining != 0 {
		t.Errorf("%d sessions left after a global sign-out", remaining)
	}
}

// checkAuthorizeHops checks the redirect chain from /auth/v1/authorize through the provider and /callback.
func (w *world) checkAuthorizeHops(t *testing.T, f *jsFlow, offline bool) (providerQuery url.Values) {
	t.Helper()
	if len(f.Hops) != 3 {
		t.Fatalf("redirect chain has %d hops, want authorize -> provider -> callback -> app: %+v", len(f.Hops), f.Hops)
	}
	for i, h := range f.Hops {
		if h.Status != http.StatusFound && h.Status != http.StatusSeeOther {
			t.Fatalf("hop %d (%s): status %d %s", i, h.URL, h.Status, h.Body)
		}
	}
	if !strings.HasPrefix(f.Hops[0].URL, w.inst.apiURL+"/auth/v1"+"/authorize?") {
		t.Errorf("first hop %s", f.Hops[0].URL)
	}
	loc, err := url.Parse(f.Hops[0].Location)
	if err != nil {
		t.Fatal(err)
	}
	if loc.Scheme+"://"+loc.Host+loc.Path != w.idp.URL()+"/authorize" {
		t.Fatalf("authorize redirected to %s, want the provider", f.Hops[0].Location)
	}
	q := loc.Query()
	if q.Get("client_id") != tWebClient || q.Get("redirect_uri") != w.inst.apiURL+"/auth/v1"+"/callback" ||
		q.Get("response_type") != "code" || !uuidPattern.MatchString(q.Get("state")) {
		t.Errorf("provider authorize parameters %v", q)
	}
	scopes := strings.Fields(q.Get("scope"))
	for _, s := range []string{"openid", "email", "profile"} {
		if !slices.Contains(scopes, s) {
			t.Errorf("scope %q lacks %s", q.Get("scope"), s)
		}
	}
	if offline && (q.Get("access_type") != "offline" || q.Get("prompt") != "consent") {
		t.Errorf("access_type/prompt not passed through: %v", q)
	}
	if !strings.HasPrefix(f.Hops[2].URL, w.inst.apiURL+"/auth/v1"+"/callback?") {
		t.Errorf("third hop %s, want the callback", f.Hops[2].URL)
	}
	if f.Final == nil || f.Final.Base != tAppURL {
		t.Fatalf("final redirect %+v, want %s", f.Final, tAppURL)
	}
	return q
}

// ---- the flows ----

// runOAuthFlow runs the pkce or implicit scenario of flows.mjs against a new world, with or without Google's
// offline-access parameters, and checks that signInWithOAuth itself worked.
func runOAuthFlow(t *testing.T, scenario string, offline bool) (*world, *jsFlow) {
	t.Helper()
	w := newWorld(t, nil)
	in := w.jsInput()
	in.Offline = offline
	var f jsFlow
	runJS(t, scenario, in, &f)
	if f.SignInWithOAuth.Error != nil {
		t.Fatalf("signInWithOAuth: %+v", *f.SignInWithOAuth.Error)
	}
	return w, &f
}

func TestSupabaseJSPKCEFlow(t *testing.T) {
	testenv.Node(t) // skips before any setup when Node is missing
	for _, offline := range []bool{true, false} {
		t.Run(fmt.Sprintf("offline=%v", offline), func(t *testing.T) {
			w, f := runOAuthFlow(t, "pkce", offline)
			start, err := url.Parse(f.SignInWithOAuth.URL)
			if err != nil {
				t.Fatal(err)
			}
			sq := start.Query()
			if sq.Get("provider") != "google" || sq.Get("redirect_to") != tAppURL ||
				sq.Get("code_challenge_method") != "s256" || len(sq.Get("code_challenge")) != 43 {
				t.Errorf("signInWithOAuth URL %s", f.SignInWithOAuth.URL)
			}
			if len(f.VerifierKeysBefore) == 0 {
				t.Errorf("the client stored no code verifier")
			}
			pq := w.checkAuthorizeHops(t, f, offline)
			// The client's challenge belongs to pgreflect, not to the provider.
			if pq.Get("code_challenge") == sq.Get("code_challenge") {
				t.Errorf("the client's code_challenge was forwarded to the provider")
			}
			code := f.Final.Query["code"]
			if !uuidPattern.MatchString(code) || len(f.Final.FragmentKeys) != 0 || strings.Contains(f.Final.Href, "access_token") {
				t.Fatalf("PKCE callback redirect %s: want ?code=<uuid> and no tokens", f.Final.Href)
			}

			noJSError(t, "exchangeCodeForSession", f.Exchange)
			s := f.Exchange.Session
			w.checkSession(t, "exchangeCodeForSession", s, testidp.DefaultUser().Email)
			if s.ProviderToken == "" {
				t.Errorf("no provider_token")
			}
			if got := s.ProviderRefreshToken != ""; got != offline {
				t.Errorf("provider_refresh_token present = %v with offline access asked = %v", got, offline)
			}
			if len(s.User.Identities) != 1 || s.User.Identities[0].ID != testidp.DefaultUser().Sub ||
				s.User.Identities[0].Provider != "google" {
				t.Errorf("identities %+v", s.User.Identities)
			}
			wantJSError(t, "exchange without the verifier", f.ExchangeWithoutVerifier.Error,
				"AuthPKCECodeVerifierMissingError", "pkce_code_verifier_not_found", 400)
			// The flow state is single use: gone after the exchange.
			if n := w.count("select count(*) from auth.flow_state"); n != 0 {
				t.Errorf("%d flow_state rows left after the exchange", n)
			}
			w.checkLifecycle(t, f.jsLifecycle, s, "global")
		})
	}
}

func TestSupabaseJSImplicitFlow(t *testing.T) {
	testenv.Node(t) // skips before any setup when Node is missing
	for _, offline := range []bool{true, false} {
		t.Run(fmt.Sprintf("offline=%v", offline), func(t *testing.T) {
			w, f := runOAuthFlow(t, "implicit", offline)
			if strings.Contains(f.SignInWithOAuth.URL, "code_challenge") {
				t.Errorf("implicit flow URL carries a code challenge: %s", f.SignInWithOAuth.URL)
			}
			w.checkAuthorizeHops(t, f, offline)
			want := []string{"access_token", "expires_at", "expires_in", "provider_token", "refresh_token", "sb", "token_type"}
			if offline {
				want = []string{"access_token", "expires_at", "expires_in", "provider_refresh_token", "provider_token", "refresh_token", "sb", "token_type"}
			}
			if !slices.Equal(f.Final.FragmentKeys, want) {
				t.Errorf("fragment keys %v, want %v (sorted)", f.Final.FragmentKeys, want)
			}
			if fr := f.Final.Fragment; fr["token_type"] != "bearer" || fr["provider_token"] == "" {
				t.Errorf("fragment %v", fr)
			}
			if _, ok := f.Final.Query["code"]; ok {
				t.Errorf("implicit redirect carries ?code=")
			}
			noJSError(t, "setSession", f.SetSession)
			s := f.SetSession.Session
			w.checkSession(t, "setSession", s, testidp.DefaultUser().Email)
			if n := w.count("select count(*) from auth.flow_state"); n != 0 {
				t.Errorf("%d flow_state rows left after the implicit callback", n)
			}
			w.checkLifecycle(t, f.jsLifecycle, s, "global")
		})
	}
}

func TestSupabaseJSIDTokenFlow(t *testing.T) {
	testenv.Node(t) // skips before any setup when Node is missing
	w := newWorld(t, nil)
	user := testidp.User{Sub: "110000000000000000042", Email: "Ida.Token@Example.com", EmailVerified: true, Name: "Ida Token"}
	raw := randomHex(t, 16)
	withNonce := w.idp.Claims(user)
	withNonce["nonce"] = hashNonce(raw)
	noNonce := w.idp.Claims(user)
	otherAud := w.idp.Claims(user)
	otherAud["aud"] = "someone-else.apps.googleusercontent.com"

	in := w.jsInput()
	in.SignOutScope = "local"
	in.Lifecycle = "nonce"
	in.Attempts = []jsAttempt{
		{Name: "nonce", Token: w.idp.MintIDToken(withNonce, testidp.MintOptions{}), Nonce: raw},
		{Name: "no nonce on either side", Token: w.idp.MintIDToken(noNonce, testidp.MintOptions{})},
		{Name: "wrong nonce", Token: w.idp.MintIDToken(withNonce, testidp.MintOptions{}), Nonce: raw + "x"},
		// The hash itself is not the raw nonce: sending what is in the token must fail too.
		{Name: "hashed nonce sent", Token: w.idp.MintIDToken(withNonce, testidp.MintOptions{}), Nonce: hashNonce(raw)},
		{Name: "nonce only in request", Token: w.idp.MintIDToken(noNonce, testidp.MintOptions{}), Nonce: raw},
		{Name: "nonce only in token", Token: w.idp.MintIDToken(withNonce, testidp.MintOptions{})},
		{Name: "wrong audience", Token: w.idp.MintIDToken(otherAud, testidp.MintOptions{})},
		{Name: "bad signature", Token: w.idp.MintIDToken(noNonce, testidp.MintOptions{WrongKey: true})},
	}
	var out struct {
		Attempts  map[string]jsResult `json:"attempts"`
		Lifecycle *jsLifecycle        `json:"lifecycle"`
	}
	runJS(t, "idtoken", in, &out)

	email := strings.ToLower(user.Email)
	ok := out.Attempts["nonce"]
	noJSError(t, "signInWithIdToken with nonce", ok)
	w.checkSession(t, "signInWithIdToken", ok.Session, email)
	if ok.Session.ProviderToken != "" {
		t.Errorf("the ID-token grant returned a provider_token")
	}
	again := out.Attempts["no nonce on either side"]
	noJSError(t, "signInWithIdToken without nonce", again)
	if again.Session.User.ID != ok.Session.User.ID {
		t.Errorf("the same Google sub signed in as two users: %s, %s", ok.Session.User.ID, again.Session.User.ID)
	}
	// OAuth-style errors: HTTP 400 {"error","error_description"}, no error code.
	mismatch := "Passed nonce and nonce in id_token should either both exist or not."
	for name, msg := range map[string]string{
		"wrong nonce":           "Nonces mismatch",
		"hashed nonce sent":     "Nonces mismatch",
		"nonce only in request": mismatch,
		"nonce only in token":   mismatch,
		"wrong audience":        "Unacceptable audience in id_token: [someone-else.apps.googleusercontent.com]",
		"bad signature":         "Bad ID token",
	} {
		r := out.Attempts[name]
		wantJSError(t, name, r.Error, "AuthApiError", "", 400)
		if r.Error != nil && r.Error.Message != msg {
			t.Errorf("%s: message %q, want %q", name, r.Error.Message, msg)
		}
		if r.Session != nil {
			t.Errorf("%s: a session was issued", name)
		}
	}
	if n := w.count("select count(*) from auth.users where email = $1", email); n != 1 {
		t.Errorf("%d users with the email, want 1", n)
	}
	if n := w.count("select count(*) from auth.identities where provider = 'google' and provider_id = $1", user.Sub); n != 1 {
		t.Errorf("%d identities for the sub, want 1", n)
	}
	if out.Lifecycle == nil {
		t.Fatal("the lifecycle did not run")
	}
	w.checkLifecycle(t, *out.Lifecycle, ok.Session, "local")
	// A local sign-out ends only this session; the second sign-in's session lives on.
	if n := w.count("select count(*) from auth.sessions where user_id = $1", ok.Session.User.ID); n != 1 {
		t.Errorf("%d sessions after a local sign-out of one of two, want 1", n)
	}
}

func TestSupabaseJSErrors(t *testing.T) {
	testenv.Node(t) // skips before any setup when Node is missing
	w := newWorld(t, nil)
	var out map[string]jsResult
	runJS(t, "errors", w.jsInput(), &out)
	wantJSError(t, "refresh with an unknown token", out["refreshUnknown"].Error, "AuthApiError", "refresh_token_not_found", 400)
	wantJSError(t, "refresh with a malformed token", out["refreshMalformed"].Error, "AuthApiError", "validation_failed", 400)
	wantJSError(t, "getUser with a bad JWT", out["getUserBadJWT"].Error, "AuthApiError", "bad_jwt", 403)
	wantJSError(t, "exchange without verifier", out["exchangeNoVerifier"].Error, "AuthApiError", "validation_failed", 400)
	if msg := out["exchangeNoVerifier"].Error; msg != nil && msg.Message != "invalid request: both auth code and code verifier should be non-empty" {
		t.Errorf("exchange without verifier: message %q", msg.Message)
	}
}
