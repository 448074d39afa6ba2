// Package testidp is a small OpenID Connect provider for tests and local development. It behaves like Google
// where the sign-in contract depends on it: discovery, an RS256 JWKS, the authorization-code flow with optional
// PKCE, an ID token carrying email claims, nonce and at_hash, and a refresh token only when the authorization
// request asked for access_type=offline together with prompt=consent.
//
// Consent is automatic unless Options.Interactive is set; then /authorize shows a page with Allow and Deny
// buttons, so a browser (or a headless one in a test) can click through it.
//
// For the pre-built button and One Tap flows it serves /gsi/client, a stand-in for Google's client script
// (https://accounts.google.com/gsi/client) that gives the page's callback ID tokens this provider signed.
//
// It is a test kit for your own tests as well as pgreflect's: point a project's Google provider at URL() (as
// `pgreflect testidp` prints for config.toml) and sign users in without Google, or mint the tokens a test
// needs with Claims and MintIDToken (see the example).
package testidp

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Options configure a Server.
type Options struct {
	ClientID, ClientSecret string
	RedirectURIs           []string // allowed redirect_uri values; empty = any
	Interactive            bool     // show an HTML consent page with an "Allow" button instead of auto-consenting
	Addr                   string   // default 127.0.0.1:0
}

// User is the account that consents at the provider.
type User struct {
	Sub, Email    string
	EmailVerified bool
	Name, Picture string
}

// DefaultUser is the user who consents until SetUser names another.
func DefaultUser() User {
	return User{
		Sub:           "100000000000000000001",
		Email:         "test.user@example.com",
		EmailVerified: true,
		Name:          "Test User",
		Picture:       "https://example.com/test-user.png",
	}
}

// MintOptions choose how MintIDToken signs.
type MintOptions struct {
	// Alg is "" or "RS256" for the provider's key, "none" for an unsigned token, or "HS256" for a token
	// MAC'ed with the client secret (the classic algorithm-confusion attack).
	Alg string
	// WrongKey signs with a key that is not in the JWKS, under the JWKS key's kid.
	WrongKey bool
}

// Lifetimes, as Google's.
const (
	codeLifetime    = 10 * time.Minute
	tokenLifetime   = time.Hour
	pendingLifetime = 10 * time.Minute
)

// authRequest is what /authorize accepted, kept until the code (or the consent page) is used.
type authRequest struct {
	clientID, redirectURI, state, nonce, scope string
	accessType, prompt                         string
	challenge, challengeMethod                 string
}

// grant is an issued authorization code and what it stands for.
type grant struct {
	req     authRequest
	user    User
	expires time.Time
	used    bool
	// tokens issued for this code, revoked if the code is presented again (RFC 6749 section 4.1.2).
	accessTokens  []string
	refreshTokens []string
}

type accessToken struct {
	user    User
	expires time.Time
}

type refreshToken struct {
	user     User
	clientID string
	scope    string
}

type pending struct {
	req     authRequest
	expires time.Time
}

// Server is a running provider. All methods are safe for concurrent use.
type Server struct {
	opts     Options
	issuer   string
	key      *rsa.PrivateKey
	wrongKey *rsa.PrivateKey
	kid      string
	ln       net.Listener
	http     *http.Server

	mu       sync.Mutex
	user     User
	codes    map[string]*grant
	access   map[string]accessToken
	refresh  map[string]refreshToken
	consents map[string]pending
}

// New starts a provider listening on opts.Addr.
func New(opts Options) (*Server, error) {
	if opts.ClientID == "" {
		return nil, errors.New("testidp: ClientID is required")
	}
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("testidp: generating signing key: %w", err)
	}
	wrongKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("testidp: generating second key: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("testidp: listening on %s: %w", addr, err)
	}
	s := &Server{
		opts:     opts,
		issuer:   "http://" + ln.Addr().String(),
		key:      key,
		wrongKey: wrongKey,
		kid:      randomToken(8),
		ln:       ln,
		user:     DefaultUser(),
		codes:    map[string]*grant{},
		access:   map[string]accessToken{},
		refresh:  map[string]refreshToken{},
		consents: map[string]pending{},
	}
	s.http = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.http.Serve(ln) }()
	return s, nil
}

