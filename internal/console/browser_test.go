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

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/console"
	"github.com/pgreflect/pgreflect/internal/devtools/browsertest"
	"github.com/pgreflect/pgreflect/internal/stacktest"
	"github.com/pgreflect/pgreflect/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// aliceID owns two to-dos of the demo schema.
const aliceID = "00000000-0000-4000-8000-000000000001"

// newStack is the API with the demo schema and the console, as `pgreflect start` serves them.
func newStack(t *testing.T) *stacktest.Stack {
	t.Helper()
	keys, err := auth.NewKeys(stacktest.JWTSecret)
	if err != nil {
		t.Fatal(err)
	}
	return stacktest.New(t, stacktest.Options{Demo: true, Console: func(anon string) http.Handler {
		return console.Handler(console.Options{AnonKey: anon, MintToken: console.Minter(keys), SearchPath: []string{"public", "extensions"}})
	}})
}

// runQuery replaces the query in GraphiQL's editor by typing, runs it with the run button, and returns the
// text of the result pane once the answer is there.
func runQuery(t *testing.T, tb *browsertest.Tab, query string) string {
	t.Helper()
	tb.WaitFor(`document.querySelector('.graphiql-query-editor .CodeMirror')`, 20*time.Second)
	tb.Click(".graphiql-query-editor .CodeMirror-lines")
	tb.Key("a", "KeyA", 65, 2) // Ctrl-A selects the old query; typing replaces it
	tb.TypeText(query)
	got := tb.EvalString(`document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.getValue()`)
	if got != query {
		t.Fatalf("the editor holds %q after typing %q", got, query)
	}
	// Empty the result pane first, so that an answer equal to the previous one is seen too.
	tb.Eval(`document.querySelector('.graphiql-response .CodeMirror').CodeMirror.setValue('')`, nil)
	tb.Click(".graphiql-execute-button")
	tb.WaitFor(`document.querySelector('.graphiql-response .CodeMirror').CodeMirror.getValue() !== ''`, 20*time.Second)
	// What the person sees: the rendered lines of the result pane.
	return tb.EvalString(`document.querySelector('.graphiql-response .CodeMirror-code').innerText`)
}

