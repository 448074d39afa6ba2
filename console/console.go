// Package console serves the small management console of a project on the API listener: a settings page
// with the API URL, the GraphQL URL and the anon key, and GraphiQL (API Docs > GraphQL > GraphiQL) talking to
// /graphql/v1 with the anon key. The same GraphiQL also ships as a standalone page, graphiql.html, which
// takes the endpoint and the key from its query string or a form, so it works from any origin or as a file.
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
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
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
	// ServiceRoleKey, when set, is also shown on the settings page (never given to GraphiQL). It bypasses
	// row level security, so set it only on a listener nobody else can reach.
	ServiceRoleKey string
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
	assets map[string]asset // by path relative to Path
}

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
	return h
}

// pageConfig is what the settings page and its GraphiQL need; it is rendered into the page as JSON.
type pageConfig struct {
	APIURL         string `json:"apiUrl"`
	GraphQLURL     string `json:"graphqlUrl"`
	AnonKey        string `json:"anonKey"`
	ServiceRoleKey string `json:"serviceRoleKey,omitempty"`
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, Path)
	if !ok {
		http.NotFound(w, r)
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
		ServiceRoleKey: h.opts.ServiceRoleKey}
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
