package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgreflect/pgreflect/testidp"
)

// Issue 22: serve's provider URL defaulted to a port written a second time, beside config.toml's; with the
// port taken by something else, the pages silently loaded another provider. It reads the examples' own
// config.toml, and refuses what is not the provider that config.toml names.
func TestProviderOfTheExamplesConfig(t *testing.T) {
	google, err := configuredProvider(filepath.Join("..", "..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	if google.URL != "http://127.0.0.1:54329" || google.ClientID != "local-client" {
		t.Errorf("the examples' provider = %+v, want config.toml's http://127.0.0.1:54329 and local-client", google)
	}
	empty := t.TempDir()
	if err := os.MkdirAll(filepath.Join(empty, "supabase"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(empty, "supabase", "config.toml"), []byte("[auth]\nsite_url = \"http://127.0.0.1:3000\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := configuredProvider(empty); err == nil || !strings.Contains(err.Error(), "has no [auth.external.google] url and client_id") {
		t.Errorf("a config.toml without the provider: %v", err)
	}
}

func TestCheckProvider(t *testing.T) {
	ctx := context.Background()
	idp, err := testidp.New(testidp.Options{ClientID: "local-client"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(idp.Close)
	if err := checkProvider(ctx, idp.URL(), "examples"); err != nil {
		t.Errorf("the test provider itself: %v", err)
	}
	other := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(other.Close)
	if err := checkProvider(ctx, other.URL, "examples"); err == nil || !strings.Contains(err.Error(), "is not the test provider of examples/supabase/config.toml") {
		t.Errorf("another program on the port: %v", err)
	}
	gone := other.URL
	other.Close()
	if err := checkProvider(ctx, gone, "examples"); err == nil || !strings.Contains(err.Error(), "no test provider answers at "+gone) ||
		!strings.Contains(err.Error(), "go run ./cmd/pgreflect testidp --workdir examples") {
		t.Errorf("nothing on the port: %v", err)
	}
}
