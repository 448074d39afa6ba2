package testidp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

const (
	clientID     = "client-123.apps.example.com"
	clientSecret = "s3cret"
	redirectURI  = "http://127.0.0.1:9/callback"
)

// noRedirect is a client that stops at the first redirect, as the relying party's callback is not running.
var noRedirect = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout:       10 * time.Second,
}

type fixture struct {
	idp      *Server
	provider *oidc.Provider
	conf     *oauth2.Config
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	if opts.ClientID == "" {
		opts.ClientID, opts.ClientSecret = clientID, clientSecret
	}
	idp, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(idp.Close)
	provider, err := oidc.NewProvider(t.Context(), idp.URL())
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	return &fixture{idp: idp, provider: provider, conf: &oauth2.Config{
		ClientID: opts.ClientID, ClientSecret: opts.ClientSecret, RedirectURL: redirectURI,
		Endpoint: provider.Endpoint(), Scopes: []string{oidc.ScopeOpenID, "email", "profile"},
	}}
}

// authorize follows the authorization URL and returns the redirect's query.
func authorize(t *testing.T, authURL string) url.Values {
	t.Helper()
	resp, err := noRedirect.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("authorize: status %d: %s", resp.StatusCode, body)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if got := loc.Scheme + "://" + loc.Host + loc.Path; got != redirectURI {
		t.Fatalf("redirected to %s, want %s", got, redirectURI)
	}
	return loc.Query()
}

func (f *fixture) verifier() *oidc.IDTokenVerifier {
	return f.provider.Verifier(&oidc.Config{ClientID: f.conf.ClientID})
}

// exchange swaps a code for tokens and verifies the ID token that comes with them.
func (f *fixture) exchange(t *testing.T, code string, opts ...oauth2.AuthCodeOption) (*oauth2.Token, *oidc.IDToken) {
	t.Helper()
	tok, err := f.conf.Exchange(t.Context(), code, opts...)
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := f.verifier().Verify(t.Context(), raw)
	if err != nil {
		t.Fatalf("verify id_token: %v", err)
	}
	return tok, idt
}