// URL is the issuer, e.g. http://127.0.0.1:PORT.
func (s *Server) URL() string { return s.issuer }

// Close stops the server.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.http.Shutdown(ctx); err != nil {
		_ = s.http.Close()
	}
}

// SetUser names the user who consents next.
func (s *Server) SetUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.user = u
}

// Claims returns the ID-token claims the provider would issue for u right now (iss, sub, aud, azp, iat, exp,
// email, email_verified, name, picture), a starting point for tests that then change one claim.
func (s *Server) Claims(u User) map[string]any {
	now := time.Now()
	return map[string]any{
		"iss":            s.issuer,
		"sub":            u.Sub,
		"aud":            s.opts.ClientID,
		"azp":            s.opts.ClientID,
		"iat":            now.Unix(),
		"exp":            now.Add(tokenLifetime).Unix(),
		"email":          u.Email,
		"email_verified": u.EmailVerified,
		"name":           u.Name,
		"picture":        u.Picture,
	}
}

// MintIDToken signs arbitrary claims, for tests that need tokens the provider would never issue.
func (s *Server) MintIDToken(claims map[string]any, opt MintOptions) string {
	payload, err := json.Marshal(claims)
	if err != nil {
		panic(fmt.Sprintf("testidp: claims not JSON: %v", err))
	}
	switch opt.Alg {
	case "none":
		// go-jose refuses to produce unsigned tokens, so this one is put together by hand.
		header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
		return header + "." + base64.RawURLEncoding.EncodeToString(payload) + "."
	case "HS256":
		// Also by hand: go-jose refuses HMAC keys shorter than the hash, and client secrets often are.
		signing := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT","kid":"`+s.kid+`"}`)) +
			"." + base64.RawURLEncoding.EncodeToString(payload)
		mac := hmac.New(sha256.New, []byte(s.opts.ClientSecret))
		mac.Write([]byte(signing))
		return signing + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	case "", "RS256":
		key := s.key
		if opt.WrongKey {
			key = s.wrongKey
		}
		return s.sign(payload, jose.SigningKey{Algorithm: jose.RS256, Key: key})
	default:
		panic(fmt.Sprintf("testidp: unsupported alg %q", opt.Alg))
	}
}

func (s *Server) sign(payload []byte, key jose.SigningKey) string {
	signer, err := jose.NewSigner(key, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", s.kid))
	if err != nil {
		panic(fmt.Sprintf("testidp: signer: %v", err))
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		panic(fmt.Sprintf("testidp: signing: %v", err))
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		panic(fmt.Sprintf("testidp: serializing: %v", err))
	}
	return out
}

// Handler serves the provider's endpoints; New already serves it on its listener.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", s.discovery)
	mux.HandleFunc("GET /jwks", s.jwks)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /authorize", s.consent)
	mux.HandleFunc("POST /token", s.token)
	mux.HandleFunc("GET /userinfo", s.userinfo)
	mux.HandleFunc("POST /userinfo", s.userinfo)
	mux.HandleFunc("GET /gsi/client", s.gsiClient)
	mux.HandleFunc("POST /gsi/credential", s.gsiCredential)
	return mux
}

// gsiClientJS is the stand-in for the provider's client script of the pre-built button and One Tap.
//
//go:embed gsi_client.js
var gsiClientJS string

func (s *Server) gsiClient(w http.ResponseWriter, _ *http.Request) {
	issuer, _ := json.Marshal(s.issuer)
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = io.WriteString(w, strings.Replace(gsiClientJS, "__ISSUER__", string(issuer), 1))
}

// gsiCredential hands the stand-in client script an ID token for the user who consents, as the provider's
// button and One Tap prompt hand one to the page: audience the client ID, the page's nonce unchanged. Any
// origin may ask (the real provider checks the client's JavaScript origins); this is a test provider.
func (s *Server) gsiCredential(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Cache-Control", "no-store")
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "error_description": "bad form body"})
		return
	}
	if r.PostForm.Get("client_id") != s.opts.ClientID {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client",
			"error_description": fmt.Sprintf("unknown client_id %q", r.PostForm.Get("client_id"))})
		return
	}
	s.mu.Lock()
	user := s.user
	s.mu.Unlock()
	claims := s.Claims(user)
	if n := r.PostForm.Get("nonce"); n != "" {
		claims["nonce"] = n
	}
	writeJSON(w, http.StatusOK, map[string]string{"credential": s.MintIDToken(claims, MintOptions{})})
}

