package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// Auth signs users in through /auth/v1 and keeps the session. Its zero value is not usable: use Client.Auth.
type Auth struct {
	c     *Client
	now   func() time.Time
	store sessionStore
	// refreshMu lets one refresh run at a time, so concurrent requests do not spend the refresh token twice.
	refreshMu sync.Mutex
}

// Session is a signed-in session, as /auth/v1/token returns it.
type Session struct {
	AccessToken          string `json:"access_token"`
	TokenType            string `json:"token_type"`
	ExpiresIn            int64  `json:"expires_in"`
	ExpiresAt            int64  `json:"expires_at"`
	RefreshToken         string `json:"refresh_token"`
	User                 *User  `json:"user,omitempty"`
	ProviderToken        string `json:"provider_token,omitempty"`
	ProviderRefreshToken string `json:"provider_refresh_token,omitempty"`
}

// User is the signed-in user.
type User struct {
	ID           string         `json:"id"`
	Aud          string         `json:"aud"`
	Role         string         `json:"role"`
	Email        string         `json:"email"`
	AppMetadata  map[string]any `json:"app_metadata"`
	UserMetadata map[string]any `json:"user_metadata"`
	Identities   []Identity     `json:"identities"`
}

// Identity links a user to a provider account.
type Identity struct {
	IdentityID string         `json:"identity_id"`
	ID         string         `json:"id"`
	Provider   string         `json:"provider"`
	Data       map[string]any `json:"identity_data"`
}

// AuthError is an error answer of /auth/v1 in either of Supabase Auth's shapes.
type AuthError struct {
	Status  int
	Code    string // e.g. refresh_token_already_used, flow_state_not_found; OAuth errors carry their "error"
	Message string
}

func (e *AuthError) Error() string {
	return fmt.Sprintf("auth: %d %s: %s", e.Status, e.Code, e.Message)
}

// expiryMargin refreshes a session this long before its access token expires (as supabase-js does).
const expiryMargin = 90 * time.Second

// Session returns the current session, or nil.
func (a *Auth) Session() *Session {
	a.store.mu.Lock()
	defer a.store.mu.Unlock()
	return a.store.session
}

// SetSession replaces the current session (nil signs out locally).
func (a *Auth) SetSession(s *Session) {
	a.store.mu.Lock()
	a.store.session = s
	a.store.mu.Unlock()
}

// accessToken returns the session's access token, refreshing it when it is about to expire; "" without a
// session.
func (a *Auth) accessToken(ctx context.Context) (string, error) {
	s := a.Session()
	if s == nil {
		return "", nil
	}
	if a.fresh(s) {
		return s.AccessToken, nil
	}
	a.refreshMu.Lock()
	defer a.refreshMu.Unlock()
	// Another request may have refreshed while this one waited.
	if s = a.Session(); s == nil || a.fresh(s) {
		if s == nil {
			return "", nil
		}
		return s.AccessToken, nil
	}
	s, err := a.refresh(ctx, s)
	if err != nil {
		return "", err
	}
	return s.AccessToken, nil
}

func (a *Auth) fresh(s *Session) bool { return time.Unix(s.ExpiresAt, 0).Sub(a.now()) > expiryMargin }

// IDToken is a provider-issued ID token to exchange for a session.
type IDToken struct {
	Provider    string `json:"provider"`
	Token       string `json:"id_token"`
	AccessToken string `json:"access_token,omitempty"`
	// Nonce is the raw nonce whose SHA-256 hex digest was given to the provider.
	Nonce string `json:"nonce,omitempty"`
}

// SignInWithIDToken exchanges a provider's ID token for a session and keeps it.
func (a *Auth) SignInWithIDToken(ctx context.Context, t IDToken) (*Session, error) {
	return a.token(ctx, "id_token", t)
}

// ExchangeCode finishes a PKCE flow: the code from the redirect and the verifier AuthorizeURL returned.
func (a *Auth) ExchangeCode(ctx context.Context, code, verifier string) (*Session, error) {
	return a.token(ctx, "pkce", map[string]string{"auth_code": code, "code_verifier": verifier})
}

// Refresh trades the session's refresh token for a new session.
func (a *Auth) Refresh(ctx context.Context) (*Session, error) {
	a.refreshMu.Lock()
	defer a.refreshMu.Unlock()
	s := a.Session()
	if s == nil {
		return nil, &AuthError{Code: "session_not_found", Message: "no session to refresh"}
	}
	return a.refresh(ctx, s)
}

func (a *Auth) refresh(ctx context.Context, s *Session) (*Session, error) {
	return a.token(ctx, "refresh_token", map[string]string{"refresh_token": s.RefreshToken})
}

func (a *Auth) token(ctx context.Context, grant string, body any) (*Session, error) {
	resp, err := a.c.do(ctx, http.MethodPost, "/auth/v1/token?grant_type="+grant, body, "")
	if err != nil {
		return nil, err
	}
	var s Session
	if err := decodeAuth(resp, &s); err != nil {
		return nil, err
	}
	if s.ExpiresAt == 0 && s.ExpiresIn > 0 {
		s.ExpiresAt = a.now().Unix() + s.ExpiresIn
	}
	a.SetSession(&s)
	return &s, nil
}