func TestDiscoveryDocument(t *testing.T) {
	f := newFixture(t, Options{})
	var doc struct {
		Issuer        string   `json:"issuer"`
		JWKS          string   `json:"jwks_uri"`
		Algs          []string `json:"id_token_signing_alg_values_supported"`
		ResponseTypes []string `json:"response_types_supported"`
		Subjects      []string `json:"subject_types_supported"`
		Scopes        []string `json:"scopes_supported"`
		UserInfo      string   `json:"userinfo_endpoint"`
	}
	if err := f.provider.Claims(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.Issuer != f.idp.URL() || doc.JWKS != f.idp.URL()+"/jwks" || doc.UserInfo != f.idp.URL()+"/userinfo" {
		t.Errorf("discovery document: %+v", doc)
	}
	if strings.Join(doc.Algs, ",") != "RS256" || strings.Join(doc.ResponseTypes, ",") != "code" ||
		len(doc.Subjects) == 0 || len(doc.Scopes) == 0 {
		t.Errorf("discovery document: %+v", doc)
	}
	if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+$`).MatchString(f.idp.URL()) {
		t.Errorf("URL() = %q", f.idp.URL())
	}
}

func TestCodeFlowWithPKCEAndNonce(t *testing.T) {
	f := newFixture(t, Options{RedirectURIs: []string{redirectURI}})
	ctx := t.Context()
	pkce := oauth2.GenerateVerifier()
	q := authorize(t, f.conf.AuthCodeURL("st-1", oidc.Nonce("n-0S6_WzA2Mj"), oauth2.S256ChallengeOption(pkce)))
	if q.Get("state") != "st-1" || q.Get("code") == "" {
		t.Fatalf("callback query %v", q)
	}
	tok, idt := f.exchange(t, q.Get("code"), oauth2.VerifierOption(pkce))
	if tok.RefreshToken != "" {
		t.Errorf("refresh token issued without access_type=offline&prompt=consent")
	}
	if idt.Nonce != "n-0S6_WzA2Mj" || idt.Subject != DefaultUser().Sub || idt.Issuer != f.idp.URL() {
		t.Errorf("id token: nonce %q sub %q iss %q", idt.Nonce, idt.Subject, idt.Issuer)
	}
	if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
		t.Errorf("at_hash: %v", err)
	}
	var claims struct {
		Email         string `json:"email"`
		EmailVerified bool   `json:"email_verified"`
		Name          string `json:"name"`
		Picture       string `json:"picture"`
	}
	if err := idt.Claims(&claims); err != nil {
		t.Fatal(err)
	}
	if claims.Email != DefaultUser().Email || !claims.EmailVerified || claims.Name != DefaultUser().Name || claims.Picture != DefaultUser().Picture {
		t.Errorf("claims %+v", claims)
	}
	ui, err := f.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok))
	if err != nil {
		t.Fatalf("userinfo: %v", err)
	}
	if ui.Subject != DefaultUser().Sub || ui.Email != DefaultUser().Email || !ui.EmailVerified {
		t.Errorf("userinfo %+v", ui)
	}
}

func TestNoNonceWhenNotAsked(t *testing.T) {
	f := newFixture(t, Options{})
	_, idt := f.exchange(t, authorize(t, f.conf.AuthCodeURL("s")).Get("code"))
	if idt.Nonce != "" {
		t.Errorf("nonce %q appeared without being asked for", idt.Nonce)
	}
}

func TestRefreshTokenOnlyForOfflineConsent(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := t.Context()
	cases := []struct {
		name string
		opts []oauth2.AuthCodeOption
		want bool
	}{
		{"none", nil, false},
		{"offline only", []oauth2.AuthCodeOption{oauth2.AccessTypeOffline}, false},
		{"consent only", []oauth2.AuthCodeOption{oauth2.SetAuthURLParam("prompt", "consent")}, false},
		{"offline and consent", []oauth2.AuthCodeOption{oauth2.AccessTypeOffline, oauth2.ApprovalForce}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := authorize(t, f.conf.AuthCodeURL("s", c.opts...))
			tok, err := f.conf.Exchange(ctx, q.Get("code"))
			if err != nil {
				t.Fatal(err)
			}
			if got := tok.RefreshToken != ""; got != c.want {
				t.Fatalf("refresh token present = %v, want %v", got, c.want)
			}
			if !c.want {
				return
			}
			// The refresh grant gives a new access token and ID token; the refresh token is not rotated.
			expired := &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Now().Add(-time.Minute)}
			fresh, err := f.conf.TokenSource(ctx, expired).Token()
			if err != nil {
				t.Fatalf("refresh: %v", err)
			}
			if fresh.AccessToken == "" || fresh.AccessToken == tok.AccessToken || fresh.RefreshToken != tok.RefreshToken {
				t.Errorf("refreshed token %+v", fresh)
			}
			idt, err := f.verifier().Verify(ctx, fresh.Extra("id_token").(string))
			if err != nil {
				t.Fatalf("refreshed id_token: %v", err)
			}
			if err := idt.VerifyAccessToken(fresh.AccessToken); err != nil {
				t.Errorf("refreshed at_hash: %v", err)
			}
			bad := &oauth2.Token{RefreshToken: "1//not-issued", Expiry: time.Now().Add(-time.Minute)}
			_, err = f.conf.TokenSource(ctx, bad).Token()
			wantOAuthError(t, err, "invalid_grant")
		})
	}
}

func wantOAuthError(t *testing.T, err error, code string) {
	t.Helper()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		t.Fatalf("error %v, want OAuth error %s", err, code)
	}
	if re.ErrorCode != code {
		t.Fatalf("error code %q (%v), want %q", re.ErrorCode, err, code)
	}
}

func TestCodeIsSingleUseAndReplayRevokes(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := t.Context()
	q := authorize(t, f.conf.AuthCodeURL("s", oauth2.AccessTypeOffline, oauth2.ApprovalForce))
	tok, err := f.conf.Exchange(ctx, q.Get("code"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.conf.Exchange(ctx, q.Get("code"))
	wantOAuthError(t, err, "invalid_grant")
	if _, err := f.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok)); err == nil {
		t.Error("access token still valid after its code was replayed")
	}
	_, err = f.conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	wantOAuthError(t, err, "invalid_grant")
	_, err = f.conf.Exchange(ctx, "4/never-issued")
	wantOAuthError(t, err, "invalid_grant")
}

func TestClientAuthentication(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := t.Context()
	for _, style := range []oauth2.AuthStyle{oauth2.AuthStyleInHeader, oauth2.AuthStyleInParams} {
		t.Run(fmt.Sprint("style ", style), func(t *testing.T) {
			good := *f.conf
			good.Endpoint.AuthStyle = style
			q := authorize(t, good.AuthCodeURL("s"))
			if _, err := good.Exchange(ctx, q.Get("code")); err != nil {
				t.Fatalf("right secret: %v", err)
			}
			bad := good
			bad.ClientSecret = "wrong"
			q = authorize(t, good.AuthCodeURL("s"))
			_, err := bad.Exchange(ctx, q.Get("code"))
			wantOAuthError(t, err, "invalid_client")
			// The failed attempt did not consume the code.
			if _, err := good.Exchange(ctx, q.Get("code")); err != nil {
				t.Fatalf("code after a failed client authentication: %v", err)
			}
		})
	}
}

func TestPKCEVerifierChecked(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := t.Context()
	pkce := oauth2.GenerateVerifier()
	q := authorize(t, f.conf.AuthCodeURL("s", oauth2.S256ChallengeOption(pkce)))
	_, err := f.conf.Exchange(ctx, q.Get("code"))
	wantOAuthError(t, err, "invalid_grant")
	_, err = f.conf.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(oauth2.GenerateVerifier()))
	wantOAuthError(t, err, "invalid_grant")
	if _, err := f.conf.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(pkce)); err != nil {
		t.Fatalf("right verifier: %v", err)
	}

	q = authorize(t, f.conf.AuthCodeURL("s", oauth2.SetAuthURLParam("code_challenge", "plain-challenge-value")))
	if _, err := f.conf.Exchange(ctx, q.Get("code"), oauth2.VerifierOption("plain-challenge-value")); err != nil {
		t.Fatalf("plain verifier: %v", err)
	}
}

func TestRedirectURIChecked(t *testing.T) {
	f := newFixture(t, Options{RedirectURIs: []string{redirectURI}})
	ctx := t.Context()
	// An unregistered redirect_uri or client is reported to the user, never redirected to.
	for name, conf := range map[string]oauth2.Config{
		"redirect": {ClientID: clientID, RedirectURL: "https://evil.example/cb", Endpoint: f.conf.Endpoint, Scopes: f.conf.Scopes},
		"client":   {ClientID: "other", RedirectURL: redirectURI, Endpoint: f.conf.Endpoint, Scopes: f.conf.Scopes},
	} {
		resp, err := noRedirect.Get(conf.AuthCodeURL("s"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
			t.Errorf("%s: status %d, Location %q", name, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	// The code is bound to the redirect_uri it was issued for.
	q := authorize(t, f.conf.AuthCodeURL("s"))
	other := *f.conf
	other.RedirectURL = "http://127.0.0.1:9/other"
	_, err := other.Exchange(ctx, q.Get("code"))
	wantOAuthError(t, err, "redirect_uri_mismatch")
}

func TestBadResponseTypeAndScope(t *testing.T) {
	f := newFixture(t, Options{})
	q := authorize(t, f.conf.AuthCodeURL("st", oauth2.SetAuthURLParam("response_type", "token")))
	if q.Get("error") != "unsupported_response_type" || q.Get("state") != "st" || q.Get("code") != "" {
		t.Errorf("response_type=token: %v", q)
	}
	noOpenID := *f.conf
	noOpenID.Scopes = []string{"email"}
	q = authorize(t, noOpenID.AuthCodeURL("st"))
	if q.Get("error") != "invalid_scope" || q.Get("code") != "" {
		t.Errorf("scope without openid: %v", q)
	}
}

var consentID = regexp.MustCompile(`name="consent_id" value="([^"]+)"`)