func (s *Server) discovery(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                s.issuer,
		"authorization_endpoint":                s.issuer + "/authorize",
		"token_endpoint":                        s.issuer + "/token",
		"userinfo_endpoint":                     s.issuer + "/userinfo",
		"jwks_uri":                              s.issuer + "/jwks",
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"scopes_supported":                      []string{"openid", "email", "profile"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":      []string{"plain", "S256"},
		"claims_supported": []string{"aud", "email", "email_verified", "exp", "iat", "iss", "name",
			"picture", "sub", "nonce", "at_hash", "azp"},
	})
}

func (s *Server) jwks(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=60")
	writeJSON(w, http.StatusOK, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{
		Key: &s.key.PublicKey, KeyID: s.kid, Algorithm: string(jose.RS256), Use: "sig",
	}}})
}

// parseAuthRequest checks the parameters that decide where errors may be sent. A bad client_id or redirect_uri
// is shown to the user and never redirected to (RFC 6749 section 4.1.2.1).
func (s *Server) parseAuthRequest(q url.Values) (authRequest, error) {
	req := authRequest{
		clientID:        q.Get("client_id"),
		redirectURI:     q.Get("redirect_uri"),
		state:           q.Get("state"),
		nonce:           q.Get("nonce"),
		scope:           q.Get("scope"),
		accessType:      q.Get("access_type"),
		prompt:          q.Get("prompt"),
		challenge:       q.Get("code_challenge"),
		challengeMethod: q.Get("code_challenge_method"),
	}
	if req.clientID != s.opts.ClientID {
		return req, fmt.Errorf("unknown client_id %q", req.clientID)
	}
	u, err := url.Parse(req.redirectURI)
	if req.redirectURI == "" || err != nil || !u.IsAbs() || u.Fragment != "" {
		return req, fmt.Errorf("invalid redirect_uri %q", req.redirectURI)
	}
	if len(s.opts.RedirectURIs) > 0 && !slices.Contains(s.opts.RedirectURIs, req.redirectURI) {
		return req, fmt.Errorf("redirect_uri %q is not registered for this client", req.redirectURI)
	}
	return req, nil
}

// redirectError sends an OAuth error to the client's redirect_uri.
func redirectError(w http.ResponseWriter, r *http.Request, req authRequest, code, desc string) {
	redirectTo(w, r, req.redirectURI, url.Values{"error": {code}, "error_description": {desc}}, req.state)
}

func redirectTo(w http.ResponseWriter, r *http.Request, redirectURI string, params url.Values, state string) {
	u, _ := url.Parse(redirectURI) // validated by parseAuthRequest
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	if state != "" {
		q.Set("state", state)
	}
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	req, err := s.parseAuthRequest(r.URL.Query())
	if err != nil {
		http.Error(w, "testidp: "+err.Error(), http.StatusBadRequest)
		return
	}
	if rt := r.URL.Query().Get("response_type"); rt != "code" {
		redirectError(w, r, req, "unsupported_response_type", fmt.Sprintf("response_type %q is not supported", rt))
		return
	}
	if !slices.Contains(strings.Fields(req.scope), "openid") {
		redirectError(w, r, req, "invalid_scope", "scope must include openid")
		return
	}
	if req.challenge != "" {
		if req.challengeMethod == "" {
			req.challengeMethod = "plain" // RFC 7636 section 4.3
		}
		if req.challengeMethod != "plain" && req.challengeMethod != "S256" {
			redirectError(w, r, req, "invalid_request", "code_challenge_method must be plain or S256")
			return
		}
	}
	if !s.opts.Interactive {
		s.issueCode(w, r, req)
		return
	}
	id := randomToken(16)
	s.mu.Lock()
	s.dropExpiredLocked(time.Now())
	s.consents[id] = pending{req: req, expires: time.Now().Add(pendingLifetime)}
	user := s.user
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	_ = consentPage.Execute(w, map[string]any{"ID": id, "User": user, "Scope": req.scope, "Client": req.clientID})
}