// User fetches the signed-in user.
func (a *Auth) User(ctx context.Context) (*User, error) {
	token, err := a.accessToken(ctx)
	if err != nil {
		return nil, err
	}
	if token == "" {
		return nil, &AuthError{Code: "session_not_found", Message: "not signed in"}
	}
	resp, err := a.c.do(ctx, http.MethodGet, "/auth/v1/user", nil, token)
	if err != nil {
		return nil, err
	}
	var u User
	if err := decodeAuth(resp, &u); err != nil {
		return nil, err
	}
	return &u, nil
}

// SignOut ends sessions: scope "global" (every session of the user, the default), "local" or "others". The
// local session is forgotten unless the scope is "others".
func (a *Auth) SignOut(ctx context.Context, scope string) error {
	s := a.Session()
	if s == nil {
		return nil
	}
	if scope == "" {
		scope = "global"
	}
	resp, err := a.c.do(ctx, http.MethodPost, "/auth/v1/logout?scope="+url.QueryEscape(scope), nil, s.AccessToken)
	if err != nil {
		return err
	}
	err = decodeAuth(resp, nil)
	// As supabase-js: a session the server no longer knows is signed out all the same.
	if ae, ok := err.(*AuthError); ok && (ae.Status == 401 || ae.Status == 403 || ae.Status == 404) {
		err = nil
	}
	if err == nil && scope != "others" {
		a.SetSession(nil)
	}
	return err
}

// AuthorizeOptions tune AuthorizeURL.
type AuthorizeOptions struct {
	RedirectTo string
	Scopes     []string
	// QueryParams pass through to the provider, e.g. access_type=offline and prompt=consent for Google's
	// refresh token.
	QueryParams map[string]string
	// Implicit asks for tokens in the redirect's fragment instead of a PKCE code.
	Implicit bool
}

// AuthorizeURL returns the URL to send the user's browser to, and for the PKCE flow the verifier to pass to
// ExchangeCode with the code the redirect brings back.
func (a *Auth) AuthorizeURL(provider string, o AuthorizeOptions) (authURL, verifier string, err error) {
	q := url.Values{"provider": {provider}}
	if o.RedirectTo != "" {
		q.Set("redirect_to", o.RedirectTo)
	}
	if len(o.Scopes) > 0 {
		q.Set("scopes", strings.Join(o.Scopes, " "))
	}
	for k, v := range o.QueryParams {
		q.Set(k, v)
	}
	if !o.Implicit {
		verifier = oauth2.GenerateVerifier()
		// supabase-js sends the method in lower case; the server accepts either.
		q.Set("code_challenge", oauth2.S256ChallengeFromVerifier(verifier))
		q.Set("code_challenge_method", "s256")
	}
	return a.c.baseURL + "/auth/v1/authorize?" + q.Encode(), verifier, nil
}

// SessionFromRedirect reads the session from an implicit-flow redirect URL's fragment, or its error, and
// keeps it.
func (a *Auth) SessionFromRedirect(redirect string) (*Session, error) {
	u, err := url.Parse(redirect)
	if err != nil {
		return nil, err
	}
	f, err := url.ParseQuery(u.Fragment)
	if err != nil {
		return nil, err
	}
	if e := f.Get("error"); e != "" {
		return nil, &AuthError{Code: firstNonEmpty(f.Get("error_code"), e), Message: f.Get("error_description")}
	}
	if f.Get("access_token") == "" {
		return nil, &AuthError{Code: "session_not_found", Message: "no tokens in the redirect"}
	}
	expiresAt, _ := strconv.ParseInt(f.Get("expires_at"), 10, 64)
	expiresIn, _ := strconv.ParseInt(f.Get("expires_in"), 10, 64)
	s := &Session{AccessToken: f.Get("access_token"), TokenType: f.Get("token_type"), RefreshToken: f.Get("refresh_token"),
		ExpiresAt: expiresAt, ExpiresIn: expiresIn, ProviderToken: f.Get("provider_token"),
		ProviderRefreshToken: f.Get("provider_refresh_token")}
	a.SetSession(s)
	return s, nil
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// decodeAuth decodes a 2xx body into out, or turns an error answer into *AuthError.
func decodeAuth(resp *http.Response, out any) error {
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 == 2 {
		if out == nil || len(raw) == 0 {
			return nil
		}
		return json.Unmarshal(raw, out)
	}
	var e struct {
		Code             json.RawMessage `json:"code"`
		ErrorCode        string          `json:"error_code"`
		Msg              string          `json:"msg"`
		Message          string          `json:"message"`
		Error            string          `json:"error"`
		ErrorDescription string          `json:"error_description"`
	}
	_ = json.Unmarshal(raw, &e)
	code := e.ErrorCode
	var s string
	if json.Unmarshal(e.Code, &s) == nil && s != "" {
		code = s
	}
	return &AuthError{Status: resp.StatusCode, Code: firstNonEmpty(code, e.Error),
		Message: firstNonEmpty(e.Msg, e.Message, e.ErrorDescription, e.Error, string(raw))}
}
