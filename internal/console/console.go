// Package console serves the small management console of a project on the API listener: Settings > General
// (project name, Reference ID, API URL), Settings > API (the URLs and the project's API keys), Authentication
// > Providers (read and written through the management API), Authentication > Users (read-only, through
// GET /auth/v1/admin/users), the Schema pages (Access, GraphQL, Lint, Drift: read-only, from Options.Schema
// under api/schema/), and GraphiQL (API Docs > GraphQL > GraphiQL) talking to /graphql/v1 with the anon
// key. The same GraphiQL also ships as a standalone page, graphiql.html, which takes the endpoint and the key
// from its query string or a form, so it works from any origin or as a file.
//
// The console answers only to a browser on the server's own machine (a loopback client that names a loopback
// host, so that DNS rebinding does not count) or to a request that carries the management token, as a Bearer
// header or as the cookie the login form sets. Its pages never carry the JWT secret; the service_role key and
// the management token reach the browser only through /console/api/credentials, when a page needs them.
//
// Everything the browser loads is embedded: GraphiQL and React come from npm (console/web pins them and
// update-assets.sh copies their prebuilt bundles into assets/vendor), so neither building nor using the
// console needs a network.
package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/pgreflect/pgreflect/auth"
)

// Path is where the console expects to be mounted: mux.Handle(console.Path, console.Handler(opts)).
const Path = "/console/"

// GraphQLPath is the endpoint GraphiQL talks to, relative to the API URL.
const GraphQLPath = "/graphql/v1"

// Options configure the console. Only what is set here can appear on its pages: the handler never sees the
// JWT secret.
type Options struct {
	// APIURL is the project's public base URL (e.g. http://127.0.0.1:54321). Empty means the scheme and host
	// each request arrived on.
	APIURL string
	// AnonKey is the API key the pages show and GraphiQL sends as the apikey header.
	AnonKey string
	// ServiceRoleKey is shown on Settings > API after a click on Reveal, and the Users page lists users with it
	// (never given to GraphiQL). Empty: the pages say it is not available.
	ServiceRoleKey string
	// ProjectName and ProjectRef are shown on Settings > General; ProjectRef also names the project in the
	// management API calls of the Providers page.
	ProjectName string
	ProjectRef  string
	// ManagementToken opens the console to clients that are not on loopback, and the Providers page sends it
	// to the management API. Empty: only loopback clients get in, and the Providers page is unavailable.
	ManagementToken string
	// SearchPath is the API's search path (the exposed schemas), shown on Settings > API.
	SearchPath []string
	// MintToken signs the short-lived tokens of GraphiQL's "Run as" (Minter). Nil: there is no picker, and a
	// user's JWT is pasted.
	MintToken MintFunc
	// Now is the clock of session expiry and of the login form's limit; nil: time.Now.
	Now func() time.Time
	// Schema answers the Schema pages' JSON (access, graphql, lint, drift) under api/schema/, behind the
	// console's access rule (internal/schemaview). Nil: the pages say the schema is not available.
	Schema http.Handler
}

//go:embed assets
var embedded embed.FS

// asset is one embedded file with the headers it is served with.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

// contentTypes is fixed rather than taken from the OS's MIME table, which differs between machines.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".json": "application/json",
	".svg":  "image/svg+xml",
}

// The settings page and the console's GraphiQL only ever talk to their own origin; the standalone page talks
// to whatever endpoint it is given. GraphiQL (CodeMirror, React) sets inline styles, hence 'unsafe-inline'
// for styles only; scripts are all files of this handler.
const (
	cspBase       = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'self'; "
	cspConsole    = cspBase + "connect-src 'self'"
	cspStandalone = cspBase + "connect-src *"
)

type handler struct {
	opts   Options
	index  *template.Template
	login  []byte
	assets map[string]asset // by path relative to Path
	// token (the management token's digest) or a session of the login form is what a request must present when
	// it is not from loopback; with no management token configured, nothing else than loopback gets in.
	token    auth.SecretDigest
	sessions *sessions
}

