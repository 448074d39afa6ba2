package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgreflect/pgreflect/internal/config"
	"github.com/pgreflect/pgreflect/internal/console"
	"github.com/pgreflect/pgreflect/internal/devtools/browsertest"
	"github.com/pgreflect/pgreflect/internal/stacktest"
	"github.com/pgreflect/pgreflect/testidp"
)

// call sends one request to the stack and decodes its JSON answer.
func call(t *testing.T, method, url string, header map[string]string, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, raw)
	}
	return resp.StatusCode, out
}

// clickInView scrolls the element into the middle of the viewport first: Click aims at coordinates, and the
// provider list is longer than the window.
func clickInView(tb *browsertest.Tab, selector string) {
	tb.Eval(fmt.Sprintf(`document.querySelector(%q).scrollIntoView({block: 'center'})`, selector), nil)
	tb.Click(selector)
}

// The console's project, API-key, provider and users pages in a real browser, against a stack with sign-in
// and the management API, where the provider "google" starts disabled.
func TestBrowserConsolePages(t *testing.T) {
	chromium := browsertest.Find(t)
	s := stacktest.New(t, stacktest.Options{SignIn: true,
		Configure: func(a *config.Auth) {
			p := a.External["google"]
			p.Enabled = false
			a.External["google"] = p
		},
		Console: func(anon string) http.Handler {
			_, service := testKeys(t)
			return console.Handler(console.Options{AnonKey: anon, ServiceRoleKey: service, ProjectName: "demo-project",
				ProjectRef: stacktest.ProjectRef, ManagementToken: stacktest.ManagementToken})
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := browsertest.Start(t, chromium)
	shots := browsertest.ScreenshotDir(t)
	mgmt := map[string]string{"Authorization": "Bearer " + stacktest.ManagementToken}
	configURL := s.URL + "/v1/projects/" + stacktest.ProjectRef + "/config/auth"

	t.Run("general page shows the project name, Reference ID and API URL", func(t *testing.T) {
		tb := b.NewTab(ctx, t)
		tb.Navigate(s.URL + "/console/#settings/general")
		tb.WaitFor(`!document.getElementById('page-general').hidden`, 10*time.Second)
		for id, want := range map[string]string{"project-name": "demo-project", "project-ref": stacktest.ProjectRef,
			"general-api-url": s.URL} {
			if got := tb.EvalString(fmt.Sprintf(`document.getElementById(%q).value`, id)); got != want {
				t.Errorf("%s = %q, want %q", id, got, want)
			}
		}
		tb.Click(`button[data-copy="project-ref"]`)
		tb.WaitFor(`document.querySelector('button[data-copy="project-ref"]').textContent === 'Copied'`, 5*time.Second)
		tb.Screenshot(filepath.Join(shots, "console-settings-general.png"))
	})

	t.Run("API page shows the service_role key only after Reveal", func(t *testing.T) {
		tb := b.NewTab(ctx, t)
		tb.Navigate(s.URL + "/console/#settings/api")
		// The exposed schemas above the keys arrive from the management API and move the keys down.
		tb.WaitFor(`document.getElementById('anon-key').value !== '' && document.getElementById('schemas-form').dataset.loaded === 'true'`, 10*time.Second)
		if got := tb.EvalString(`document.getElementById('anon-key').value`); got != s.Anon {
			t.Errorf("anon key = %q", got)
		}
		html := tb.EvalString(`document.documentElement.outerHTML`)
		for name, secret := range map[string]string{"service_role key": s.Service, "JWT secret": stacktest.JWTSecret,
			"management token": stacktest.ManagementToken} {
			if strings.Contains(html, secret) {
				t.Errorf("before Reveal the page holds the %s", name)
			}
		}
		tb.Click("#reveal-service-role")
		tb.WaitFor(`document.getElementById('service-role-key').value !== ''`, 10*time.Second)
		if got := tb.EvalString(`document.getElementById('service-role-key').value`); got != s.Service {
			t.Errorf("revealed key = %q, want the service_role key", got)
		}
		tb.Screenshot(filepath.Join(shots, "console-settings-api-revealed.png"))
		tb.Click("#reveal-service-role")
		if got := tb.EvalString(`document.getElementById('service-role-key').value`); got != "" {
			t.Errorf("after Hide the field holds %q", got)
		}
	})

	t.Run("the provider page enables a provider and the change is visible through the management API", func(t *testing.T) {
		if _, conf := call(t, http.MethodGet, configURL, mgmt, ""); conf["external_google_enabled"] != false {
			t.Fatalf("google starts enabled: %v", conf["external_google_enabled"])
		}
		tb := b.NewTab(ctx, t)
		tb.Navigate(s.URL + "/console/#auth/providers")
		tb.WaitFor(`document.getElementById('provider-list').dataset.loaded === 'true'`, 10*time.Second)
		if got := tb.EvalString(`document.getElementById('callback-url').value`); got != s.URL+"/auth/v1/callback" {
			t.Errorf("callback URL = %q", got)
		}
		if got := tb.EvalString(`document.getElementById('provider-google-state').textContent`); got != "Disabled" {
			t.Errorf("google's state = %q", got)
		}
		if got := tb.EvalString(`document.getElementById('provider-google-client_id').value`); got != stacktest.ClientID {
			t.Errorf("google's client IDs = %q, want the configured %q", got, stacktest.ClientID)
		}
		// Issue 22: GitHub and the other plain OAuth 2.0 providers cannot sign in, so they are not listed; the
		// OpenID ones have an issuer URL field and placeholders of their own (every one showed Google's).
		if tb.EvalString(`String(document.getElementById('provider-github') === null && document.getElementById('provider-discord') === null)`) != "true" {
			t.Error("providers that cannot sign in are listed")
		}
		for selector, want := range map[string]string{
			"#provider-google-client_id": "apps.googleusercontent.com", "#provider-azure-url": "login.microsoftonline.com",
			"#provider-keycloak-url": "/realms/", "#provider-gitlab-client_id": "Application ID",
		} {
			if got := tb.EvalString(fmt.Sprintf(`document.querySelector(%q).placeholder`, selector)); !strings.Contains(got, want) {
				t.Errorf("%s placeholder %q, want one with %q", selector, got, want)
			}
		}
		// Enabling keycloak without its issuer URL is refused, with the management API's reason on the page.
		clickInView(tb, "#provider-keycloak summary")
		clickInView(tb, "#provider-keycloak-enabled")
		clickInView(tb, "#provider-keycloak-save")
		tb.WaitFor(`document.getElementById('provider-keycloak-result').textContent.includes('cannot sign anyone in')`, 10*time.Second)
		if got := tb.EvalString(`document.getElementById('provider-keycloak-result').textContent`); !strings.Contains(got, "external_keycloak_url") {
			t.Errorf("refusal shown as %q", got)
		}
		// Google: enabled, a second client ID, a new secret, nonce checks skipped.
		clickInView(tb, "#provider-google-enabled")
		clickInView(tb, "#provider-google-client_id")
		tb.TypeText(",ios.apps.example.com")
		clickInView(tb, "#provider-google-secret")
		tb.TypeText("a-new-secret")
		clickInView(tb, "#provider-google-skip_nonce_check")
		clickInView(tb, "#provider-google-save")
		tb.WaitFor(`document.getElementById('provider-google-result') &&
			document.getElementById('provider-google-result').textContent === 'Saved'`, 10*time.Second)
		if got := tb.EvalString(`document.getElementById('provider-google-state').textContent`); got != "Enabled" {
			t.Errorf("after saving google's state = %q", got)
		}
		tb.Eval(`document.getElementById('provider-google').scrollIntoView({block: 'center'})`, nil)
		tb.Screenshot(filepath.Join(shots, "console-auth-providers.png"))

		_, conf := call(t, http.MethodGet, configURL, mgmt, "")
		want := map[string]any{"external_google_enabled": true, "external_google_skip_nonce_check": true,
			"external_google_client_id": stacktest.ClientID + ",ios.apps.example.com", "external_github_enabled": false}
		for k, v := range want {
			if conf[k] != v {
				t.Errorf("management API %s = %v, want %v", k, conf[k], v)
			}
		}
		// Secrets come back hashed: the hash of the new one, not of the old.
		_, hashed := call(t, http.MethodPatch, configURL, mgmt, `{"external_google_secret": "a-new-secret"}`)
		if conf["external_google_secret"] == nil || conf["external_google_secret"] != hashed["external_google_secret"] {
			t.Errorf("secret %v, want the hash of the one typed (%v)", conf["external_google_secret"], hashed["external_google_secret"])
		}
		// And sign-in follows it: /settings lists google, and its ID tokens are accepted without a nonce.
		_, settings := call(t, http.MethodGet, s.URL+"/auth/v1/settings", map[string]string{"apikey": s.Anon}, "")
		if ext, _ := settings["external"].(map[string]any); ext["google"] != true {
			t.Errorf("/settings external = %v", settings["external"])
		}
	})

	// Issue 22: the page had no issuer URL field, so no OpenID provider but Google could be set up on it.
	t.Run("the provider page adds a custom OpenID Connect provider that signs in", func(t *testing.T) {
		tb := b.NewTab(ctx, t)
		tb.Navigate(s.URL + "/console/#auth/providers")
		tb.WaitFor(`document.getElementById('provider-list').dataset.loaded === 'true'`, 10*time.Second)
		clickInView(tb, "#provider-add-name")
		tb.TypeText("corp")
		clickInView(tb, "#provider-add-button")
		tb.WaitFor(`document.getElementById('provider-corp') && document.getElementById('provider-corp').open`, 10*time.Second)
		clickInView(tb, "#provider-corp-enabled")
		clickInView(tb, "#provider-corp-url")
		tb.TypeText(s.IDP.URL())
		clickInView(tb, "#provider-corp-client_id")
		tb.TypeText(stacktest.ClientID)
		clickInView(tb, "#provider-corp-secret")
		tb.TypeText(stacktest.IDPSecret)
		clickInView(tb, "#provider-corp-save")
		tb.WaitFor(`document.getElementById('provider-corp-result') &&
			document.getElementById('provider-corp-result').textContent === 'Saved'`, 10*time.Second)
		tb.Eval(`document.getElementById('provider-corp').scrollIntoView({block: 'center'})`, nil)
		tb.Screenshot(filepath.Join(shots, "console-auth-provider-custom.png"))
		_, settings := call(t, http.MethodGet, s.URL+"/auth/v1/settings", map[string]string{"apikey": s.Anon}, "")
		if ext, _ := settings["external"].(map[string]any); ext["corp"] != true {
			t.Errorf("/settings external = %v", settings["external"])
		}
		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := noFollow.Get(s.URL + "/auth/v1/authorize?provider=corp")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound || !strings.HasPrefix(resp.Header.Get("Location"), s.IDP.URL()) {
			t.Errorf("/authorize?provider=corp: %d %s", resp.StatusCode, resp.Header.Get("Location"))
		}
	})

	t.Run("users page lists users and their identities", func(t *testing.T) {
		user := testidp.User{Sub: "109876543210", Email: "console.user@example.com", EmailVerified: true}
		token := s.IDP.MintIDToken(s.IDP.Claims(user), testidp.MintOptions{})
		status, session := call(t, http.MethodPost, s.URL+"/auth/v1/token?grant_type=id_token",
			map[string]string{"apikey": s.Anon, "Content-Type": "application/json"},
			fmt.Sprintf(`{"provider": "google", "id_token": %q}`, token))
		if status != http.StatusOK {
			t.Fatalf("sign-in: %d %v", status, session)
		}
		userID := session["user"].(map[string]any)["id"].(string)
		tb := b.NewTab(ctx, t)
		tb.Navigate(s.URL + "/console/#auth/users")
		tb.WaitFor(`document.getElementById('users-table').dataset.loaded === 'true'`, 10*time.Second)
		row := tb.EvalString(fmt.Sprintf(`(document.querySelector('tr[data-user-id=%q]') || {innerText: ''}).innerText`, userID))
		for _, want := range []string{"console.user@example.com", "google", "109876543210", userID} {
			if !strings.Contains(row, want) {
				t.Errorf("the user's row lacks %q: %q", want, row)
			}
		}
		if got := tb.EvalString(`document.getElementById('users-range').textContent`); got != "1–1 of 1" {
			t.Errorf("range %q", got)
		}
		tb.Screenshot(filepath.Join(shots, "console-auth-users.png"))
	})

	t.Run("trusted documents page lists the pushed documents", func(t *testing.T) {
		documentsURL := s.URL + "/v1/projects/" + stacktest.ProjectRef + "/graphql/documents"
		manifest := `{"9f2c": "query Tasks { __typename }", "a0b1": "mutation AddTask { __typename }"}`
		if status, out := call(t, http.MethodPost, documentsURL, mgmt, manifest); status != http.StatusCreated {
			t.Fatalf("push: %d %v", status, out)
		}
		tb := b.NewTab(ctx, t)
		tb.Navigate(s.URL + "/console/#api-docs/trusted-documents")
		tb.WaitFor(`document.getElementById('documents-table').dataset.loaded === 'true'`, 10*time.Second)
		for id, want := range map[string]string{"9f2c": "query Tasks", "a0b1": "mutation AddTask"} {
			row := tb.EvalString(fmt.Sprintf(`(document.querySelector('tr[data-document-id=%q]') || {innerText: ''}).innerText`, id))
			if !strings.Contains(row, id) || !strings.Contains(row, want) || !strings.Contains(row, "{ __typename }") {
				t.Errorf("row of %s: %q", id, row)
			}
		}
		tb.Screenshot(filepath.Join(shots, "console-trusted-documents.png"))
	})

	// Issue 22: Studio edits the exposed schemas; the console showed them read-only. Saved here, they apply to
	// the API at once, say that they override config.toml, and reset to it.
	t.Run("API page edits the exposed schemas", func(t *testing.T) {
		if _, err := s.Admin.Exec(ctx, `create schema shop; grant usage on schema shop to anon;
			create table shop.product (id int primary key, name text); insert into shop.product values (1, 'lamp');
			grant select on shop.product to anon`); err != nil {
			t.Fatal(err)
		}
		postgrestURL := s.URL + "/v1/projects/" + stacktest.ProjectRef + "/postgrest"
		anon := map[string]string{"apikey": s.Anon, "Content-Type": "application/json"}
		products := func() string {
			_, out := call(t, http.MethodPost, s.URL+"/graphql/v1", anon, `{"query": "{ productCollection { edges { node { name } } } }"}`)
			b, _ := json.Marshal(out)
			return string(b)
		}
		if got := products(); strings.Contains(got, "lamp") {
			t.Fatalf("schema shop is exposed before the change: %s", got)
		}
		tb := b.NewTab(ctx, t)
		tb.Navigate(s.URL + "/console/#settings/api")
		tb.WaitFor(`document.getElementById('schemas-form').dataset.loaded === 'true'`, 10*time.Second)
		if got := tb.EvalString(`document.getElementById('exposed-schemas').value`); got != "public" {
			t.Errorf("exposed schemas shown %q, want public", got)
		}
		if got := tb.EvalString(`document.getElementById('schemas-source').innerText`); !strings.HasPrefix(got, "Values from supabase/config.toml") {
			t.Errorf("source line before the change: %q", got)
		}
		// A schema that does not exist is refused with the management API's reason, and nothing changes.
		tb.Eval(`document.getElementById('exposed-schemas').value = 'shop, nope'`, nil)
		clickInView(tb, "#schemas-save")
		tb.WaitFor(`document.getElementById('schemas-result').textContent.includes('no schema named')`, 10*time.Second)
		if _, conf := call(t, http.MethodGet, postgrestURL, mgmt, ""); conf["db_schema"] != "public" {
			t.Errorf("after a refused change: %v", conf)
		}
		tb.Eval(`document.getElementById('exposed-schemas').value = 'shop, public'`, nil)
		clickInView(tb, "#schemas-save")
		tb.WaitFor(`document.getElementById('schemas-result').textContent === 'Saved'`, 10*time.Second)
		if got := products(); !strings.Contains(got, `"name":"lamp"`) {
			t.Errorf("schema shop is not exposed right after Save: %s", got)
		}
		if _, conf := call(t, http.MethodGet, postgrestURL, mgmt, ""); conf["db_schema"] != "shop,public" {
			t.Errorf("management API db_schema = %v, want shop,public", conf["db_schema"])
		}
		if got := tb.EvalString(`document.getElementById('schemas-source').innerText`); !strings.Contains(got, "overriding supabase/config.toml") ||
			!strings.Contains(got, "Exposed schemas (config.toml: public)") {
			t.Errorf("source line after the change: %q", got)
		}
		tb.Eval(`document.getElementById('schemas-source').scrollIntoView({block: 'center'})`, nil)
		tb.Screenshot(filepath.Join(shots, "console-settings-api-exposed-schemas.png"))
		clickInView(tb, "#schemas-reset")
		tb.WaitFor(`document.getElementById('schemas-form').dataset.loaded === 'true' &&
			document.getElementById('schemas-source').innerText.startsWith('Values from supabase/config.toml')`, 10*time.Second)
		if got := tb.EvalString(`document.getElementById('exposed-schemas').value`); got != "public" {
			t.Errorf("exposed schemas shown after the reset %q, want public", got)
		}
		if got := products(); strings.Contains(got, "lamp") {
			t.Errorf("schema shop is still exposed after the reset: %s", got)
		}
	})

	// Issue 22: Studio has a URL Configuration page (site URL, redirect URLs) and the JWT expiry; the console
	// had neither, although the management API has them.
	t.Run("URL Configuration page edits site URL, redirect URLs and JWT expiry", func(t *testing.T) {
		_, before := call(t, http.MethodGet, configURL, mgmt, "")
		tb := b.NewTab(ctx, t)
		tb.Navigate(s.URL + "/console/#auth/url-configuration")
		tb.WaitFor(`document.getElementById('urls-form').dataset.loaded === 'true'`, 10*time.Second)
		if got := tb.EvalString(`document.getElementById('site-url').value`); got != before["site_url"] {
			t.Errorf("site URL shown %q, want %v", got, before["site_url"])
		}
		if got := tb.EvalString(`document.getElementById('jwt-exp').value`); got != fmt.Sprint(before["jwt_exp"]) {
			t.Errorf("JWT expiry shown %q, want %v", got, before["jwt_exp"])
		}
		// A bad site URL is refused with the management API's reason.
		tb.Eval(`document.getElementById('site-url').value = 'not a url'`, nil)
		clickInView(tb, "#urls-save")
		tb.WaitFor(`document.getElementById('urls-result').textContent.includes('site_url')`, 10*time.Second)
		tb.Eval(`document.getElementById('site-url').value = 'https://app.example.org'`, nil)
		tb.Eval(`document.getElementById('redirect-urls').value = 'https://app.example.org/**\nhttp://localhost:3000/**'`, nil)
		tb.Eval(`document.getElementById('jwt-exp').value = '1800'`, nil)
		clickInView(tb, "#urls-save")
		tb.WaitFor(`document.getElementById('urls-result').textContent === 'Saved'`, 10*time.Second)
		tb.Screenshot(filepath.Join(shots, "console-auth-url-configuration.png"))
		_, after := call(t, http.MethodGet, configURL, mgmt, "")
		for k, want := range map[string]any{"site_url": "https://app.example.org",
			"uri_allow_list": "https://app.example.org/**,http://localhost:3000/**", "jwt_exp": float64(1800)} {
			if after[k] != want {
				t.Errorf("management API %s = %v, want %v", k, after[k], want)
			}
		}
		// As on the Providers page, the stored values say they beat config.toml, and reset to it.
		if got := tb.EvalString(`document.getElementById('urls-source').innerText`); !strings.Contains(got, "overriding supabase/config.toml") ||
			!strings.Contains(got, fmt.Sprintf("Site URL (config.toml: %v)", before["site_url"])) {
			t.Errorf("URL Configuration source line: %q", got)
		}
		clickInView(tb, "#urls-reset")
		tb.WaitFor(`document.getElementById('urls-source').innerText.startsWith('Values from supabase/config.toml')`, 10*time.Second)
		if _, reset := call(t, http.MethodGet, configURL, mgmt, ""); reset["site_url"] != before["site_url"] || reset["jwt_exp"] != before["jwt_exp"] {
			t.Errorf("after the reset: site URL %v, JWT expiry %v; want config.toml's %v, %v", reset["site_url"], reset["jwt_exp"], before["site_url"], before["jwt_exp"])
		}
	})

	// Issue 22: a value saved on this page beat supabase/config.toml's for ever, without a word. The page says
	// which values are stored over the file's, shows the file's, and resets them to it.
	t.Run("provider page shows where values come from and resets them to config.toml", func(t *testing.T) {
		// The provider test saved google over the configured values: enabled, client IDs, secret, nonce.
		tb := b.NewTab(ctx, t)
		tb.Navigate(s.URL + "/console/#auth/providers")
		tb.WaitFor(`document.getElementById('provider-list').dataset.loaded === 'true'`, 10*time.Second)
		source := tb.EvalString(`document.getElementById('provider-google-source').innerText`)
		for _, want := range []string{"overriding supabase/config.toml", "Client IDs (config.toml: " + stacktest.ClientID + ")", "Client secret", "Enabled (config.toml: false)"} {
			if !strings.Contains(source, want) {
				t.Errorf("google's source line lacks %q: %q", want, source)
			}
		}
		if strings.Contains(tb.EvalString(`document.getElementById('provider-azure-source').innerText`), "overriding") {
			t.Error("azure, never saved, is shown as overriding config.toml")
		}
		tb.Eval(`document.getElementById('provider-google-source').scrollIntoView({block: 'center'})`, nil)
		tb.Screenshot(filepath.Join(shots, "console-auth-provider-overrides.png"))
		clickInView(tb, "#provider-google-reset")
		tb.WaitFor(`document.getElementById('provider-list').dataset.loaded === 'true' &&
			document.getElementById('provider-google-source').innerText.startsWith('Values from supabase/config.toml')`, 10*time.Second)
		_, conf := call(t, http.MethodGet, configURL, mgmt, "")
		if conf["external_google_client_id"] != stacktest.ClientID || conf["external_google_enabled"] != false {
			t.Errorf("after the reset: client IDs %v, enabled %v; want config.toml's %q and false",
				conf["external_google_client_id"], conf["external_google_enabled"], stacktest.ClientID)
		}
		// The stored fields of google (the custom provider of the test before is stored too).
		googleOverrides := func() []string {
			_, o := call(t, http.MethodGet, configURL+"/overrides", mgmt, "")
			var fields []string
			for _, x := range o["overrides"].([]any) {
				if f := x.(map[string]any)["field"].(string); strings.HasPrefix(f, "external_google_") {
					fields = append(fields, f)
				}
			}
			return fields
		}
		if fields := googleOverrides(); len(fields) != 0 {
			t.Errorf("google's overrides after the reset: %v", fields)
		}
		// Saving one field stores that field only: the others keep following config.toml.
		clickInView(tb, "#provider-google-skip_nonce_check")
		clickInView(tb, "#provider-google-save")
		tb.WaitFor(`document.getElementById('provider-google-result') &&
			document.getElementById('provider-google-result').textContent === 'Saved'`, 10*time.Second)
		if fields := googleOverrides(); len(fields) != 1 || fields[0] != "external_google_skip_nonce_check" {
			t.Errorf("saving the nonce check stored %v; want that field only", fields)
		}
	})

	// A proxy on this machine that forwards another client's request (X-Forwarded-For) is not loopback: the
	// browser gets the login form until it gives the management token.
	t.Run("from another machine the console asks for the management token", func(t *testing.T) {
		tb := b.NewTab(ctx, t)
		tb.Must("Network.enable", nil)
		tb.Must("Network.setExtraHTTPHeaders", map[string]any{"headers": map[string]string{"X-Forwarded-For": "198.51.100.7"}})
		tb.Navigate(s.URL + "/console/#settings/general")
		if html := tb.EvalString(`document.documentElement.outerHTML`); !strings.Contains(html, "Console access") ||
			strings.Contains(html, s.Anon) || strings.Contains(html, stacktest.ProjectRef) {
			t.Fatalf("a remote client sees more than the login form:\n%s", html)
		}
		tb.Click("#token")
		tb.TypeText("sbp_not-the-token")
		tb.Click("button[type=submit]")
		tb.WaitFor(`document.querySelector('.login-error') && !document.querySelector('.login-error').hidden`, 10*time.Second)
		tb.Screenshot(filepath.Join(shots, "console-login-refused.png"))
		tb.Click("#token")
		tb.TypeText(stacktest.ManagementToken)
		tb.Click("button[type=submit]")
		tb.WaitFor(`document.getElementById('anon-key') && document.getElementById('anon-key').value !== ''`, 10*time.Second)
		tb.Navigate(s.URL + "/console/#settings/general")
		tb.WaitFor(`document.getElementById('project-ref').value !== ''`, 10*time.Second)
		if got := tb.EvalString(`document.getElementById('project-ref').value`); got != stacktest.ProjectRef {
			t.Errorf("after the login the Reference ID is %q", got)
		}
		// The session cookie is HttpOnly: the page's scripts cannot read it.
		if got := tb.EvalString(`document.cookie`); got != "" {
			t.Errorf("document.cookie = %q", got)
		}
	})

	// The refused PATCH of the provider test is a 400 the page asked for, the refused login a 401.
	b.CheckNoPageErrors(t, "status of 400", "status of 401")
}
