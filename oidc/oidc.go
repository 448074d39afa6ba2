// Package oidc talks to external OpenID Connect providers the way Supabase Auth does: discovery, the
// authorization URL, the code exchange, ID-token verification with the nonce rule, and PKCE checks.
package oidc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/pgreflect/pgreflect/auth"
)

// GoogleIssuer is Google's issuer, used for provider "google" unless the configuration overrides it.
const GoogleIssuer = "https://accounts.google.com"

// Provider is the effective configuration of one external provider.
type Provider struct {
	Name           string
	Issuer         string   // discovery base and the iss ID tokens must carry
	ClientIDs      []string // first: the web client used for redirects; all: accepted ID-token audiences
	Secret         string
	RedirectURI    string
	SkipNonceCheck bool
	EmailOptional  bool
}

// discoveryTTL is how long a provider's discovery document is reused (Supabase Auth's default is one hour).
const discoveryTTL = time.Hour

// maxCachedProviders bounds the discovery cache.
const maxCachedProviders = 64

// Client performs provider calls with one HTTP client and caches discovery per issuer.
type Client struct {
	http *http.Client

	mu    sync.Mutex
	cache map[string]cachedProvider
}

type cachedProvider struct {
	p       *gooidc.Provider
	fetched time.Time
}

// NewClient returns a provider client; nil uses an HTTP client with a 10-second timeout.
func NewClient(httpClient *http.Client) *Client {
	if httpClient == nil {
		httpClient = &http.Client{Timeout: 10 * time.Second}
	}
	return &Client{http: httpClient, cache: map[string]cachedProvider{}}
}

func (c *Client) context(ctx context.Context) context.Context {
	ctx = gooidc.ClientContext(ctx, c.http)
	return context.WithValue(ctx, oauth2.HTTPClient, c.http)
}

// discover returns the provider's discovery document, fetched at most once per TTL.
func (c *Client) discover(ctx context.Context, issuer string) (*gooidc.Provider, error) {
	c.mu.Lock()
	if e, ok := c.cache[issuer]; ok && time.Since(e.fetched) < discoveryTTL {
		c.mu.Unlock()
		return e.p, nil
	}
	c.mu.Unlock()
	p, err := gooidc.NewProvider(c.context(ctx), issuer)
	if err != nil {
		return nil, fmt.Errorf("discover %s: %w", issuer, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.cache) >= maxCachedProviders {
		for k, e := range c.cache {
			if time.Since(e.fetched) >= discoveryTTL || len(c.cache) >= maxCachedProviders {
				delete(c.cache, k)
			}
		}
	}
	c.cache[issuer] = cachedProvider{p: p, fetched: time.Now()}
	return p, nil
}

// defaultScopes are always requested; the client's scopes are added after them.
var defaultScopes = []string{gooidc.ScopeOpenID, "email", "profile"}

// reservedParams are never taken from the client: the server sets them (unlike released Supabase Auth, which
// lets a client's value overwrite its own).
var reservedParams = map[string]bool{
	"client_id": true, "client_secret": true, "redirect_uri": true, "response_type": true, "state": true,
	"code_challenge": true, "code_challenge_method": true, "code_verifier": true,
	"scope": true, "scopes": true, "provider": true,
}

// IsReservedParam reports whether a query parameter of /authorize must not be passed to the provider.
func IsReservedParam(name string) bool { return reservedParams[strings.ToLower(name)] }

func (p Provider) oauth2Config(ep oauth2.Endpoint, scopes []string) *oauth2.Config {
	cfg := &oauth2.Config{ClientSecret: p.Secret, Endpoint: ep, RedirectURL: p.RedirectURI, Scopes: scopes}
	if len(p.ClientIDs) > 0 {
		cfg.ClientID = p.ClientIDs[0]
	}
	return cfg
}

// Scopes joins the default scopes and the client's extra scopes (comma- or space-separated), without repeats.
func Scopes(extra string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range append(append([]string{}, defaultScopes...), strings.FieldsFunc(extra, func(r rune) bool {
		return r == ',' || r == ' '
	})...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// AuthCodeURL returns the provider's authorization URL for a flow. passThrough holds the client's other
// query parameters (reserved names already removed), each sent with its first value.
func (c *Client) AuthCodeURL(ctx context.Context, p Provider, state string, scopes []string, passThrough url.Values) (string, error) {
	op, err := c.discover(ctx, p.Issuer)
	if err != nil {
		return "", err
	}
	var opts []oauth2.AuthCodeOption
	for k, v := range passThrough {
		if len(v) > 0 && !IsReservedParam(k) {
			opts = append(opts, oauth2.SetAuthURLParam(k, v[0]))
		}
	}
	return p.oauth2Config(op.Endpoint(), scopes).AuthCodeURL(state, opts...), nil
}

// Error kinds of the code flow, mapped to Supabase Auth's messages by the HTTP layer.
var (
	ErrExchange   = errors.New("unable to exchange external code")
	ErrProfile    = errors.New("error getting user profile from external provider")
	ErrNoEmail    = errors.New("error getting user email from external provider")
	ErrNoProvider = errors.New("provider unavailable")
)

// CodeResult is what the code flow learns: the identity and the provider's tokens.
type CodeResult struct {
	Identity     auth.ExternalIdentity
	AccessToken  string
	RefreshToken string
}

// Exchange swaps an authorization code for the provider's tokens and reads the user from the ID token
// (checked against the first client ID, no nonce check, as Supabase Auth does) or, without one, from the
// userinfo endpoint.
func (c *Client) Exchange(ctx context.Context, p Provider, code string) (*CodeResult, error) {
	op, err := c.discover(ctx, p.Issuer)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoProvider, err)
	}
	hctx := c.context(ctx)
	tok, err := p.oauth2Config(op.Endpoint(), nil).Exchange(hctx, code)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrExchange, err)
	}
	res := &CodeResult{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken}
	var claims map[string]any
	if raw, _ := tok.Extra("id_token").(string); raw != "" {
		cfg := &gooidc.Config{}
		if len(p.ClientIDs) > 0 {
			cfg.ClientID = p.ClientIDs[0]
		} else {
			cfg.SkipClientIDCheck = true
		}
		idt, err := op.Verifier(cfg).Verify(hctx, raw)
		if err != nil {
			return nil, fmt.Errorf("%w: id_token: %v", ErrProfile, err)
		}
		if err := idt.Claims(&claims); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrProfile, err)
		}
	} else {
		ui, err := op.UserInfo(hctx, oauth2.StaticTokenSource(tok))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrProfile, err)
		}
		if err := ui.Claims(&claims); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrProfile, err)
		}
	}
	res.Identity = identityFromClaims(p.Name, claims)
	if res.Identity.Subject == "" {
		return nil, fmt.Errorf("%w: no sub", ErrProfile)
	}
	if res.Identity.Email == "" && !p.EmailOptional {
		return nil, ErrNoEmail
	}
	return res, nil
}

