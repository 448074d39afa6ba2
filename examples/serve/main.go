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
	"syscall"
	"time"
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
	provider := flag.String("provider-url", "http://127.0.0.1:54329", "the test provider (pgreflect testidp)")
	clientID := flag.String("client-id", "local-client", "the provider's web client ID")
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