// sessionCookieName is the cookie the login form sets: a session signed with a key derived from the management
// token, so that the token itself is not stored in the browser's cookie jar.
const sessionCookieName = "pgreflect-console"

// Handler returns the console. It serves paths under Path and answers 404 for anything else.
func Handler(opts Options) http.Handler {
	h := &handler{opts: opts, assets: map[string]asset{}}
	root, err := fs.Sub(embedded, "assets")
	if err != nil {
		panic(err) // the embed directive guarantees the directory
	}
	err = fs.WalkDir(root, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(root, name)
		if err != nil {
			return err
		}
		ct, ok := contentTypes[path.Ext(name)]
		if !ok {
			ct = "text/plain; charset=utf-8" // the vendored LICENSE files
		}
		sum := sha256.Sum256(body)
		h.assets[name] = asset{body: body, contentType: ct, etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
		return nil
	})
	if err != nil {
		panic(err) // embedded files are always readable
	}
	// index.html is a template: the one page that carries the project's URLs and keys.
	h.index = template.Must(template.New("index.html").Parse(string(h.assets["index.html"].body)))
	delete(h.assets, "index.html")
	h.login = h.assets["login.html"].body
	delete(h.assets, "login.html")
	if opts.Now == nil {
		opts.Now = time.Now
	}
	h.opts = opts
	if opts.ManagementToken != "" {
		h.token = auth.NewSecretDigest(opts.ManagementToken)
		h.sessions = newSessions(opts.ManagementToken, opts.Now)
	}
	return h
}

// pageConfig is what the pages and GraphiQL need; it is rendered into the page as JSON. Secrets are not part
// of it: the pages fetch them from /console/api/credentials when they need them.
type pageConfig struct {
	APIURL            string   `json:"apiUrl"`
	GraphQLURL        string   `json:"graphqlUrl"`
	AnonKey           string   `json:"anonKey"`
	ProjectName       string   `json:"projectName"`
	ProjectRef        string   `json:"projectRef"`
	HasServiceRoleKey bool     `json:"hasServiceRoleKey"`
	HasManagement     bool     `json:"hasManagement"`
	CanMintToken      bool     `json:"canMintToken"`
	SearchPath        []string `json:"searchPath"`
	HasSchema         bool     `json:"hasSchema"`
}