// identityFromClaims builds the identity and its identity_data the way Supabase Auth's provider claims look.
func identityFromClaims(provider string, claims map[string]any) auth.ExternalIdentity {
	str := func(k string) string { s, _ := claims[k].(string); return s }
	truthy := func(k string) bool {
		switch v := claims[k].(type) {
		case bool:
			return v
		case string:
			return strings.EqualFold(v, "true")
		}
		return false
	}
	verified := truthy("email_verified") || truthy("verified_email")
	data := map[string]any{
		"iss":            str("iss"),
		"sub":            str("sub"),
		"provider_id":    str("sub"),
		"email":          strings.ToLower(str("email")),
		"email_verified": verified,
		"phone_verified": false,
	}
	for _, k := range []string{"name", "picture", "given_name", "family_name", "locale"} {
		if v := str(k); v != "" {
			data[k] = v
		}
	}
	if v := str("name"); v != "" {
		data["full_name"] = v
	}
	if v := str("picture"); v != "" {
		data["avatar_url"] = v
	}
	if hd := str("hd"); hd != "" {
		data["custom_claims"] = map[string]any{"hd": hd}
	}
	return auth.ExternalIdentity{Provider: provider, Subject: str("sub"), Email: str("email"), EmailVerified: verified, Data: data}
}

// IDTokenError is a rejection of the ID-token grant in Supabase Auth's OAuth error form.
type IDTokenError struct {
	Code        string // "invalid request" or "invalid nonce"
	Description string
	cause       error
}

func (e *IDTokenError) Error() string {
	if e.cause != nil {
		return e.Description + ": " + e.cause.Error()
	}
	return e.Description
}

func (e *IDTokenError) Unwrap() error { return e.cause }

func invalidRequest(desc string, cause error) *IDTokenError {
	return &IDTokenError{Code: "invalid request", Description: desc, cause: cause}
}

// HashNonce is the value a provider must carry in an ID token for a raw nonce: lower-case hex SHA-256.
func HashNonce(raw string) string {
	sum := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(sum[:])
}

// VerifyIDToken checks an ID token for the ID-token grant: signature (provider JWKS, advertised algorithms),
// issuer and expiry by go-oidc, then at_hash when an access token is given, sub, audience (any configured
// client ID) and the nonce rule. Errors are *IDTokenError, except provider unavailability.
func (c *Client) VerifyIDToken(ctx context.Context, p Provider, rawIDToken, accessToken, rawNonce string) (auth.ExternalIdentity, error) {
	op, err := c.discover(ctx, p.Issuer)
	if err != nil {
		return auth.ExternalIdentity{}, fmt.Errorf("%w: %v", ErrNoProvider, err)
	}
	idt, err := op.Verifier(&gooidc.Config{SkipClientIDCheck: true}).Verify(c.context(ctx), rawIDToken)
	if err != nil {
		return auth.ExternalIdentity{}, invalidRequest("Bad ID token", err)
	}
	if accessToken != "" && idt.AccessTokenHash != "" {
		if err := idt.VerifyAccessToken(accessToken); err != nil {
			return auth.ExternalIdentity{}, invalidRequest("Bad ID token", err)
		}
	}
	if idt.Subject == "" {
		return auth.ExternalIdentity{}, invalidRequest("Missing sub claim in id_token", nil)
	}
	if !audienceAccepted(idt.Audience, p.ClientIDs) {
		return auth.ExternalIdentity{}, invalidRequest(fmt.Sprintf("Unacceptable audience in id_token: [%s]",
			strings.Join(idt.Audience, " ")), nil)
	}
	if !p.SkipNonceCheck {
		tokenHas, requestHas := idt.Nonce != "", rawNonce != ""
		if tokenHas != requestHas {
			return auth.ExternalIdentity{}, invalidRequest("Passed nonce and nonce in id_token should either both exist or not.", nil)
		}
		if tokenHas && idt.Nonce != HashNonce(rawNonce) {
			return auth.ExternalIdentity{}, &IDTokenError{Code: "invalid nonce", Description: "Nonces mismatch"}
		}
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return auth.ExternalIdentity{}, invalidRequest("Bad ID token", err)
	}
	return identityFromClaims(p.Name, claims), nil
}

func audienceAccepted(aud, clientIDs []string) bool {
	for _, a := range aud {
		for _, id := range clientIDs {
			if a == id {
				return true
			}
		}
	}
	return false
}
