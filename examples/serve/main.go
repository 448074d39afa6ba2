// Command serve serves one of the static example pages (examples/button, examples/onetap) the way any static
// file server would, plus the two things a static page cannot know by itself:
//
//   - /config.js sets window.EXAMPLE: the project's API URL and anon key (both public), the provider's
//     client ID, and the URL of the provider's client script (the test provider's stand-in for
//     https://accounts.google.com/gsi/client);
//   - /supabase.js is supabase-js's browser build from examples/node_modules (npm ci --prefix examples).
//
// Run from the repository root:
//
//	eval "$(go run ./cmd/pgreflect status --workdir examples -o env | sed 's/^/export /')"
//	go run ./examples/serve examples/button   # http://127.0.0.1:3000
//
// The provider is the one examples/supabase/config.toml names ([auth.external.google] url and client_id),
// which `pgreflect testidp --workdir examples` listens on; serve refuses to start when something else answers
// there.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/pgreflect/pgreflect/internal/config"
)

// pageConfig is window.EXAMPLE.
type pageConfig struct {
	APIURL         string `json:"apiURL"`
	AnonKey        string `json:"anonKey"`
	ClientID       string `json:"clientID"`
	ProviderScript string `json:"providerScript"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:3000", "address to serve the page on")
	apiURL := flag.String("api-url", os.Getenv("API_URL"), "the project's API URL (default $API_URL)")
	anonKey := flag.String("anon-key", os.Getenv("ANON_KEY"), "the project's anon key (default $ANON_KEY)")
	workdir := flag.String("workdir", "examples", "the project whose supabase/config.toml names the provider ([auth.external.google] url and client_id)")
	provider := flag.String("provider-url", "", "the test provider (pgreflect testidp; default: [auth.external.google] url of the workdir's config.toml)")
	clientID := flag.String("client-id", "", "the provider's web client ID (default: the first of [auth.external.google] client_id)")
	modules := flag.String("node-modules", filepath.Join("examples", "node_modules"), "where npm installed supabase-js")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: serve [flags] PAGE_DIR")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 || *apiURL == "" || *anonKey == "" {
		flag.Usage()
		log.Fatal("give the page's directory, and -api-url and -anon-key (or API_URL and ANON_KEY)")
	}
	// One source of truth (issue 22): the provider the project signs in with is the one the page loads.
	google, err := configuredProvider(*workdir)
	if err != nil {
		log.Fatal(err)
	}
	if *provider == "" {
		*provider = google.URL
	}
	if *clientID == "" {
		*clientID = google.ClientID
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	err = checkProvider(ctx, *provider, *workdir)
	cancel()
	if err != nil {
		log.Fatal(err)
	}
	h, err := newHandler(flag.Arg(0), *modules, pageConfig{APIURL: *apiURL, AnonKey: *anonKey, ClientID: *clientID,
		ProviderScript: *provider + "/gsi/client"})
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Addr: *addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown(context.Background())
	}()
	fmt.Printf("%s on http://%s\n", flag.Arg(0), *addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

// newHandler serves pageDir with /config.js and /supabase.js.
func newHandler(pageDir, nodeModules string, cfg pageConfig) (http.Handler, error) {
	umd := filepath.Join(nodeModules, "@supabase", "supabase-js", "dist", "umd", "supabase.js")
	if _, err := os.Stat(umd); err != nil {
		return nil, fmt.Errorf("supabase-js is not installed (run npm ci --prefix examples): %w", err)
	}
	// json.Marshal escapes <, > and & so the values cannot end the script.
	js, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServer(http.Dir(pageDir)))
	mux.HandleFunc("GET /config.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintf(w, "window.EXAMPLE = %s;\n", js)
	})
	mux.HandleFunc("GET /supabase.js", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, umd)
	})
	return mux, nil
}

// provider is the project's Google: the test provider of the examples.
type provider struct{ URL, ClientID string }

// configuredProvider reads [auth.external.google] of workdir's supabase/config.toml.
func configuredProvider(workdir string) (provider, error) {
	cfg, _, err := config.Load(workdir, os.Getenv)
	if err != nil {
		return provider{}, err
	}
	google := cfg.Auth.External["google"]
	p := provider{URL: strings.TrimSuffix(google.URL, "/")}
	if ids := google.ClientIDs(); len(ids) > 0 {
		p.ClientID = ids[0]
	}
	if p.URL == "" || p.ClientID == "" {
		return provider{}, fmt.Errorf("%s has no [auth.external.google] url and client_id: the test provider the pages load",
			filepath.Join(workdir, "supabase", "config.toml"))
	}
	return p, nil
}

// checkProvider makes sure an OpenID provider whose issuer is url answers there, so that a page never loads
// the script of whatever else holds the port.
func checkProvider(ctx context.Context, url, workdir string) error {
	start := fmt.Sprintf("start it with: go run ./cmd/pgreflect testidp --workdir %s", workdir)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/.well-known/openid-configuration", nil)
	if err != nil {
		return fmt.Errorf("provider URL %q: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("no test provider answers at %s (%v); %s", url, err, start)
	}
	defer resp.Body.Close()
	var doc struct {
		Issuer string `json:"issuer"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&doc) != nil || doc.Issuer != url {
		return fmt.Errorf("what answers at %s is not the test provider of %s (HTTP %d, issuer %q): another program holds its port; stop it, or move the provider (url in the config.toml) and %s",
			url, filepath.Join(workdir, "supabase", "config.toml"), resp.StatusCode, doc.Issuer, start)
	}
	return nil
}
