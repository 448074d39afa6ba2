package console_test

import (
	"encoding/json"
	"html"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/console"
	"github.com/pgreflect/pgreflect/internal/stacktest"
)

// mgmtToken is a management token in the shape pgreflect start makes.
const mgmtToken = "sbp_0123456789abcdef0123456789abcdef01234567"

// testKeys are a project's keys as pgreflect start makes them.
func testKeys(t *testing.T) (anon, service string) {
	t.Helper()
	keys, err := auth.NewKeys(stacktest.JWTSecret)
	if err != nil {
		t.Fatal(err)
	}
	anon, _ = keys.SignAPIKey("anon", stacktest.ProjectRef)
	service, _ = keys.SignAPIKey("service_role", stacktest.ProjectRef)
	return anon, service
}

// get sends a request from a browser on the server's machine (loopback, naming a loopback host), unless
// header says otherwise.
func get(t *testing.T, h http.Handler, method, path string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	req.RemoteAddr = "127.0.0.1:40000"
	if !strings.Contains(path, "://") {
		req.Host = "127.0.0.1:54321"
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

var configScript = regexp.MustCompile(`(?s)<script id="pgreflect-config" type="application/json">(.*?)</script>`)

// pageConfig decodes the configuration the console page carries.
func pageConfig(t *testing.T, body string) map[string]any {
	t.Helper()
	m := configScript.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("the page has no config script:\n%s", body)
	}
	var cfg map[string]any
	if err := json.Unmarshal([]byte(m[1]), &cfg); err != nil {
		t.Fatalf("config %q: %v", m[1], err)
	}
	return cfg
}

func TestServesPagesAndAssets(t *testing.T) {
	anon, _ := testKeys(t)
	h := console.Handler(console.Options{APIURL: "https://api.example.test/", AnonKey: anon})
	for _, c := range []struct {
		path, contentType, contains string
	}{
		{"/console/", "text/html; charset=utf-8", "API Docs"},
		{"/console/index.html", "text/html; charset=utf-8", "GraphiQL"},
		{"/console/graphiql.html", "text/html; charset=utf-8", "standalone.js"},
		{"/console/console.js", "text/javascript; charset=utf-8", "pgreflect-config"},
		{"/console/graphiql-mount.js", "text/javascript; charset=utf-8", `Unknown field "__schema"`},
		{"/console/standalone.js", "text/javascript; charset=utf-8", "URLSearchParams"},
		{"/console/console.css", "text/css; charset=utf-8", ".graphiql-host"},
		{"/console/vendor/graphiql.min.js", "text/javascript; charset=utf-8", "GraphiQL"},
		{"/console/vendor/graphiql.min.css", "text/css; charset=utf-8", ".graphiql-container"},
		{"/console/vendor/react.production.min.js", "text/javascript; charset=utf-8", "react.production.min.js"},
		{"/console/vendor/react-dom.production.min.js", "text/javascript; charset=utf-8", "react-dom.production.min.js"},
		{"/console/vendor/versions.json", "application/json", `"graphiql"`},
		{"/console/vendor/LICENSE.graphiql", "text/plain; charset=utf-8", "MIT"},
	} {
		rec := get(t, h, http.MethodGet, c.path, nil)
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s: status %d", c.path, rec.Code)
			continue
		}
		if got := rec.Header().Get("Content-Type"); got != c.contentType {
			t.Errorf("GET %s: Content-Type %q, want %q", c.path, got, c.contentType)
		}
		if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("GET %s: X-Content-Type-Options %q", c.path, got)
		}
		if !strings.Contains(rec.Body.String(), c.contains) {
			t.Errorf("GET %s: body lacks %q", c.path, c.contains)
		}
	}
}

func TestConsolePageCarriesTheProjectConfig(t *testing.T) {
	anon, _ := testKeys(t)
	h := console.Handler(console.Options{APIURL: "https://api.example.test/", AnonKey: anon})
	rec := get(t, h, http.MethodGet, "/console/", nil)
	body := rec.Body.String()
	cfg := pageConfig(t, body)
	want := map[string]string{"apiUrl": "https://api.example.test", "graphqlUrl": "https://api.example.test/graphql/v1",
		"anonKey": anon}
	for k, v := range want {
		if cfg[k] != v {
			t.Errorf("config %s = %q, want %q", k, cfg[k], v)
		}
	}
	if strings.Contains(body, "{{") {
		t.Error("the page template was served unrendered")
	}
	if got := rec.Header().Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control %q: the page carries keys and must not be cached", got)
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self'") || !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	// The standalone page is static: it knows no key, and may talk to any endpoint.
	rec = get(t, h, http.MethodGet, "/console/graphiql.html", nil)
	if strings.Contains(rec.Body.String(), anon) {
		t.Error("the standalone page carries the anon key")
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src *") {
		t.Errorf("standalone Content-Security-Policy %q", csp)
	}
}

