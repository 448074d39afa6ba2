package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgreflect/pgreflect/internal/devtools/browsertest"
	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/internal/stacktest"
	"github.com/pgreflect/pgreflect/pgtest"
	"github.com/pgreflect/pgreflect/testidp"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// servePage serves one example page directory against the stack, as `go run ./examples/serve DIR` does.
func servePage(t *testing.T, s *stacktest.Stack, dir string) string {
	t.Helper()
	h, err := newHandler(filepath.Join("..", dir), filepath.Join("..", "node_modules"), pageConfig{
		APIURL: s.URL, AnonKey: s.Anon, ClientID: stacktest.ClientID, ProviderScript: s.IDP.URL() + "/gsi/client"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// nonceOf reads the nonce claim of an ID token (already verified by the server when it matters here).
func nonceOf(t *testing.T, idToken string) string {
	t.Helper()
	parts := strings.Split(idToken, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", idToken)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims struct{ Nonce string }
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	return claims.Nonce
}

func TestBrowserExamplePages(t *testing.T) {
	chromium := browsertest.Find(t)
	testenv.NPMInstall(t, "..")
	s := stacktest.New(t, stacktest.Options{Demo: true, SignIn: true})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := browsertest.Start(t, chromium)
	shots := browsertest.ScreenshotDir(t)
	email := testidp.DefaultUser().Email

	t.Run("pre-built button signs in with a per-attempt nonce", func(t *testing.T) {
		page := servePage(t, s, "button")
		tb := b.NewTab(ctx, t)
		tb.Navigate(page + "/")
		tb.WaitFor(`document.querySelector('.g_id_signin .gsi-standin-button')`, 20*time.Second)
		if got := tb.EvalString(`document.getElementById('g_id_onload').dataset.use_fedcm_for_prompt`); got != "true" {
			t.Errorf("data-use_fedcm_for_prompt = %q", got)
		}
		// Record what the global page callback receives, and the raw nonce the page sends with it.
		tb.Eval(`(() => {
			const callback = window.handleSignInWithGoogle;
			window.seen = [];
			window.handleSignInWithGoogle = (r) => { window.seen.push({credential: r.credential, selectBy: r.select_by, rawNonce}); return callback(r); };
		})()`, nil)

		// An attempt whose raw nonce does not hash to the token's nonce is refused.
		tb.Eval(`rawNonce = 'not-the-nonce-the-provider-saw'`, nil)
		tb.Click(".g_id_signin .gsi-standin-button")
		tb.WaitFor(`document.getElementById('status').innerText.startsWith('Sign-in failed')`, 20*time.Second)
		if got := tb.EvalString(`document.getElementById('status').innerText`); !strings.Contains(got, "Nonces mismatch") {
			t.Errorf("status after a wrong nonce: %q", got)
		}

		tb.Click(".g_id_signin .gsi-standin-button")
		tb.WaitFor(`document.getElementById('status').innerText.startsWith('Signed in')`, 20*time.Second)
		if got := tb.EvalString(`document.getElementById('status').innerText`); got != "Signed in as "+email {
			t.Errorf("status %q", got)
		}
		var seen []struct{ Credential, SelectBy, RawNonce string }
		tb.Eval(`window.seen`, &seen)
		if len(seen) != 2 {
			t.Fatalf("the callback ran %d times, want 2", len(seen))
		}
		ok := seen[1]
		sum := sha256.Sum256([]byte(ok.RawNonce))
		if got := nonceOf(t, ok.Credential); got != hex.EncodeToString(sum[:]) || len(ok.RawNonce) != 44 {
			t.Errorf("token nonce %q, raw nonce %q: want the hex SHA-256 of a base64 32-byte raw nonce", got, ok.RawNonce)
		}
		if nonceOf(t, seen[0].Credential) == nonceOf(t, ok.Credential) || ok.SelectBy != "btn" {
			t.Errorf("second attempt reused the first nonce, or select_by %q", ok.SelectBy)
		}
		if tb.EvalString(`String(localStorage.getItem('sb-127-auth-token') !== null)`) != "true" {
			t.Error("supabase-js kept no session")
		}
		tb.Screenshot(filepath.Join(shots, "example-button.png"))
	})

	t.Run("One Tap prompts, signs in, and is skipped once signed in", func(t *testing.T) {
		page := servePage(t, s, "onetap")
		tb := b.NewTab(ctx, t)
		tb.Navigate(page + "/")
		tb.WaitFor(`document.getElementById('status').dataset.state === 'prompted'`, 20*time.Second)
		tb.WaitFor(`document.getElementById('gsi-standin-onetap')`, 5*time.Second)
		tb.Screenshot(filepath.Join(shots, "example-onetap-prompt.png"))

		tb.Click("#gsi-standin-continue")
		tb.WaitFor(`location.pathname === '/private.html' && document.getElementById('todos')?.dataset.loaded`, 20*time.Second)
		if got := tb.EvalString(`document.getElementById('email').innerText`); got != email {
			t.Errorf("protected page shows %q, want %q", got, email)
		}
		if todos := tb.EvalString(`document.getElementById('todos').innerText`); strings.Contains(todos, "Water the plants") {
			t.Errorf("the user sees another user's to-dos: %q", todos)
		}
		tb.Screenshot(filepath.Join(shots, "example-onetap-private.png"))

		// Back on the page with a session: no prompt, and the provider's script is not even loaded.
		tb.Navigate(page + "/")
		tb.WaitFor(`document.getElementById('status').dataset.state`, 20*time.Second)
		if got := tb.EvalString(`document.getElementById('status').dataset.state`); got != "skipped" {
			t.Fatalf("with a session the page state is %q, want skipped", got)
		}
		time.Sleep(500 * time.Millisecond) // a prompt drawn late would show up by now
		if tb.EvalString(`String(!!document.getElementById('gsi-standin-onetap') || typeof google !== 'undefined')`) != "false" {
			t.Error("One Tap was prompted although a session exists")
		}
		tb.Screenshot(filepath.Join(shots, "example-onetap-skipped.png"))

		// Signed out, the prompt is back.
		tb.Navigate(page + "/private.html")
		tb.WaitFor(`document.getElementById('todos')?.dataset.loaded`, 20*time.Second)
		tb.Click("#sign-out")
		tb.WaitFor(`location.pathname === '/' && document.getElementById('status')?.dataset.state === 'prompted'`, 20*time.Second)
	})

	// The wrong-nonce attempt makes the browser log the 400 of /token.
	b.CheckNoPageErrors(t, "400 (Bad Request)")
}