func TestBrowserConsole(t *testing.T) {
	chromium := browsertest.Find(t)
	s := newStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := browsertest.Start(t, chromium)
	shots := browsertest.ScreenshotDir(t)

	t.Run("settings page shows the URLs and the anon key only", func(t *testing.T) {
		tb := b.NewTab(ctx, t)
		tb.Navigate(s.URL + "/console/")
		tb.WaitFor(`document.getElementById('anon-key').value !== ''`, 10*time.Second)
		if got := tb.EvalString(`document.getElementById('anon-key').value`); got != s.Anon {
			t.Errorf("anon key field = %q, want the project's anon key", got)
		}
		if got := tb.EvalString(`document.getElementById('graphql-url').value`); got != s.URL+"/graphql/v1" {
			t.Errorf("GraphQL URL field = %q, want %q", got, s.URL+"/graphql/v1")
		}
		// Issue 22: Studio shows the exposed schemas; the console did not.
		if got := tb.EvalString(`document.getElementById('exposed-schemas').value`); got != "public, extensions" {
			t.Errorf("exposed schemas = %q, want the search path", got)
		}
		html := tb.EvalString(`document.documentElement.outerHTML`)
		for name, secret := range map[string]string{"service_role key": s.Service, "JWT secret": stacktest.JWTSecret} {
			if strings.Contains(html, secret) {
				t.Errorf("the console page shows the %s", name)
			}
		}
		if tb.EvalString(`String(document.querySelector('dd.service-role').hidden)`) != "true" {
			t.Error("the service_role row is visible although no service_role key was configured")
		}
		tb.Screenshot(filepath.Join(shots, "console-settings.png"))
	})

	t.Run("GraphiQL runs a demo query with the anon key", func(t *testing.T) {
		tb := b.NewTab(ctx, t)
		tb.Navigate(s.URL + "/console/#api-docs/graphql/graphiql")
		tb.WaitFor(`document.getElementById('graphiql').dataset.schema`, 20*time.Second)
		if got := tb.EvalString(`document.getElementById('graphiql').dataset.schema`); got != "loaded" {
			t.Fatalf("schema state = %q, banner %q", got, tb.EvalString(`document.getElementById('schema-banner').innerText`))
		}
		result := runQuery(t, tb, "query Blogs {\n  blogCollection(orderBy: [{id: AscNullsLast}]) {\n"+
			"    edges { node { name description } }\n  }\n}")
		for _, want := range []string{`"blogCollection"`, `"Alice's notes"`, `"Bob builds"`} {
			if !strings.Contains(result, want) {
				t.Errorf("result pane lacks %s:\n%s", want, result)
			}
		}
		// The schema explorer works: the documentation pane lists the root types.
		tb.Click(`.graphiql-sidebar button[aria-label="Show Documentation Explorer"]`)
		tb.WaitFor(`document.querySelector('.graphiql-doc-explorer') &&
			document.querySelector('.graphiql-doc-explorer').innerText.includes('blogConnection')`, 10*time.Second)
		tb.Screenshot(filepath.Join(shots, "console-graphiql.png"))
	})

	t.Run("a pasted user JWT is sent as Authorization Bearer", func(t *testing.T) {
		tb := b.NewTab(ctx, t)
		tb.Navigate(s.URL + "/console/#api-docs/graphql/graphiql")
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
		tb.Click("#user-jwt")
		tb.TypeText(token)
		if got := tb.EvalString(`document.getElementById('request-role').innerText`); got != "role: authenticated" {
			t.Errorf("role hint = %q", got)
		}
		userResult := runQuery(t, tb, q)
		if !strings.Contains(userResult, "Water the plants") || strings.Contains(userResult, "Buy timber") {
			t.Errorf("as Alice the result pane should show her to-dos only:\n%s", userResult)
		}
	})

	// Issue 22: querying as a user meant pasting a JWT minted elsewhere; Run as mints a short-lived one.
	t.Run("Run as mints a short-lived token for a user or a role", func(t *testing.T) {
		tb := b.NewTab(ctx, t)
		tb.Navigate(s.URL + "/console/#api-docs/graphql/graphiql")
		tb.WaitFor(`!document.getElementById('run-as-box').hidden`, 10*time.Second)
		const q = `{ todoCollection(orderBy: [{id: AscNullsLast}]) { edges { node { task } } } }`
		tb.Eval(`(function (s) { s.value = 'authenticated'; s.dispatchEvent(new Event('change')); })(document.getElementById('run-as'))`, nil)
		tb.Click("#run-as-user")
		tb.TypeText(aliceID)
		tb.Click("#run-as-mint")
		tb.WaitFor(`document.getElementById('user-jwt').value !== ''`, 10*time.Second)
		if got := tb.EvalString(`document.getElementById('request-role').innerText`); got != "role: authenticated" {
			t.Errorf("role hint = %q", got)
		}
		claims, err := s.Keys.Verify(tb.EvalString(`document.getElementById('user-jwt').value`))
		if err != nil {
			t.Fatalf("the minted token does not verify: %v", err)
		}
		if exp, _ := claims.GetExpirationTime(); claims["sub"] != aliceID || exp == nil || time.Until(exp.Time) > console.TokenLifetime {
			t.Errorf("minted claims %v: want Alice's, expiring within %s", claims, console.TokenLifetime)
		}
		if got := runQuery(t, tb, q); !strings.Contains(got, "Water the plants") || strings.Contains(got, "Buy timber") {
			t.Errorf("run as Alice, the result pane should show her to-dos only:\n%s", got)
		}
		tb.Screenshot(filepath.Join(shots, "console-graphiql-run-as.png"))
		tb.Eval(`(function (s) { s.value = 'service_role'; s.dispatchEvent(new Event('change')); })(document.getElementById('run-as'))`, nil)
		tb.Click("#run-as-mint")
		tb.WaitFor(`document.getElementById('request-role').innerText === 'role: service_role'`, 10*time.Second)
		if got := runQuery(t, tb, q); !strings.Contains(got, "Buy timber") {
			t.Errorf("run as service_role, every to-do should show:\n%s", got)
		}
		// The endpoint refuses what is not an API role, and a user without an ID.
		for query, want := range map[string]int{"role=postgres": 400, "role=authenticated&sub=alice": 400, "role=anon": 200} {
			resp, err := http.Get(s.URL + "/console/api/token?" + query)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("api/token?%s: %d, want %d", query, resp.StatusCode, want)
			}
		}
	})

	t.Run("a subscription in GraphiQL updates the result after an insert", func(t *testing.T) {
		tb := b.NewTab(ctx, t)
		tb.Navigate(s.URL + "/console/#api-docs/graphql/graphiql")
		tb.WaitFor(`document.getElementById('graphiql').dataset.schema === 'loaded'`, 20*time.Second)
		first := runQuery(t, tb, "subscription {\n  blogCollection(orderBy: [{id: AscNullsLast}]) {\n"+
			"    edges { node { name } }\n  }\n}")
		if !strings.Contains(first, `"Bob builds"`) || strings.Contains(first, "Live from another session") {
			t.Fatalf("first answer of the subscription:\n%s", first)
		}
		if _, err := s.Admin.Exec(ctx, `insert into blog (owner_id, name) select owner_id, 'Live from another session' from blog limit 1`); err != nil {
			t.Fatal(err)
		}
		tb.WaitFor(`document.querySelector('.graphiql-response .CodeMirror').CodeMirror.getValue().includes('Live from another session')`, 15*time.Second)
		tb.Screenshot(filepath.Join(shots, "console-graphiql-subscription.png"))
	})

	t.Run("standalone page as a file takes url and apikey from the query string", func(t *testing.T) {
		page, err := filepath.Abs("assets/graphiql.html")
		if err != nil {
			t.Fatal(err)
		}
		tb := b.NewTab(ctx, t)
		q := url.Values{"url": {s.URL + "/graphql/v1"}, "apikey": {s.Anon}}
		tb.Navigate("file://" + page + "?" + q.Encode())
		tb.WaitFor(`document.getElementById('graphiql').dataset.schema`, 20*time.Second)
		result := runQuery(t, tb, `{ __typename }`)
		if !strings.Contains(result, `"__typename": "Query"`) {
			t.Errorf("result pane:\n%s", result)
		}
		tb.Screenshot(filepath.Join(shots, "standalone-file.png"))
	})

	t.Run("standalone page served by the console takes the endpoint from the form", func(t *testing.T) {
		tb := b.NewTab(ctx, t)
		tb.Navigate(s.URL + "/console/graphiql.html")
		if tb.EvalString(`document.getElementById('schema-banner').innerText`) == "" {
			t.Error("without an endpoint the page should ask for one")
		}
		tb.Click("#endpoint-url")
		tb.TypeText(s.URL + "/graphql/v1")
		tb.Click("#endpoint-apikey")
		tb.TypeText(s.Anon)
		tb.Click("#connect")
		tb.WaitFor(`document.getElementById('graphiql').dataset.schema === 'loaded'`, 20*time.Second)
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
		tb := b.NewTab(ctx, t)
		// The API reloads its schema on DDL; reload the page until the new schema answers.
		deadline := time.Now().Add(20 * time.Second)
		for {
			tb.Navigate(s.URL + "/console/#api-docs/graphql/graphiql")
			tb.WaitFor(`document.getElementById('graphiql').dataset.schema`, 20*time.Second)
			if tb.EvalString(`document.getElementById('graphiql').dataset.schema`) == "introspection" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("introspection still answers after the comment was removed")
			}
			time.Sleep(200 * time.Millisecond)
		}
		banner := tb.EvalString(`document.getElementById('schema-banner').innerText`)
		if !strings.Contains(banner, `comment on schema public is e'@graphql({"introspection": true})'`) {
			t.Errorf("banner = %q", banner)
		}
		// Queries still run.
		result := runQuery(t, tb, `{ __typename }`)
		if !strings.Contains(result, `"Query"`) {
			t.Errorf("result pane:\n%s", result)
		}
		tb.Screenshot(filepath.Join(shots, "console-no-introspection.png"))
	})

	// Issue 22's console points: each was seen by a newcomer in headless Chromium.
	t.Run("console polish: favicon, Try it, GraphQL link, narrow window, standalone GraphiQL and back", func(t *testing.T) {
		tb := b.NewTab(ctx, t)
		tb.Navigate(s.URL + "/console/#settings/api")
		tb.WaitFor(`document.getElementById('anon-key').value !== ''`, 10*time.Second)
		// favicon.ico was a 404: the pages name an icon the console serves, to anyone (the login page too).
		icon := tb.EvalString(`document.querySelector('link[rel=icon]').href`)
		resp, err := http.Get(icon)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/svg+xml" {
			t.Errorf("icon %s: %d %s", icon, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		// The Try it box cut the key off: it wraps, the whole key in view.
		if got := tb.EvalString(`(function (p) { return p.scrollWidth <= p.clientWidth && p.innerText.includes(` + "`" + `'apikey: ${JSON.parse(document.getElementById('pgreflect-config').textContent).anonKey}'` + "`" + `) })(document.getElementById('curl-example')) + ''`); got != "true" {
			t.Error("the Try it box does not show the whole anon key without scrolling")
		}
		// "GraphQL" under API Docs looked like a link and was not: it opens the GraphiQL page.
		if tag := tb.EvalString(`document.getElementById('nav-graphql').tagName`); tag != "A" {
			t.Errorf("GraphQL in the menu is a %s", tag)
		}
		tb.Click("#nav-graphql")
		tb.WaitFor(`!document.getElementById('page-graphiql').hidden`, 10*time.Second)

		// At 420 px the menu sat beside the page; it goes above it and nothing overflows the window.
		tb.Must("Emulation.setDeviceMetricsOverride", map[string]any{"width": 420, "height": 800, "deviceScaleFactor": 1, "mobile": true})
		tb.Navigate(s.URL + "/console/#settings/api")
		tb.WaitFor(`document.getElementById('anon-key').value !== ''`, 10*time.Second)
		if got := tb.EvalString(`(function () {
			var nav = document.querySelector('.sidebar').getBoundingClientRect(), main = document.querySelector('main').getBoundingClientRect();
			return (main.top >= nav.bottom - 1 && main.width > 380 && document.documentElement.scrollWidth <= 420) + '';
		})()`); got != "true" {
			t.Error("at 420 px the menu does not collapse above the page")
		}
		tb.Screenshot(filepath.Join(shots, "console-420px.png"))
		tb.Must("Emulation.setDeviceMetricsOverride", map[string]any{"width": 1400, "height": 900, "deviceScaleFactor": 1, "mobile": false})

		// The Standalone GraphiQL link opened an empty page with no way back: it opens on this project.
		href := tb.EvalString(`document.getElementById('standalone-link').href`)
		u, err := url.Parse(href)
		if err != nil || u.Query().Get("url") != s.URL+"/graphql/v1" || u.Query().Get("apikey") != s.Anon {
			t.Fatalf("standalone link %q", href)
		}
		tb.Navigate(href)
		tb.WaitFor(`document.getElementById('endpoint-url').value !== '' && !document.getElementById('back-link').hidden`, 10*time.Second)
		if got := tb.EvalString(`document.getElementById('endpoint-apikey').value`); got != s.Anon {
			t.Errorf("the standalone page's apikey = %q", got)
		}
		tb.WaitFor(`document.querySelector('.graphiql-query-editor .CodeMirror')`, 20*time.Second)
		tb.Screenshot(filepath.Join(shots, "standalone-from-console.png"))
		tb.Click("#back-link")
		tb.WaitFor(`location.pathname === '/console/' && document.getElementById('page-graphiql') && !document.getElementById('page-graphiql').hidden`, 10*time.Second)
	})

	b.CheckNoPageErrors(t)
}