func TestAPIURLFromTheRequestIsEscaped(t *testing.T) {
	anon, _ := testKeys(t)
	h := console.Handler(console.Options{AnonKey: anon, ManagementToken: mgmtToken})
	cfg := pageConfig(t, get(t, h, http.MethodGet, "http://127.0.0.1:54321/console/", nil).Body.String())
	if cfg["graphqlUrl"] != "http://127.0.0.1:54321/graphql/v1" {
		t.Errorf("graphqlUrl = %q", cfg["graphqlUrl"])
	}
	req := httptest.NewRequest(http.MethodGet, "/console/", nil)
	req.Header.Set("Authorization", "Bearer "+mgmtToken)
	req.Host = `x"></script><script>alert(1)</script>`
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body := rec.Body.String()
	if strings.Contains(body, "<script>alert(1)") {
		t.Fatalf("the Host header is reflected unescaped:\n%s", body)
	}
	if got := pageConfig(t, body)["apiUrl"]; got != "http://"+req.Host {
		t.Errorf("apiUrl = %q, want the host as data", got)
	}
}

func TestUnspecifiedListenAddressFallsBackToTheRequestHost(t *testing.T) {
	h := console.Handler(console.Options{APIURL: "http://0.0.0.0:54321", ManagementToken: mgmtToken})
	cfg := pageConfig(t, get(t, h, http.MethodGet, "http://192.0.2.7:54321/console/",
		map[string]string{"Authorization": "Bearer " + mgmtToken}).Body.String())
	if cfg["apiUrl"] != "http://192.0.2.7:54321" {
		t.Errorf("apiUrl = %q", cfg["apiUrl"])
	}
}

// The API sets Access-Control-Allow-Origin: * on everything it serves; the console takes it back so that no
// other site's script can read the page and its keys.
func TestNotReadableByOtherOrigins(t *testing.T) {
	anon, _ := testKeys(t)
	inner := console.Handler(console.Options{AnonKey: anon})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		inner.ServeHTTP(w, r)
	})
	for _, p := range []string{"/console/", "/console/graphiql.html", "/console/console.js"} {
		rec := get(t, h, http.MethodGet, p, map[string]string{"Origin": "https://evil.example"})
		if got := rec.Header().Get("Access-Control-Allow-Origin"); got != "" {
			t.Errorf("%s: Access-Control-Allow-Origin %q", p, got)
		}
	}
}

func TestPagesNeverCarrySecrets(t *testing.T) {
	anon, service := testKeys(t)
	every := []string{"/console/", "/console/index.html", "/console/graphiql.html", "/console/console.js",
		"/console/auth-pages.js", "/console/graphiql-mount.js", "/console/standalone.js", "/console/vendor/versions.json"}
	secrets := map[string]string{"service_role key": service, "JWT secret": stacktest.JWTSecret, "management token": mgmtToken}
	for _, opts := range []console.Options{
		{AnonKey: anon},
		{AnonKey: anon, ServiceRoleKey: service, ManagementToken: mgmtToken, ProjectRef: stacktest.ProjectRef},
	} {
		h := console.Handler(opts)
		for _, p := range every {
			body := get(t, h, http.MethodGet, p, nil).Body.String()
			for name, secret := range secrets {
				if strings.Contains(body, secret) {
					t.Errorf("%s shows the %s", p, name)
				}
			}
		}
		cfg := pageConfig(t, get(t, h, http.MethodGet, "/console/", nil).Body.String())
		configured := opts.ServiceRoleKey != ""
		if cfg["hasServiceRoleKey"] != configured || cfg["hasManagement"] != configured {
			t.Errorf("config %v for options with a service_role key: %v", cfg, configured)
		}
	}
}

// The secrets come from api/credentials, only to clients the console lets in, and are never cached.
func TestCredentialsEndpoint(t *testing.T) {
	anon, service := testKeys(t)
	h := console.Handler(console.Options{AnonKey: anon, ServiceRoleKey: service, ManagementToken: mgmtToken,
		ProjectRef: stacktest.ProjectRef})
	rec := get(t, h, http.MethodGet, "/console/api/credentials", nil)
	var got map[string]string
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("status %d, body %s", rec.Code, rec.Body)
	}
	if got["serviceRoleKey"] != service || got["managementToken"] != mgmtToken || len(got) != 2 {
		t.Errorf("credentials %v", got)
	}
	if rec.Header().Get("Cache-Control") != "no-store" || rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", rec.Header())
	}
	if rec := get(t, h, http.MethodPost, "/console/api/credentials", nil); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: status %d", rec.Code)
	}
	rec = get(t, h, http.MethodGet, "/console/api/credentials", map[string]string{"X-Forwarded-For": "198.51.100.7"})
	if rec.Code != http.StatusUnauthorized || strings.Contains(rec.Body.String(), service) {
		t.Errorf("through a proxy without the token: status %d", rec.Code)
	}
	// Without them configured, the answer is empty rather than an error.
	h = console.Handler(console.Options{AnonKey: anon})
	if body := strings.TrimSpace(get(t, h, http.MethodGet, "/console/api/credentials", nil).Body.String()); body != "{}" {
		t.Errorf("unconfigured credentials %s", body)
	}
}