func TestInteractiveConsent(t *testing.T) {
	f := newFixture(t, Options{Interactive: true})
	f.idp.SetUser(User{Sub: "42", Email: "ada@example.com", EmailVerified: true, Name: "Ada"})
	consent := func(t *testing.T, decision string) url.Values {
		t.Helper()
		resp, err := noRedirect.Get(f.conf.AuthCodeURL("st", oidc.Nonce("nn")))
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "ada@example.com") ||
			!strings.Contains(string(page), `id="allow"`) {
			t.Fatalf("consent page: %d %s", resp.StatusCode, page)
		}
		m := consentID.FindStringSubmatch(string(page))
		if m == nil {
			t.Fatalf("no consent_id in %s", page)
		}
		form := url.Values{"consent_id": {m[1]}, "decision": {decision}}
		resp, err = noRedirect.PostForm(f.idp.URL()+"/authorize", form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound {
			t.Fatalf("consent answer: status %d", resp.StatusCode)
		}
		// A consent request is answered once.
		again, err := noRedirect.PostForm(f.idp.URL()+"/authorize", form)
		if err != nil {
			t.Fatal(err)
		}
		again.Body.Close()
		if again.StatusCode != http.StatusBadRequest {
			t.Errorf("second answer to the same consent: status %d", again.StatusCode)
		}
		loc, _ := url.Parse(resp.Header.Get("Location"))
		return loc.Query()
	}
	t.Run("allow", func(t *testing.T) {
		q := consent(t, "allow")
		_, idt := f.exchange(t, q.Get("code"))
		if idt.Subject != "42" || idt.Nonce != "nn" || q.Get("state") != "st" {
			t.Errorf("sub %q nonce %q state %q", idt.Subject, idt.Nonce, q.Get("state"))
		}
	})
	t.Run("deny", func(t *testing.T) {
		q := consent(t, "deny")
		if q.Get("error") != "access_denied" || q.Get("code") != "" || q.Get("state") != "st" {
			t.Errorf("deny: %v", q)
		}
	})
}

