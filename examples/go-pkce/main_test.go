package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgreflect/pgreflect/internal/config"
	"github.com/pgreflect/pgreflect/internal/devtools/browsertest"
	"github.com/pgreflect/pgreflect/internal/stacktest"
	"github.com/pgreflect/pgreflect/pgtest"
	"github.com/pgreflect/pgreflect/testidp"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestBrowserPKCESignIn signs in through the app in headless chromium: the sign-in link, the project, the
// provider, the callback route, and the protected page with the user's email and their own to-dos.
func TestBrowserPKCESignIn(t *testing.T) {
	chromium := browsertest.Find(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	appURL := "http://" + ln.Addr().String()
	s := stacktest.New(t, stacktest.Options{Demo: true, SignIn: true, Configure: func(c *config.Auth) {
		c.SiteURL = appURL
		c.AdditionalRedirectURLs = []string{appURL + "/**"}
	}})
	app := &http.Server{Handler: newApp(s.URL, s.Anon, true), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = app.Serve(ln) }()
	t.Cleanup(func() { _ = app.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := browsertest.Start(t, chromium)
	shots := browsertest.ScreenshotDir(t)
	tb := b.NewTab(ctx, t)

	tb.Navigate(appURL + "/")
	tb.Click("#sign-in")
	tb.WaitFor(`location.pathname === '/private' && document.getElementById('email')`, 20*time.Second)
	if got, want := tb.EvalString(`document.getElementById('email').innerText`), testidp.DefaultUser().Email; got != want {
		t.Errorf("protected page shows %q, want %q", got, want)
	}
	// The tokens are out of the page's reach: HttpOnly cookies.
	if c := tb.EvalString(`document.cookie`); strings.Contains(c, "auth-token") {
		t.Errorf("the page's script can read the session cookie: %q", c)
	}

	tb.Click("#task")
	tb.TypeText("Sign the contract")
	tb.Click("#add")
	tb.WaitFor(`document.getElementById('todos') && document.getElementById('todos').innerText.includes('Sign the contract')`, 20*time.Second)
	todos := tb.EvalString(`document.getElementById('todos').innerText`)
	if strings.Contains(todos, "Water the plants") {
		t.Errorf("the user sees another user's to-dos: %q", todos)
	}
	var owner string
	if err := s.Admin.QueryRow(ctx, `select u.email from public.todo t join auth.users u on u.id = t.user_id
		where t.task = 'Sign the contract'`).Scan(&owner); err != nil || owner != testidp.DefaultUser().Email {
		t.Errorf("the new to-do belongs to %q (%v), want the signed-in user", owner, err)
	}
	tb.Screenshot(filepath.Join(shots, "example-go-pkce.png"))

	tb.Click("#sign-out")
	tb.WaitFor(`document.getElementById('sign-in')`, 20*time.Second)
	tb.Navigate(appURL + "/private")
	if tb.EvalString(`location.pathname`) != "/" {
		t.Error("the protected page is still shown after sign-out")
	}
	tb.Navigate(appURL + "/auth/callback?code=made-up&next=/private")
	if tb.EvalString(`location.pathname`) != "/auth/auth-code-error" {
		t.Errorf("a made-up code ended at %s", tb.EvalString(`location.href`))
	}
	b.CheckNoPageErrors(t, "401 (Unauthorized)")
}