var consentPage = template.Must(template.New("consent").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Sign in - Test Identity Provider</title></head>
<body>
<h1>Test Identity Provider</h1>
<p>Application <b>{{.Client}}</b> asks for <code>{{.Scope}}</code>.</p>
<p>Signing in as <b id="email">{{.User.Email}}</b> ({{.User.Name}}).</p>
<form method="post" action="/authorize">
<input type="hidden" name="consent_id" value="{{.ID}}">
<button type="submit" id="allow" name="decision" value="allow">Allow</button>
<button type="submit" id="deny" name="decision" value="deny">Deny</button>
</form>
</body></html>
`))

// consent receives the consent page's form.
func (s *Server) consent(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "testidp: bad form", http.StatusBadRequest)
		return
	}
	id := r.PostForm.Get("consent_id")
	s.mu.Lock()
	p, ok := s.consents[id]
	delete(s.consents, id)
	s.mu.Unlock()
	if !ok || time.Now().After(p.expires) {
		http.Error(w, "testidp: unknown or expired consent request", http.StatusBadRequest)
		return
	}
	if r.PostForm.Get("decision") != "allow" {
		redirectError(w, r, p.req, "access_denied", "The user denied the request")
		return
	}
	s.issueCode(w, r, p.req)
}

func (s *Server) issueCode(w http.ResponseWriter, r *http.Request, req authRequest) {
	code := "4/" + randomToken(32)
	now := time.Now()
	s.mu.Lock()
	s.dropExpiredLocked(now)
	s.codes[code] = &grant{req: req, user: s.user, expires: now.Add(codeLifetime)}
	s.mu.Unlock()
	redirectTo(w, r, req.redirectURI, url.Values{"code": {code}, "scope": {req.scope}}, req.state)
}

// dropExpiredLocked bounds the maps: expired codes, consents and access tokens go.
func (s *Server) dropExpiredLocked(now time.Time) {
	for k, g := range s.codes {
		if now.After(g.expires) {
			delete(s.codes, k)
		}
	}
	for k, p := range s.consents {
		if now.After(p.expires) {
			delete(s.consents, k)
		}
	}
	for k, a := range s.access {
		if now.After(a.expires) {
			delete(s.access, k)
		}
	}
}

type tokenError struct {
	status int
	code   string
	desc   string
}

func (e *tokenError) Error() string { return e.code + ": " + e.desc }

func invalidGrant(desc string) *tokenError {
	return &tokenError{http.StatusBadRequest, "invalid_grant", desc}
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "error_description": "bad form body"})
		return
	}
	var resp map[string]any
	err := s.authenticateClient(w, r)
	if err == nil {
		switch gt := r.PostForm.Get("grant_type"); gt {
		case "authorization_code":
			resp, err = s.exchangeCode(r.PostForm)
		case "refresh_token":
			resp, err = s.refreshGrant(r.PostForm)
		default:
			err = &tokenError{http.StatusBadRequest, "unsupported_grant_type", fmt.Sprintf("grant_type %q", gt)}
		}
	}
	var te *tokenError
	if errors.As(err, &te) {
		writeJSON(w, te.status, map[string]string{"error": te.code, "error_description": te.desc})
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// authenticateClient accepts client_secret_basic and client_secret_post.
func (s *Server) authenticateClient(w http.ResponseWriter, r *http.Request) error {
	id, secret, basic := r.BasicAuth()
	if basic {
		// RFC 6749 section 2.3.1: both parts are form-encoded before Basic encoding.
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if subtle.ConstantTimeCompare([]byte(id), []byte(s.opts.ClientID)) == 1 &&
		subtle.ConstantTimeCompare([]byte(secret), []byte(s.opts.ClientSecret)) == 1 {
		return nil
	}
	if basic {
		w.Header().Set("WWW-Authenticate", `Basic realm="testidp"`)
	}
	return &tokenError{http.StatusUnauthorized, "invalid_client", "The OAuth client was not found or the secret is wrong."}
}

func (s *Server) exchangeCode(form url.Values) (map[string]any, error) {
	code := form.Get("code")
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.codes[code]
	if !ok || now.After(g.expires) {
		return nil, invalidGrant("Malformed auth code.")
	}
	if g.used {
		// A replayed code revokes what it produced.
		for _, t := range g.accessTokens {
			delete(s.access, t)
		}
		for _, t := range g.refreshTokens {
			delete(s.refresh, t)
		}
		return nil, invalidGrant("Bad Request: code already used")
	}
	if form.Get("redirect_uri") != g.req.redirectURI {
		return nil, &tokenError{http.StatusBadRequest, "redirect_uri_mismatch", "Bad Request: redirect_uri does not match"}
	}
	if g.req.challenge != "" {
		verifier := form.Get("code_verifier")
		if verifier == "" {
			return nil, invalidGrant("Missing code verifier.")
		}
		if !pkceMatches(g.req.challengeMethod, g.req.challenge, verifier) {
			return nil, invalidGrant("Invalid code verifier.")
		}
	}
	g.used = true
	at := "ya29." + randomToken(32)
	s.access[at] = accessToken{user: g.user, expires: now.Add(tokenLifetime)}
	g.accessTokens = append(g.accessTokens, at)
	claims := s.Claims(g.user)
	if g.req.nonce != "" {
		claims["nonce"] = g.req.nonce
	}
	claims["at_hash"] = atHash(at)
	resp := map[string]any{
		"access_token": at,
		"token_type":   "Bearer",
		"expires_in":   int(tokenLifetime.Seconds()) - 1,
		"scope":        g.req.scope,
		"id_token":     s.MintIDToken(claims, MintOptions{}),
	}
	// Google hands out a refresh token only for offline access, and again only when consent is re-prompted.
	if g.req.accessType == "offline" && g.req.prompt == "consent" {
		rt := "1//" + randomToken(32)
		s.refresh[rt] = refreshToken{user: g.user, clientID: g.req.clientID, scope: g.req.scope}
		g.refreshTokens = append(g.refreshTokens, rt)
		resp["refresh_token"] = rt
	}
	return resp, nil
}

func (s *Server) refreshGrant(form url.Values) (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt, ok := s.refresh[form.Get("refresh_token")]
	if !ok {
		return nil, invalidGrant("Token has been expired or revoked.")
	}
	now := time.Now()
	s.dropExpiredLocked(now)
	at := "ya29." + randomToken(32)
	s.access[at] = accessToken{user: rt.user, expires: now.Add(tokenLifetime)}
	claims := s.Claims(rt.user)
	claims["at_hash"] = atHash(at)
	// Like Google, the refresh token is not rotated.
	return map[string]any{
		"access_token": at,
		"token_type":   "Bearer",
		"expires_in":   int(tokenLifetime.Seconds()) - 1,
		"scope":        rt.scope,
		"id_token":     s.MintIDToken(claims, MintOptions{}),
	}, nil
}

func (s *Server) userinfo(w http.ResponseWriter, r *http.Request) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	a, found := s.access[token]
	s.mu.Unlock()
	if !ok || !found || time.Now().After(a.expires) {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_token",
			"error_description": "Invalid Credentials"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"sub":            a.user.Sub,
		"email":          a.user.Email,
		"email_verified": a.user.EmailVerified,
		"name":           a.user.Name,
		"picture":        a.user.Picture,
	})
}

func pkceMatches(method, challenge, verifier string) bool {
	want := verifier
	if method == "S256" {
		sum := sha256.Sum256([]byte(verifier))
		want = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	return subtle.ConstantTimeCompare([]byte(want), []byte(challenge)) == 1
}

// atHash is the OpenID Connect access-token hash for RS256: the left half of SHA-256, base64url.
func atHash(accessToken string) string {
	h := sha256.Sum256([]byte(accessToken))
	return base64.RawURLEncoding.EncodeToString(h[:len(h)/2])
}

func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