func TestUnknownPathsAndMethods(t *testing.T) {
	anon, _ := testKeys(t)
	h := console.Handler(console.Options{AnonKey: anon})
	for _, p := range []string{"/console/nope.js", "/console/vendor/", "/console/vendor", "/console/assets/index.html",
		"/console/../console/console.js", "/console/VENDOR/graphiql.min.js", "/console", "/consolex/", "/graphql/v1",
		"/console/index.html/", "/console/graphiql.html.map", "/console/vendor/index.umd.js.map"} {
		rec := get(t, h, http.MethodGet, p, nil)
		if rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", p, rec.Code)
		}
		if strings.Contains(rec.Body.String(), anon) {
			t.Errorf("GET %s: the 404 carries the anon key", p)
		}
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		for _, p := range []string{"/console/", "/console/graphiql.html"} {
			rec := get(t, h, m, p, nil)
			if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s: status %d, Allow %q", m, p, rec.Code, rec.Header().Get("Allow"))
			}
		}
	}
	rec := get(t, h, http.MethodHead, "/console/", nil)
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 {
		t.Errorf("HEAD /console/: status %d, %d body bytes", rec.Code, rec.Body.Len())
	}
}

func TestAssetsRevalidateWithETag(t *testing.T) {
	h := console.Handler(console.Options{})
	rec := get(t, h, http.MethodGet, "/console/vendor/graphiql.min.js", nil)
	etag := rec.Header().Get("ETag")
	if etag == "" || rec.Header().Get("Cache-Control") != "no-cache" {
		t.Fatalf("ETag %q, Cache-Control %q", etag, rec.Header().Get("Cache-Control"))
	}
	if rec := get(t, h, http.MethodGet, "/console/vendor/graphiql.min.js", map[string]string{"If-None-Match": etag}); rec.Code != http.StatusNotModified {
		t.Errorf("conditional GET: status %d, want 304", rec.Code)
	}
	other := get(t, h, http.MethodGet, "/console/vendor/react.production.min.js", nil).Header().Get("ETag")
	if other == etag {
		t.Error("two different files share an ETag")
	}
}

var localRef = regexp.MustCompile(`(?:src|href)="([^"#]*)"`)

// Every script and stylesheet the pages load is embedded; nothing comes from a CDN.
func TestPagesLoadOnlyEmbeddedFiles(t *testing.T) {
	h := console.Handler(console.Options{})
	for _, page := range []string{"/console/", "/console/graphiql.html"} {
		body := get(t, h, http.MethodGet, page, nil).Body.String()
		refs := localRef.FindAllStringSubmatch(body, -1)
		if len(refs) < 5 {
			t.Fatalf("%s references only %d files", page, len(refs))
		}
		for _, m := range refs {
			ref := html.UnescapeString(m[1])
			if ref == "" {
				continue
			}
			if strings.Contains(ref, "//") || strings.HasPrefix(ref, "/") {
				t.Errorf("%s loads %q, which is not next to it", page, ref)
				continue
			}
			if rec := get(t, h, http.MethodGet, "/console/"+ref, nil); rec.Code != http.StatusOK {
				t.Errorf("%s references %s: status %d", page, ref, rec.Code)
			}
		}
	}
}

// The vendored bundles are the versions package-lock.json pins (update-assets.sh copies them), and stay small.
func TestVendoredAssetsMatchTheLockFile(t *testing.T) {
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	raw, err := os.ReadFile(filepath.Join("web", "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &lock); err != nil {
		t.Fatal(err)
	}
	var vendored map[string]string
	raw, err = os.ReadFile(filepath.Join("assets", "vendor", "versions.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &vendored); err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"graphiql", "react", "react-dom"} {
		locked := lock.Packages["node_modules/"+pkg].Version
		if locked == "" || vendored[pkg] != locked {
			t.Errorf("%s: vendored %q, package-lock.json %q; run console/web/update-assets.sh", pkg, vendored[pkg], locked)
		}
	}
	var total int64
	err = filepath.WalkDir("assets", func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		total += info.Size()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if total > 4<<20 {
		t.Errorf("the embedded assets take %d bytes; keep them under 4 MiB", total)
	}
}
