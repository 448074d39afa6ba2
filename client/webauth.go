package client

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// WebAuth signs the users of a server-side Go web application in with the PKCE redirect flow and keeps each
// user's session in their browser's cookies, as Supabase's SSR helpers do:
//
//	auth := client.NewWebAuth(apiURL, anonKey, client.WebAuthOptions{Local: true})
//	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
//		auth.SignIn(w, r, "google", client.AuthorizeOptions{RedirectTo: "/auth/callback?next=/private"})
//	})
//	mux.Handle("GET /auth/callback", auth.Callback())
//	http.ListenAndServe(addr, auth.Middleware(mux))
//
// Handlers behind Middleware call RequestClient(r) for a Client that carries the user's session. A WebAuth is
// safe for concurrent use; it keeps no session itself.
type WebAuth struct {
	baseURL, apiKey string
	opts            WebAuthOptions
	cookies         cookieStore
}

// WebAuthOptions configure a WebAuth.
type WebAuthOptions struct {
	// Local is local development: the callback redirects on the request's own origin and ignores
	// X-Forwarded-Host, which only a proxy in front of a deployed app sets.
	Local bool
	// HTTPClient calls the project (default: a client with a 30-second timeout).
	HTTPClient *http.Client
}

// AuthCodeErrorPath is where the callback sends the browser when the code is missing or its exchange fails.
const AuthCodeErrorPath = "/auth/auth-code-error"

// NewWebAuth returns the sign-in of a web application for the project at baseURL with its anon key.
func NewWebAuth(baseURL, anonKey string, o WebAuthOptions) *WebAuth {
	return &WebAuth{baseURL: baseURL, apiKey: anonKey, opts: o, cookies: cookieStore{key: storageKey(baseURL)}}
}

// CookieName is the session cookie's name (chunks add .0, .1, ...), as supabase-js names it for the project.
func (a *WebAuth) CookieName() string { return a.cookies.key }

// newClient is a client for one request of one user.
func (a *WebAuth) newClient(s *Session) *Client {
	var opts []Option
	if a.opts.HTTPClient != nil {
		opts = append(opts, WithHTTPClient(a.opts.HTTPClient))
	}
	c := New(a.baseURL, a.apiKey, opts...)
	c.Auth.SetSession(s)
	return c
}

// SignIn starts the PKCE flow: it keeps a new verifier in a cookie and redirects the browser to the
// project's /auth/v1/authorize. o.RedirectTo is the application's callback route, absolute or relative to
// the request's origin, and must be on the project's redirect allow list.
func (a *WebAuth) SignIn(w http.ResponseWriter, r *http.Request, provider string, o AuthorizeOptions) {
	if o.RedirectTo != "" {
		if ref, err := url.Parse(o.RedirectTo); err == nil {
			o.RedirectTo = requestOrigin(r).ResolveReference(ref).String()
		}
	}
	o.Implicit = false
	authURL, verifier, err := a.newClient(nil).Auth.AuthorizeURL(provider, o)
	if err == nil {
		err = a.cookies.saveVerifier(w, r, verifier)
	}
	if err != nil {
		http.Error(w, "sign-in could not start", http.StatusInternalServerError)
		return
	}
	http.Redirect(w, r, authURL, http.StatusFound)
}

// Callback is the application's callback route of the PKCE flow (GET, at the path given as RedirectTo): it
// exchanges the query's code with the verifier cookie, saves the session in cookies and redirects to the
// query's next (default "/"; anything but a path on this site becomes "/"). Without a code, or when the
// exchange fails, it redirects to AuthCodeErrorPath on the request's origin.
func (a *WebAuth) Callback() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		next := safeNext(q.Get("next"))
		code := q.Get("code")
		flowID := q.Get(flowIDParam)
		if !flowIDPattern.MatchString(flowID) {
			flowID = "" // it names a cookie: nothing but supabase-js's own shape
		}
		verifier := a.cookies.verifier(r, flowID)
		// The verifier is good for one exchange, whatever its outcome.
		a.cookies.removeVerifier(w, r, flowID, verifier)
		if code == "" || verifier == "" {
			a.redirectToError(w, r)
			return
		}
		s, err := a.newClient(nil).Auth.ExchangeCode(r.Context(), code, verifier)
		if err == nil {
			err = a.cookies.saveSession(w, r, s)
		}
		if err != nil {
			a.redirectToError(w, r)
			return
		}
		http.Redirect(w, r, a.redirectBase(r)+next, http.StatusFound)
	})
}