// credentials are the secrets a page may fetch once the console has let the client in.
type credentials struct {
	ServiceRoleKey  string `json:"serviceRoleKey,omitempty"`
	ManagementToken string `json:"managementToken,omitempty"`
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	switch {
	case name == "login" && r.Method == http.MethodPost:
		h.serveLogin(w, r)
		return
	case name == "logout" && r.Method == http.MethodPost && h.allowed(r):
		h.serveLogout(w, r)
		return
	case name == "console.css" || name == "favicon.svg":
		// The login page's look and icon; nothing in them is the project's.
	case !h.allowed(r):
		h.deny(w, r, "")
		return
	}
	if page, ok := strings.CutPrefix(name, "api/schema/"); ok {
		if !allowRead(w, r) {
			return
		}
		setSecurityHeaders(w.Header())
		if h.opts.Schema == nil {
			hdr := w.Header()
			hdr.Set("Content-Type", contentTypes[".json"])
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"message":"this server serves no Schema pages"}` + "\n"))
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/" + page
		h.opts.Schema.ServeHTTP(w, r2)
		return
	}
	if name == "api/token" {
		if allowRead(w, r) {
			h.serveToken(w, r)
		}
		return
	}
	if name == "api/credentials" {
		if !allowRead(w, r) {
			return
		}
		hdr := w.Header()
		setSecurityHeaders(hdr)
		hdr.Set("Cache-Control", "no-store")
		hdr.Set("Content-Type", contentTypes[".json"])
		_ = json.NewEncoder(w).Encode(credentials{ServiceRoleKey: h.opts.ServiceRoleKey, ManagementToken: h.opts.ManagementToken})
		return
	}
	if name == "" || name == "index.html" {
		if !allowRead(w, r) {
			return
		}
		h.serveIndex(w, r)
		return
	}
	a, ok := h.assets[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if !allowRead(w, r) {
		return
	}
	hdr := w.Header()
	setSecurityHeaders(hdr)
	if name == "graphiql.html" {
		hdr.Set("Content-Security-Policy", cspStandalone)
	} else if path.Ext(name) == ".html" {
		hdr.Set("Content-Security-Policy", cspConsole)
	}
	hdr.Set("Content-Type", a.contentType)
	hdr.Set("ETag", a.etag)
	hdr.Set("Cache-Control", "no-cache") // revalidate: the ETag makes that a 304 until the binary changes
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.body))
}

func (h *handler) serveIndex(w http.ResponseWriter, r *http.Request) {
	apiURL := strings.TrimRight(h.opts.APIURL, "/")
	if apiURL == "" || listensEverywhere(apiURL) {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		apiURL = scheme + "://" + r.Host
	}
	cfg := pageConfig{APIURL: apiURL, GraphQLURL: apiURL + GraphQLPath, AnonKey: h.opts.AnonKey,
		ProjectName: h.opts.ProjectName, ProjectRef: h.opts.ProjectRef,
		HasServiceRoleKey: h.opts.ServiceRoleKey != "", HasManagement: h.opts.ManagementToken != "" && h.opts.ProjectRef != "",
		CanMintToken: h.opts.MintToken != nil, SearchPath: h.opts.SearchPath, HasSchema: h.opts.Schema != nil}
	var buf bytes.Buffer
	if err := h.index.Execute(&buf, cfg); err != nil {
		http.Error(w, "console: could not render the page", http.StatusInternalServerError)
		return
	}
	hdr := w.Header()
	setSecurityHeaders(hdr)
	hdr.Set("Content-Security-Policy", cspConsole)
	hdr.Set("Content-Type", contentTypes[".html"])
	hdr.Set("Cache-Control", "no-store") // it carries the keys
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(buf.Bytes())
}

// allowed reports whether the client may use the console: it is on this machine, or it presents the
// management token.
func (h *handler) allowed(r *http.Request) bool {
	if h.fromLoopback(r) {
		return true
	}
	if !h.token.IsSet() {
		return false
	}
	if token, ok := auth.BearerToken(r); ok {
		return h.token.Matches(token)
	}
	if c, err := r.Cookie(sessionCookieName); err == nil {
		return h.sessions.valid(c.Value)
	}
	return false
}

// forwardingHeaders are the headers proxies, load balancers and CDNs add (canonical form): any of them, even
// empty, means the request was relayed for someone else.
var forwardingHeaders = []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto",
	"X-Forwarded-Port", "X-Forwarded-Server", "X-Forwarded", "Forwarded-For", "X-Original-Forwarded-For",
	"X-Real-Ip", "X-Client-Ip", "X-Cluster-Client-Ip", "Cf-Connecting-Ip", "True-Client-Ip", "Fastly-Client-Ip", "Via"}

// fromLoopback reports whether the request comes straight from this machine and names it. A proxy on this
// machine relays other clients, so forwarding headers disqualify a request; and a page of another site whose
// name resolves to 127.0.0.1 (DNS rebinding) sends its own name as Host, which is neither a loopback name nor
// the configured API host.
func (h *handler) fromLoopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return false
	}
	for _, hdr := range forwardingHeaders {
		if _, present := r.Header[hdr]; present {
			return false // even empty: only a proxy sends one
		}
	}
	name := r.Host
	if hn, _, err := net.SplitHostPort(name); err == nil {
		name = hn
	}
	name = strings.TrimSuffix(strings.Trim(name, "[]"), ".")
	if strings.EqualFold(name, "localhost") {
		return true
	}
	if ip := net.ParseIP(name); ip != nil && ip.IsLoopback() {
		return true
	}
	if u, err := url.Parse(h.opts.APIURL); err == nil && h.opts.APIURL != "" && !listensEverywhere(h.opts.APIURL) {
		return strings.EqualFold(u.Hostname(), name)
	}
	return false
}

// deny answers a client that may not use the console: 401 with the login form for a browser, and nothing of
// the project.
func (h *handler) deny(w http.ResponseWriter, r *http.Request, msg string) {
	h.denyWith(w, r, http.StatusUnauthorized, msg)
}

// denyWith answers with the login form and status.
func (h *handler) denyWith(w http.ResponseWriter, r *http.Request, status int, msg string) {
	hdr := w.Header()
	setSecurityHeaders(hdr)
	hdr.Set("Content-Security-Policy", cspConsole)
	hdr.Set("Content-Type", contentTypes[".html"])
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("WWW-Authenticate", `Bearer realm="pgreflect console"`)
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	if msg == "" && !h.token.IsSet() {
		msg = "This server has no management token: its console answers only on its own machine."
	}
	page := h.login
	if msg != "" {
		page = bytes.Replace(page, []byte(`<p class="login-error" hidden></p>`),
			[]byte(`<p class="login-error">`+template.HTMLEscapeString(msg)+`</p>`), 1)
	}
	_, _ = w.Write(page)
}

// serveLogin checks the management token of the login form and sets the console's session cookie. An address
// that got it wrong too often waits (429), whatever it sends then.
func (h *handler) serveLogin(w http.ResponseWriter, r *http.Request) {
	if h.sessions == nil {
		h.deny(w, r, "")
		return
	}
	addr := clientAddress(r)
	if ok, wait := h.sessions.allowLogin(addr); !ok {
		seconds := int(wait.Round(time.Second) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(max(seconds, 1)))
		h.denyWith(w, r, http.StatusTooManyRequests, fmt.Sprintf("Too many wrong tokens: try again in %d seconds.", max(seconds, 1)))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	token := strings.TrimSpace(r.PostFormValue("token"))
	if !h.token.Matches(token) {
		h.sessions.failedLogin(addr)
		h.deny(w, r, "That is not the project's management token.")
		return
	}
	value, err := h.sessions.issue()
	if err != nil {
		http.Error(w, "console: could not start a session", http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookieName, Value: value, Path: Path, HttpOnly: true,
		MaxAge: int(SessionLifetime / time.Second), Expires: h.opts.Now().Add(SessionLifetime),
		Secure: r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https", SameSite: http.SameSiteStrictMode})
	setSecurityHeaders(w.Header())
	http.Redirect(w, r, Path, http.StatusSeeOther)
}

// serveLogout ends the request's session, or with all=1 every session issued so far, without a new management
// token; the cookie is cleared.
func (h *handler) serveLogout(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	all := r.PostFormValue("all") == "1"
	if h.sessions != nil {
		value := ""
		if c, err := r.Cookie(sessionCookieName); err == nil {
			value = c.Value
		}
		h.sessions.revoke(value, all)
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookieName, Value: "", Path: Path, HttpOnly: true, MaxAge: -1,
		SameSite: http.SameSiteStrictMode})
	setSecurityHeaders(w.Header())
	http.Redirect(w, r, Path, http.StatusSeeOther)
}

// allowRead answers 405 to anything but GET and HEAD.
func allowRead(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	return false
}

// listensEverywhere reports whether the URL names the unspecified address (a server started with --host 0.0.0.0),
// which no browser can use; the request's host is the better answer then.
func listensEverywhere(apiURL string) bool {
	u, err := url.Parse(apiURL)
	if err != nil {
		return false
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsUnspecified()
}

func setSecurityHeaders(h http.Header) {
	// The API answers every origin (Access-Control-Allow-Origin: *), and the server may have set that before
	// this handler runs; the console is for its own origin only, so that no other site can read the keys.
	h.Del("Access-Control-Allow-Origin")
	h.Del("Access-Control-Allow-Credentials")
	h.Set("X-Content-Type-Options", "nosniff")
	// The standalone page may carry an API key in its query string; keep it out of Referer headers.
	h.Set("Referrer-Policy", "no-referrer")
}
