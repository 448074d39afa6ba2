package console_test

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/pgreflect/pgreflect/console"
	"github.com/pgreflect/pgreflect/internal/testenv"
	"github.com/pgreflect/pgreflect/pgtest"
	"github.com/pgreflect/pgreflect/stacktest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// aliceID owns two to-dos of the demo schema.
const aliceID = "00000000-0000-4000-8000-000000000001"

// newStack is the API with the demo schema and the console, as `pgreflect start` serves them.
func newStack(t *testing.T) *stacktest.Stack {
	t.Helper()
	return stacktest.New(t, stacktest.Options{Demo: true, Console: func(anon string) http.Handler {
		return console.Handler(console.Options{AnonKey: anon})
	}})
}

// findChromium returns Debian's chromium, skipping the test when it is missing, unless CI is set.
func findChromium(t *testing.T) string {
	t.Helper()
	return testenv.LookPath(t, "the console's browser test needs it (apt-get install -y chromium)", "/usr/bin/chromium", "chromium", "chromium-browser")
}

// screenshotDir is where screenshots go: PGREFLECT_SCREENSHOT_DIR to keep them, else the test's temp dir.
func screenshotDir(t *testing.T) string {
	if d := os.Getenv("PGREFLECT_SCREENSHOT_DIR"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// runQuery replaces the query in GraphiQL's editor by typing, runs it with the run button, and returns the
// text of the result pane once the answer is there.
func runQuery(t *testing.T, tb *tab, query string) string {
	t.Helper()
	tb.waitFor(`document.querySelector('.graphiql-query-editor .CodeMirror')`, 20*time.Second)
	tb.click(".graphiql-query-editor .CodeMirror-lines")
	tb.key("a", "KeyA", 65, 2) // Ctrl-A selects the old query; typing replaces it
	tb.typeText(query)
	got := tb.evalString(`document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.getValue()`)
	if got != query {
		t.Fatalf("the editor holds %q after typing %q", got, query)
	}
	// Empty the result pane first, so that an answer equal to the previous one is seen too.
	tb.eval(`document.querySelector('.graphiql-response .CodeMirror').CodeMirror.setValue('')`, nil)
	tb.click(".graphiql-execute-button")
	tb.waitFor(`document.querySelector('.graphiql-response .CodeMirror').CodeMirror.getValue() !== ''`, 20*time.Second)
	// What the person sees: the rendered lines of the result pane.
	return tb.evalString(`document.querySelector('.graphiql-response .CodeMirror-code').innerText`)
}

// checkNoPageErrors fails on exceptions, console errors and CSP violations in the pages so far. Failed
// requests the page made on purpose (none here) would also show.
func checkNoPageErrors(t *testing.T, b *browser) {
	t.Helper()
	for _, l := range b.pageLogs() {
		if strings.Contains(l, "favicon.ico") {
			continue // the browser asks for it on its own
		}
		t.Errorf("page reported: %s", l)
	}
}

func TestBrowserConsole(t *testing.T) {
	chromium := findChromium(t)
	s := newStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := startBrowser(t, chromium)
	shots := screenshotDir(t)

	t.Run("settings page shows the URLs and the anon key only", func(t *testing.T) {
		tb := b.newTab(ctx)
		tb.navigate(s.URL + "/console/")
		tb.waitFor(`document.getElementById('anon-key').value !== ''`, 10*time.Second)
		if got := tb.evalString(`document.getElementById('anon-key').value`); got != s.Anon {
			t.Errorf("anon key field = %q, want the project's anon key", got)
		}
		if got := tb.evalString(`document.getElementById('graphql-url').value`); got != s.URL+"/graphql/v1" {
			t.Errorf("GraphQL URL field = %q, want %q", got, s.URL+"/graphql/v1")
		}
		html := tb.evalString(`document.documentElement.outerHTML`)
		for name, secret := range map[string]string{"service_role key": s.Service, "JWT secret": stacktest.JWTSecret} {
			if strings.Contains(html, secret) {
				t.Errorf("the console page shows the %s", name)
			}
		}
		if tb.evalString(`String(document.querySelector('dd.service-role').hidden)`) != "true" {
			t.Error("the service_role row is visible although no service_role key was configured")
		}
		tb.screenshot(filepath.Join(shots, "console-settings.png"))
	})

	t.Run("GraphiQL runs a demo query with the anon key", func(t *testing.T) {
		tb := b.newTab(ctx)
		tb.navigate(s.URL + "/console/#api-docs/graphql/graphiql")
		tb.waitFor(`document.getElementById('graphiql').dataset.schema`, 20*time.Second)
		if got := tb.evalString(`document.getElementById('graphiql').dataset.schema`); got != "loaded" {
			t.Fatalf("schema state = %q, banner %q", got, tb.evalString(`document.getElementById('schema-banner').innerText`))
		}
		result := runQuery(t, tb, "query Blogs {\n  blogCollection(orderBy: [{id: AscNullsLast}]) {\n"+
			"    edges { node { name description } }\n  }\n}")
		for _, want := range []string{`"blogCollection"`, `"Alice's notes"`, `"Bob builds"`} {
			if !strings.Contains(result, want) {
				t.Errorf("result pane lacks %s:\n%s", want, result)
			}
		}
		// The schema explorer works: the documentation pane lists the root types.
		tb.click(`.graphiql-sidebar button[aria-label="Show Documentation Explorer"]`)
		tb.waitFor(`document.querySelector('.graphiql-doc-explorer') &&
			document.querySelector('.graphiql-doc-explorer').innerText.includes('blogConnection')`, 10*time.Second)
		tb.screenshot(filepath.Join(shots, "console-graphiql.png"))
	})

	t.Run("a pasted user JWT is sent as Authorization Bearer", func(t *testing.T) {
		tb := b.newTab(ctx)
		tb.navigate(s.URL + "/console/#api-docs/graphql/graphiql")
		const q = `{ todoCollection(orderBy: [{id: AscNullsLast}]) { edges { node { task } } } }`
		anonResult := runQuery(t, tb, q)
		if strings.Contains(anonResult, "Water the plants") {
			t.Fatalf("anon sees Alice's to-dos:\n%s", anonResult)
		}
		token, err := s.Keys.Sign(jwt.MapClaims{"sub": aliceID, "role": "authenticated",
			"exp": time.Now().Add(time.Hour).Unix()})
		if err != nil {
			t.Fatal(err)
		}
		tb.click("#user-jwt")
		tb.typeText(token)
		if got := tb.evalString(`document.getElementById('request-role').innerText`); got != "role: authenticated" {
			t.Errorf("role hint = %q", got)
		}
		userResult := runQuery(t, tb, q)
		if !strings.Contains(userResult, "Water the plants") || strings.Contains(userResult, "Buy timber") {
			t.Errorf("as Alice the result pane should show her to-dos only:\n%s", userResult)
		}
	})

	t.Run("standalone page as a file takes url and apikey from the query string", func(t *testing.T) {
		page, err := filepath.Abs("assets/graphiql.html")
		if err != nil {
			t.Fatal(err)
		}
		tb := b.newTab(ctx)
		q := url.Values{"url": {s.URL + "/graphql/v1"}, "apikey": {s.Anon}}
		tb.navigate("file://" + page + "?" + q.Encode())
		tb.waitFor(`document.getElementById('graphiql').dataset.schema`, 20*time.Second)
		result := runQuery(t, tb, `{ __typename }`)
		if !strings.Contains(result, `"__typename": "Query"`) {
			t.Errorf("result pane:\n%s", result)
		}
		tb.screenshot(filepath.Join(shots, "standalone-file.png"))
	})

	t.Run("standalone page served by the console takes the endpoint from the form", func(t *testing.T) {
		tb := b.newTab(ctx)
		tb.navigate(s.URL + "/console/graphiql.html")
		if tb.evalString(`document.getElementById('schema-banner').innerText`) == "" {
			t.Error("without an endpoint the page should ask for one")
		}
		tb.click("#endpoint-url")
		tb.typeText(s.URL + "/graphql/v1")
		tb.click("#endpoint-apikey")
		tb.typeText(s.Anon)
		tb.click("#connect")
		tb.waitFor(`document.getElementById('graphiql').dataset.schema === 'loaded'`, 20*time.Second)
		result := runQuery(t, tb, `{ blogCollection(first: 1, orderBy: [{id: AscNullsLast}]) { edges { node { name } } } }`)
		if !strings.Contains(result, `"Alice's notes"`) {
			t.Errorf("result pane:\n%s", result)
		}
	})

	// Last, because it changes the schema: without introspection the page says how to enable it.
	t.Run("introspection off shows how to enable it", func(t *testing.T) {
		if _, err := s.Admin.Exec(context.Background(), `comment on schema public is null`); err != nil {
			t.Fatal(err)
		}
		tb := b.newTab(ctx)
		// The API reloads its schema on DDL; reload the page until the new schema answers.
		deadline := time.Now().Add(20 * time.Second)
		for {
			tb.navigate(s.URL + "/console/#api-docs/graphql/graphiql")
			tb.waitFor(`document.getElementById('graphiql').dataset.schema`, 20*time.Second)
			if tb.evalString(`document.getElementById('graphiql').dataset.schema`) == "introspection" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("introspection still answers after the comment was removed")
			}
			time.Sleep(200 * time.Millisecond)
		}
		banner := tb.evalString(`document.getElementById('schema-banner').innerText`)
		if !strings.Contains(banner, `comment on schema public is e'@graphql({"introspection": true})'`) {
			t.Errorf("banner = %q", banner)
		}
		// Queries still run.
		result := runQuery(t, tb, `{ __typename }`)
		if !strings.Contains(result, `"Query"`) {
			t.Errorf("result pane:\n%s", result)
		}
		tb.screenshot(filepath.Join(shots, "console-no-introspection.png"))
	})

	checkNoPageErrors(t, b)
}