func (a *WebAuth) redirectToError(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, requestOrigin(r).String()+AuthCodeErrorPath, http.StatusFound)
}

// redirectBase is where the callback sends the browser after sign-in: the request's origin in local
// development, the forwarded host over https when a proxy names one, else the request's origin.
func (a *WebAuth) redirectBase(r *http.Request) string {
	if !a.opts.Local {
		// A chain of proxies lists hosts comma-separated; the first is the one the browser asked for.
		fwd, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Host"), ",")
		if fwd = strings.TrimSpace(fwd); fwd != "" && validHost(fwd) {
			return "https://" + fwd
		}
	}
	return requestOrigin(r).String()
}

// requestOrigin is the scheme and host the request came to.
func requestOrigin(r *http.Request) *url.URL {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return &url.URL{Scheme: scheme, Host: r.Host}
}

// safeNext keeps next only when it is a path on this site: one leading slash (not "//host", not "/\host",
// which browsers read as "//host"), no scheme and no control characters; anything else becomes "/".
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.ContainsRune(next, '\\') {
		return "/"
	}
	for i := 0; i < len(next); i++ {
		if next[i] < 0x20 || next[i] == 0x7f {
			return "/"
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return "/"
	}
	return next
}

// validHost accepts a host name or address with an optional port: nothing that could end the authority
// (slash, at sign, backslash, space) and so change where the redirect goes.
func validHost(h string) bool {
	u, err := url.Parse("https://" + h)
	if err != nil || u.Host != h || u.Hostname() == "" || u.User != nil || u.Path != "" || u.RawQuery != "" {
		return false
	}
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune(".-:[]", c)) {
			return false
		}
	}
	return true
}

type requestClientKey struct{}

// refused tells a refresh the project turned down for good (a used, revoked or unknown refresh token) from
// one worth retrying later (rate limited, timed out, server trouble).
func refused(status int) bool {
	return status/100 == 4 && status != http.StatusTooManyRequests && status != http.StatusRequestTimeout
}

// Middleware reads the session from the request's cookies and, when its access token is close to expiry,
// refreshes it and writes the new session's cookies before next runs, so that next's RequestClient(r)
// carries a usable session. A session the project refuses to refresh (revoked, signed out elsewhere) is
// deleted from the cookies; a refresh that fails for another reason (the project unreachable) leaves the
// cookies for a later request and serves this one without a session.
func (a *WebAuth) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := a.newClient(nil)
		if s := a.cookies.session(r); s != nil {
			c.Auth.SetSession(s)
			if !c.Auth.fresh(s) {
				fresh, err := c.Auth.Refresh(r.Context())
				var ae *AuthError
				switch {
				case err == nil:
					if err := a.cookies.saveSession(w, r, fresh); err != nil {
						c.Auth.SetSession(nil)
					}
				case errors.As(err, &ae) && refused(ae.Status):
					a.cookies.remove(w, r, a.cookies.key)
					c.Auth.SetSession(nil)
				default:
					c.Auth.SetSession(nil)
				}
			}
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestClientKey{}, c)))
	})
}

// RequestClient is the Client Middleware made for r: it carries the user's session (Auth.Session() is nil
// when no one is signed in). Without the Middleware it is a client with no session.
func (a *WebAuth) RequestClient(r *http.Request) *Client {
	if c, ok := r.Context().Value(requestClientKey{}).(*Client); ok {
		return c
	}
	return a.newClient(nil)
}

// SignOut ends the request's session at the project (scope as Auth.SignOut: "global", "local" or "others")
// and deletes the session cookies unless the scope is "others".
func (a *WebAuth) SignOut(w http.ResponseWriter, r *http.Request, scope string) error {
	c := a.RequestClient(r)
	if err := c.Auth.SignOut(r.Context(), scope); err != nil {
		return err
	}
	if scope != "others" {
		a.cookies.remove(w, r, a.cookies.key)
	}
	return nil
}
