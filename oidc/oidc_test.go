package oidc

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pgreflect/pgreflect/testidp"
)

func TestPKCE(t *testing.T) {
	verifier := strings.Repeat("ab01", 28)
	sum := sha256.Sum256([]byte(verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	if !VerifyChallenge(MethodS256, challenge, verifier) || VerifyChallenge(MethodS256, challenge, verifier+"x") {
		t.Error("s256")
	}
	if !VerifyChallenge(MethodPlain, verifier, verifier) || VerifyChallenge(MethodPlain, challenge, verifier) {
		t.Error("plain")
	}
	if VerifyChallenge("", "", "") || VerifyChallenge("S256", challenge, verifier) {
		t.Error("unnormalised or empty method accepted")
	}
	for in, want := range map[string]string{"S256": "s256", "s256": "s256", "PLAIN": "plain", "Plain": "plain", "md5": "", "": ""} {
		got, ok := ParseChallengeMethod(in)
		if got != want || ok != (want != "") {
			t.Errorf("ParseChallengeMethod(%q) = %q %v", in, got, ok)
		}
	}
	for c, want := range map[string]bool{
		challenge: true, strings.Repeat("a", 42): false, strings.Repeat("a", 43): true, strings.Repeat("a", 128): true,
		strings.Repeat("a", 129): false, strings.Repeat("a", 42) + "+": false, strings.Repeat("-._~", 11): true,
	} {
		if ValidChallenge(c) != want {
			t.Errorf("ValidChallenge(%q) != %v", c, want)
		}
	}
}

func TestScopesAndReservedParams(t *testing.T) {
	if got := Scopes("email, https://www.googleapis.com/auth/drive openid,calendar"); !slices.Equal(got,
		[]string{"openid", "email", "profile", "https://www.googleapis.com/auth/drive", "calendar"}) {
		t.Errorf("Scopes = %v", got)
	}
	for _, name := range []string{"client_id", "CLIENT_SECRET", "Redirect_URI", "response_type", "state", "code_challenge",
		"code_challenge_method", "code_verifier", "scopes", "provider"} {
		if !IsReservedParam(name) {
			t.Errorf("%s not reserved", name)
		}
	}
	for _, name := range []string{"nonce", "access_type", "prompt", "login_hint", "hd", "redirect_to"} {
		if IsReservedParam(name) {
			t.Errorf("%s reserved", name)
		}
	}
	if HashNonce("abc") != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Error("HashNonce")
	}
}

func TestIdentityFromClaims(t *testing.T) {
	id := identityFromClaims("google", map[string]any{"iss": "https://accounts.google.com", "sub": "123", "email": "A@B.C",
		"email_verified": "true", "name": "N", "picture": "P", "hd": "b.c"})
	if id.Subject != "123" || !id.EmailVerified || id.Data["email"] != "a@b.c" || id.Data["full_name"] != "N" ||
		id.Data["avatar_url"] != "P" || id.Data["provider_id"] != "123" || id.Data["custom_claims"].(map[string]any)["hd"] != "b.c" {
		t.Errorf("%+v", id)
	}
	if identityFromClaims("google", map[string]any{"sub": "1", "email": "x@y", "verified_email": true}).EmailVerified != true {
		t.Error("verified_email not honoured")
	}
	if identityFromClaims("google", map[string]any{"sub": "1", "email": "x@y", "email_verified": "no"}).EmailVerified {
		t.Error("a non-true string verified the email")
	}
}

// countingProxy serves the provider through a handler that counts discovery requests.
func countingProxy(t *testing.T, idp *testidp.Server) (*atomic.Int64, *http.Client) {
	var n atomic.Int64
	target, _ := url.Parse(idp.URL())
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Host == target.Host && strings.HasSuffix(r.URL.Path, "/.well-known/openid-configuration") {
			n.Add(1)
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	return &n, client
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestVerifyIDTokenAndDiscoveryCache(t *testing.T) {
	idp, err := testidp.New(testidp.Options{ClientID: "web", ClientSecret: "s"})
	if err != nil {
		t.Fatal(err)
	}
	defer idp.Close()
	n, hc := countingProxy(t, idp)
	c := NewClient(hc)
	p := Provider{Name: "google", Issuer: idp.URL(), ClientIDs: []string{"web", "ios"}}
	ctx := context.Background()
	claims := idp.Claims(testidp.DefaultUser())
	for i := 0; i < 3; i++ {
		id, err := c.VerifyIDToken(ctx, p, idp.MintIDToken(claims, testidp.MintOptions{}), "", "")
		if err != nil || id.Subject != testidp.DefaultUser().Sub || id.Email != testidp.DefaultUser().Email || !id.EmailVerified {
			t.Fatalf("verify: %+v %v", id, err)
		}
	}
	if n.Load() != 1 {
		t.Errorf("discovery fetched %d times, want once", n.Load())
	}
	var ite *IDTokenError
	bad := func(name string, tok, access, nonce, code, desc string) {
		t.Helper()
		_, err := c.VerifyIDToken(ctx, p, tok, access, nonce)
		if !errors.As(err, &ite) || ite.Code != code || ite.Description != desc {
			t.Errorf("%s: %v", name, err)
		}
	}
	bad("alg none", idp.MintIDToken(claims, testidp.MintOptions{Alg: "none"}), "", "", "invalid request", "Bad ID token")
	bad("wrong key", idp.MintIDToken(claims, testidp.MintOptions{WrongKey: true}), "", "", "invalid request", "Bad ID token")
	expired := idp.Claims(testidp.DefaultUser())
	expired["exp"] = 1000
	bad("expired", idp.MintIDToken(expired, testidp.MintOptions{}), "", "", "invalid request", "Bad ID token")
	wrongIss := idp.Claims(testidp.DefaultUser())
	wrongIss["iss"] = "https://accounts.google.com"
	bad("wrong issuer", idp.MintIDToken(wrongIss, testidp.MintOptions{}), "", "", "invalid request", "Bad ID token")
	aud := idp.Claims(testidp.DefaultUser())
	aud["aud"] = []string{"x", "y"}
	bad("audience", idp.MintIDToken(aud, testidp.MintOptions{}), "", "", "invalid request", "Unacceptable audience in id_token: [x y]")
	aud["aud"] = []string{"x", "ios"}
	if _, err := c.VerifyIDToken(ctx, p, idp.MintIDToken(aud, testidp.MintOptions{}), "", ""); err != nil {
		t.Errorf("one accepted audience among several: %v", err)
	}
	noSub := idp.Claims(testidp.DefaultUser())
	delete(noSub, "sub")
	bad("no sub", idp.MintIDToken(noSub, testidp.MintOptions{}), "", "", "invalid request", "Missing sub claim in id_token")
	withNonce := idp.Claims(testidp.DefaultUser())
	withNonce["nonce"] = HashNonce("r")
	bad("nonce mismatch", idp.MintIDToken(withNonce, testidp.MintOptions{}), "", "s", "invalid nonce", "Nonces mismatch")
	bad("nonce only in token", idp.MintIDToken(withNonce, testidp.MintOptions{}), "", "", "invalid request",
		"Passed nonce and nonce in id_token should either both exist or not.")
	skip := p
	skip.SkipNonceCheck = true
	if _, err := c.VerifyIDToken(ctx, skip, idp.MintIDToken(withNonce, testidp.MintOptions{}), "", ""); err != nil {
		t.Errorf("skip_nonce_check: %v", err)
	}
	sum := sha256.Sum256([]byte("ya29.access"))
	withHash := idp.Claims(testidp.DefaultUser())
	withHash["at_hash"] = base64.RawURLEncoding.EncodeToString(sum[:16])
	if _, err := c.VerifyIDToken(ctx, p, idp.MintIDToken(withHash, testidp.MintOptions{}), "ya29.access", ""); err != nil {
		t.Errorf("matching at_hash: %v", err)
	}
	bad("at_hash mismatch", idp.MintIDToken(withHash, testidp.MintOptions{}), "ya29.other", "", "invalid request", "Bad ID token")

	// An unreachable provider is not an ID-token error.
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	if _, err := c.VerifyIDToken(ctx, Provider{Issuer: down.URL, ClientIDs: []string{"web"}}, "x", "", ""); !errors.Is(err, ErrNoProvider) {
		t.Errorf("unreachable provider: %v", err)
	}
}

func TestAuthCodeURLAndExchange(t *testing.T) {
	idp, err := testidp.New(testidp.Options{ClientID: "web", ClientSecret: "s", RedirectURIs: []string{"http://127.0.0.1:1/cb"}})
	if err != nil {
		t.Fatal(err)
	}
	defer idp.Close()
	c := NewClient(nil)
	p := Provider{Name: "google", Issuer: idp.URL(), ClientIDs: []string{"web", "ios"}, Secret: "s", RedirectURI: "http://127.0.0.1:1/cb"}
	raw, err := c.AuthCodeURL(context.Background(), p, "st", Scopes(""), url.Values{"state": {"evil"}, "access_type": {"offline"}, "prompt": {"consent"}})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(raw)
	q := u.Query()
	if q.Get("state") != "st" || q.Get("client_id") != "web" || q.Get("access_type") != "offline" {
		t.Fatalf("auth URL %s", raw)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(raw)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cb, _ := url.Parse(resp.Header.Get("Location"))
	res, err := c.Exchange(context.Background(), p, cb.Query().Get("code"))
	if err != nil || res.AccessToken == "" || res.RefreshToken == "" || res.Identity.Subject != testidp.DefaultUser().Sub {
		t.Fatalf("exchange: %+v %v", res, err)
	}
	if _, err := c.Exchange(context.Background(), p, cb.Query().Get("code")); !errors.Is(err, ErrExchange) {
		t.Errorf("replayed code: %v", err)
	}
	wrongSecret := p
	wrongSecret.Secret = "nope"
	if _, err := c.Exchange(context.Background(), wrongSecret, "whatever"); !errors.Is(err, ErrExchange) {
		t.Errorf("wrong secret: %v", err)
	}
}