func TestMintIDToken(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := t.Context()
	claims := f.idp.Claims(User{Sub: "7", Email: "m@example.com", EmailVerified: true})
	claims["nonce"] = "abc"
	idt, err := f.verifier().Verify(ctx, f.idp.MintIDToken(claims, MintOptions{}))
	if err != nil {
		t.Fatalf("minted token rejected: %v", err)
	}
	if idt.Subject != "7" || idt.Nonce != "abc" {
		t.Errorf("sub %q nonce %q", idt.Subject, idt.Nonce)
	}
	for name, opt := range map[string]MintOptions{
		"wrong key": {WrongKey: true},
		"alg none":  {Alg: "none"},
		"HS256":     {Alg: "HS256"},
	} {
		tok := f.idp.MintIDToken(claims, opt)
		if _, err := f.verifier().Verify(ctx, tok); err == nil {
			t.Errorf("%s: token accepted", name)
		}
		if name == "alg none" && !strings.HasSuffix(tok, ".") {
			t.Errorf("alg none token %q has a signature", tok)
		}
	}
	expired := f.idp.Claims(DefaultUser())
	expired["exp"] = time.Now().Add(-time.Hour).Unix()
	if _, err := f.verifier().Verify(ctx, f.idp.MintIDToken(expired, MintOptions{})); err == nil {
		t.Error("expired token accepted")
	}
	other := f.idp.Claims(DefaultUser())
	other["aud"] = "someone-else"
	if _, err := f.verifier().Verify(ctx, f.idp.MintIDToken(other, MintOptions{})); err == nil {
		t.Error("token for another audience accepted")
	}
}

// Flows run concurrently with SetUser; run with -race to check the locking.
func TestConcurrentFlows(t *testing.T) {
	f := newFixture(t, Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 8 {
		wg.Go(func() {
			f.idp.SetUser(User{Sub: fmt.Sprint(i), Email: fmt.Sprintf("u%d@example.com", i)})
			resp, err := noRedirect.Get(f.conf.AuthCodeURL("s"))
			if err != nil {
				errs <- err
				return
			}
			resp.Body.Close()
			loc, _ := url.Parse(resp.Header.Get("Location"))
			if _, err := f.conf.Exchange(context.Background(), loc.Query().Get("code")); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestGSIStandIn(t *testing.T) {
	f := newFixture(t, Options{})
	resp, err := http.Get(f.idp.URL() + "/gsi/client")
	if err != nil {
		t.Fatal(err)
	}
	script, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") {
		t.Errorf("content type %q", ct)
	}
	for _, want := range []string{`var issuer = "` + f.idp.URL() + `";`, "google.accounts.id", "renderButton", "prompt",
		"g_id_onload", "use_fedcm_for_prompt"} {
		if !strings.Contains(string(script), want) {
			t.Errorf("the script lacks %q", want)
		}
	}

	credential := func(form url.Values) (int, map[string]string, http.Header) {
		t.Helper()
		resp, err := http.PostForm(f.idp.URL()+"/gsi/credential", form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]string
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, body, resp.Header
	}
	status, body, h := credential(url.Values{"client_id": {clientID}, "nonce": {"hashed-nonce"}})
	if status != http.StatusOK || h.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("credential: %d %v, CORS %q", status, body, h.Get("Access-Control-Allow-Origin"))
	}
	tok, err := f.verifier().Verify(t.Context(), body["credential"])
	if err != nil {
		t.Fatalf("the credential does not verify against the provider's keys: %v", err)
	}
	var claims struct{ Email, Nonce string }
	if err := tok.Claims(&claims); err != nil || claims.Email != DefaultUser().Email || claims.Nonce != "hashed-nonce" {
		t.Fatalf("claims %+v, %v", claims, err)
	}
	status, body, _ = credential(url.Values{"client_id": {clientID}})
	if tok, err := f.verifier().Verify(t.Context(), body["credential"]); status != 200 || err != nil || tok.Nonce != "" {
		t.Fatalf("without a nonce: %d %v %v", status, body, err)
	}
	if status, body, _ := credential(url.Values{"client_id": {"someone-else"}}); status != 400 || body["error"] != "invalid_client" {
		t.Fatalf("unknown client: %d %v", status, body)
	}
}
