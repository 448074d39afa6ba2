package authapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/pgreflect/pgreflect/internal/config"
	"github.com/pgreflect/pgreflect/testidp"
)

func (w *world) mgmt(inst *instance, method, ref, token string, body any) response {
	w.t.Helper()
	h := map[string]string{}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	return w.do(method, inst.apiURL+"/v1/projects/"+ref+"/config/auth", body, h)
}

func TestManagementAuthAndRef(t *testing.T) {
	w := newWorld(t, nil)
	for name, r := range map[string]response{
		"no token":    w.mgmt(w.inst, http.MethodGet, tRef, "", nil),
		"wrong token": w.mgmt(w.inst, http.MethodGet, tRef, tMgmtToken+"0", nil),
		"anon key":    w.mgmt(w.inst, http.MethodPatch, tRef, w.anon, map[string]any{"site_url": "https://x.example"}),
		"service key": w.mgmt(w.inst, http.MethodGet, tRef, w.service, nil),
	} {
		if r.status != http.StatusUnauthorized {
			t.Errorf("%s: %d %s", name, r.status, r.raw)
		}
	}
	if r := w.mgmt(w.inst, http.MethodGet, "aaaaaaaaaaaaaaaaaaaa", tMgmtToken, nil); r.status != http.StatusNotFound {
		t.Errorf("wrong ref: %d %s", r.status, r.raw)
	}
	r := w.mgmt(w.inst, http.MethodGet, tRef, tMgmtToken, nil)
	if r.status != http.StatusOK || r.str("site_url") != tSiteURL || r.body["external_google_enabled"] != true ||
		r.str("external_google_client_id") != tWebClient+","+tIOSClient || r.body["jwt_exp"] != float64(3600) {
		t.Fatalf("GET: %d %s", r.status, r.raw)
	}
	// The secret never appears in clear: hex HMAC-SHA256 keyed by the project ref.
	mac := hmac.New(sha256.New, []byte(tRef))
	mac.Write([]byte(tIDPSecret))
	if got := r.str("external_google_secret"); got != hex.EncodeToString(mac.Sum(nil)) || strings.Contains(string(r.raw), tIDPSecret) {
		t.Errorf("secret in GET: %q", got)
	}
	if r.body["external_github_enabled"] != false || r.body["external_github_secret"] != nil {
		t.Errorf("unconfigured provider: %v %v", r.body["external_github_enabled"], r.body["external_github_secret"])
	}
}

func TestManagementValidation(t *testing.T) {
	w := newWorld(t, nil)
	for _, c := range []struct {
		body  any
		field string
	}{
		{map[string]any{"jwt_exp": 604801}, "jwt_exp"},
		{map[string]any{"jwt_exp": -1}, "jwt_exp"},
		{map[string]any{"jwt_exp": "3600"}, "jwt_exp"},
		{map[string]any{"jwt_exp": 1.5}, "jwt_exp"},
		{map[string]any{"site_url": "not a url"}, "site_url"},
		{map[string]any{"site_url": "https://a.example,https://b.example"}, "site_url"},
		{map[string]any{"uri_allow_list": "https://ok.example/**,https://[bad"}, "uri_allow_list"},
		{map[string]any{"external_google_enabled": "yes"}, "external_google_enabled"},
		{map[string]any{"external_google_client_id": 42}, "external_google_client_id"},
		{map[string]any{"external_google_client_id": "a, b"}, "external_google_client_id"},
		{map[string]any{"external_google_secret": " padded "}, "external_google_secret"},
		{map[string]any{"external_google_skip_nonce_check": 1}, "external_google_skip_nonce_check"},
		{map[string]any{"external_gitlab_enabled": true, "external_gitlab_url": "https://gitlab.example.com"}, "external_gitlab_client_id"},
		{map[string]any{"external_keycloak_url": "keycloak.example.com/realms/x"}, "external_keycloak_url"},
		{map[string]any{"external_keycloak_url": "https://keycloak.example.com/realms/x?a=b"}, "external_keycloak_url"},
		{map[string]any{"site_url": "https://fine.example", "jwt_exp": 99999999}, "jwt_exp"},
	} {
		r := w.mgmt(w.inst, http.MethodPatch, tRef, tMgmtToken, c.body)
		if r.status != http.StatusBadRequest || !strings.Contains(r.str("message"), c.field) {
			t.Errorf("PATCH %v: %d %s, want 400 naming %s", c.body, r.status, r.raw, c.field)
		}
	}
	if r := w.mgmt(w.inst, http.MethodPatch, tRef, tMgmtToken, "[1,2]"); r.status != http.StatusBadRequest {
		t.Errorf("non-object body: %d", r.status)
	}
	if r := w.mgmt(w.inst, http.MethodPatch, tRef, tMgmtToken, `{"site_url": "https://trailing.example"} and more`); r.status != http.StatusBadRequest ||
		r.str("message") != "Request body must be a JSON object" {
		t.Errorf("an object with text after it: %d %s", r.status, r.raw)
	}
	big := `{"site_url": "https://big.example", "pad": "` + strings.Repeat("x", maxBodyBytes) + `"}`
	if r := w.mgmt(w.inst, http.MethodPatch, tRef, tMgmtToken, big); r.status != http.StatusRequestEntityTooLarge ||
		r.str("message") != "Request body too large: at most 1048576 bytes" {
		t.Errorf("a body of more than 1 MiB: %d %.200s", r.status, r.raw)
	}
	if r := w.mgmt(w.inst, http.MethodPatch, tRef, tMgmtToken, map[string]any{"external_google_secret": "x\x00y"}); r.status != http.StatusBadRequest ||
		r.str("message") != msgUnstorableText {
		t.Errorf("a secret with a NUL byte: %d %s, want 400 %q", r.status, r.raw, msgUnstorableText)
	}
	// Nothing of the rejected requests was stored (the last one had a valid site_url next to a bad field).
	if r := w.mgmt(w.inst, http.MethodGet, tRef, tMgmtToken, nil); r.str("site_url") != tSiteURL || r.body["jwt_exp"] != float64(3600) {
		t.Errorf("a rejected PATCH changed the config: %s", r.raw)
	}
	if n := w.count(`select version from auth.pgreflect_config`); n != 0 {
		t.Errorf("config version %d after only rejected PATCHes", n)
	}
}

func TestManagementPatchTakesEffectEverywhere(t *testing.T) {
	w := newWorld(t, nil)
	second := w.start(nil) // another instance on the same database

	// Both instances sign in before the change.
	if r := w.do(http.MethodGet, second.apiURL+"/auth/v1/authorize?provider=google", nil, nil); r.status != http.StatusFound {
		t.Fatalf("second instance authorize: %d %s", r.status, r.raw)
	}
	r := w.mgmt(w.inst, http.MethodPatch, tRef, tMgmtToken, map[string]any{
		"external_google_enabled": false, "jwt_exp": 120, "site_url": "https://new-site.example",
		"uri_allow_list": "https://new-app.example/**", "unknown_field_the_cli_sends": "ignored",
		"external_google_email_optional": nil,
	})
	if r.status != http.StatusOK || r.body["external_google_enabled"] != false || r.body["jwt_exp"] != float64(120) ||
		r.str("uri_allow_list") != "https://new-app.example/**" {
		t.Fatalf("PATCH: %d %s", r.status, r.raw)
	}
	// The other instance sees it on its next request.
	got := w.do(http.MethodGet, second.apiURL+"/auth/v1/authorize?provider=google", nil, map[string]string{"X-Supabase-Api-Version": "2024-01-01"})
	wantError(t, "disabled on the other instance", got, 400, "validation_failed", "Unsupported provider: provider is not enabled")
	if s := w.do(http.MethodGet, second.apiURL+"/auth/v1/settings", nil, map[string]string{"apikey": w.anon}); s.body["external"].(map[string]any)["google"] != false {
		t.Errorf("settings on the other instance: %s", s.raw)
	}
	if g := w.mgmt(second, http.MethodGet, tRef, tMgmtToken, nil); g.str("site_url") != "https://new-site.example" {
		t.Errorf("GET on the other instance: %s", g.raw)
	}

	// Re-enable with a new client ID and an additional one: the ID-token grant accepts the additional one.
	r = w.mgmt(second, http.MethodPatch, tRef, tMgmtToken, map[string]any{
		"external_google_enabled": true, "external_google_client_id": tWebClient, "external_google_additional_client_ids": "android-client",
	})
	if r.status != http.StatusOK || r.str("external_google_additional_client_ids") != "android-client" {
		t.Fatalf("PATCH 2: %d %s", r.status, r.raw)
	}
	c := w.idp.Claims(testidp.DefaultUser())
	c["aud"] = "android-client"
	tok := w.api(http.MethodPost, "/token?grant_type=id_token", map[string]any{"provider": "google", "id_token": w.idp.MintIDToken(c, testidp.MintOptions{})}, "")
	if tok.status != http.StatusOK {
		t.Fatalf("additional client id: %d %s", tok.status, tok.raw)
	}
	claims := w.claims(tok.str("access_token"))
	if exp, iat := claims["exp"].(float64), claims["iat"].(float64); exp-iat != 120 || tok.body["expires_in"] != float64(120) {
		t.Errorf("jwt_exp not applied: exp-iat=%v expires_in=%v", exp-iat, tok.body["expires_in"])
	}
	c["aud"] = tIOSClient // dropped from client_id by the PATCH
	tok = w.api(http.MethodPost, "/token?grant_type=id_token", map[string]any{"provider": "google", "id_token": w.idp.MintIDToken(c, testidp.MintOptions{})}, "")
	wantOAuthError(t, "removed client id", tok, "invalid request", "Unacceptable audience in id_token: ["+tIOSClient+"]")

	// The new allow list and site URL drive redirects.
	_, final := w.flow(url.Values{"provider": {"google"}, "redirect_to": {"https://new-app.example/cb"}})
	if !strings.HasPrefix(final.String(), "https://new-app.example/cb#") {
		t.Errorf("new allow list: %v", final)
	}
	_, final = w.flow(url.Values{"provider": {"google"}, "redirect_to": {tAppURL}})
	if !strings.HasPrefix(final.String(), "https://new-site.example") {
		t.Errorf("old allow list entry still accepted: %v", final)
	}

	// Persisted: a fresh instance started later has the same configuration.
	third := w.start(nil)
	if g := w.mgmt(third, http.MethodGet, tRef, tMgmtToken, nil); g.body["jwt_exp"] != float64(120) || g.str("external_google_client_id") != tWebClient {
		t.Errorf("restarted instance: %s", g.raw)
	}
	if n := w.count(`select count(*) from auth.audit_log_entries where payload->>'action' = 'auth_config_updated'`); n != 2 {
		t.Errorf("audit entries for config changes: %d", n)
	}
}

func TestConcurrentPatchesAllPersist(t *testing.T) {
	w := newWorld(t, nil)
	second := w.start(nil)
	fields := []map[string]any{
		{"jwt_exp": 600}, {"site_url": "https://s.example"}, {"external_google_skip_nonce_check": true},
		{"uri_allow_list": "https://u.example/**"}, {"disable_signup": true}, {"security_refresh_token_reuse_interval": 3},
	}
	done := make(chan response, len(fields))
	for i, f := range fields {
		inst := w.inst
		if i%2 == 1 {
			inst = second
		}
		go func() { done <- w.mgmt(inst, http.MethodPatch, tRef, tMgmtToken, f) }()
	}
	for range fields {
		if r := <-done; r.status != http.StatusOK {
			t.Errorf("PATCH: %d %s", r.status, r.raw)
		}
	}
	g := w.mgmt(w.inst, http.MethodGet, tRef, tMgmtToken, nil)
	if g.body["jwt_exp"] != float64(600) || g.str("site_url") != "https://s.example" || g.body["external_google_skip_nonce_check"] != true ||
		g.str("uri_allow_list") != "https://u.example/**" || g.body["disable_signup"] != true || g.body["security_refresh_token_reuse_interval"] != float64(3) {
		t.Errorf("a concurrent change was lost: %s", g.raw)
	}
	if n := w.count(`select version from auth.pgreflect_config`); n != len(fields) {
		t.Errorf("config version %d after %d changes", n, len(fields))
	}
}

// Issue 22: a value stored through the console beat supabase/config.toml for ever, silently. A server names
// each such value when it starts, the management API lists them with the file's value, and deleting one brings
// the file's value back.
func TestStoredOverridesNamedListedAndReset(t *testing.T) {
	w := newWorld(t, nil)
	overridesURL := w.inst.apiURL + "/v1/projects/" + tRef + "/config/auth/overrides"
	mgmt := map[string]string{"Authorization": "Bearer " + tMgmtToken}
	if r := w.mgmt(w.inst, http.MethodPatch, tRef, tMgmtToken, map[string]any{
		"external_google_client_id": "X", "external_google_secret": "another-secret", "site_url": tSiteURL,
	}); r.status != http.StatusOK {
		t.Fatalf("PATCH: %d %s", r.status, r.raw)
	}
	r := w.do(http.MethodGet, overridesURL, nil, mgmt)
	list, _ := r.body["overrides"].([]any)
	if r.status != http.StatusOK || len(list) != 2 {
		t.Fatalf("GET overrides: %d %s; want the client ID and the secret (site_url equals the file's)", r.status, r.raw)
	}
	clientID, _ := list[0].(map[string]any)
	if clientID["field"] != "external_google_client_id" || clientID["stored"] != "X" ||
		clientID["file"] != tWebClient+","+tIOSClient || clientID["file_key"] != "[auth.external.google] client_id" {
		t.Errorf("client ID override: %v", clientID)
	}
	if secret, _ := list[1].(map[string]any); secret["field"] != "external_google_secret" || strings.Contains(string(r.raw), "another-secret") {
		t.Errorf("secret override: %s", r.raw)
	}

	// A server starting on this database names them; the secret without its value.
	w.start(nil)
	logs := w.logs.String()
	if !strings.Contains(logs, `"msg":"a value stored through the console or the management API overrides supabase/config.toml`) ||
		!strings.Contains(logs, `"setting":"external_google_client_id","config.toml":"[auth.external.google] client_id","stored":"X","file":"`+tWebClient+","+tIOSClient+`"`) ||
		!strings.Contains(logs, `"setting":"external_google_secret","config.toml":"[auth.external.google] secret"}`) {
		t.Errorf("start did not name the stored values:\n%s", logs)
	}

	r = w.do(http.MethodDelete, overridesURL+"/external_google_client_id", nil, mgmt)
	if r.status != http.StatusOK || r.str("external_google_client_id") != tWebClient+","+tIOSClient {
		t.Errorf("DELETE override: %d %s; want the file's client IDs back", r.status, r.raw)
	}
	r = w.do(http.MethodGet, overridesURL, nil, mgmt)
	if list, _ := r.body["overrides"].([]any); len(list) != 1 {
		t.Errorf("overrides after the reset: %s", r.raw)
	}
	for name, c := range map[string]struct {
		url    string
		header map[string]string
		status int
	}{
		"unknown field": {overridesURL + "/no_such_setting", mgmt, http.StatusBadRequest},
		"no token":      {overridesURL + "/external_google_secret", nil, http.StatusUnauthorized},
		"not stored":    {overridesURL + "/jwt_exp", mgmt, http.StatusOK},
	} {
		if r := w.do(http.MethodDelete, c.url, nil, c.header); r.status != c.status {
			t.Errorf("%s: %d %s, want %d", name, r.status, r.raw, c.status)
		}
	}
}

// Issue 22: the management API (and so the console) accepted enabling GitHub, which /settings then listed as
// false and /authorize refused: a provider without an OpenID Connect issuer is refused with a 400 naming why,
// and a provider given its issuer URL (a custom OpenID provider) signs in.
func TestProvidersThatCannotSignInAreRefused(t *testing.T) {
	w := newWorld(t, func(a *config.Auth) {
		// A config.toml may still enable one: it is reported as the sign-in sees it.
		a.External["discord"] = config.Provider{Enabled: true, ClientID: "d", Secret: "s"}
	})
	r := w.mgmt(w.inst, http.MethodPatch, tRef, tMgmtToken, map[string]any{
		"external_github_enabled": true, "external_github_client_id": "gh-client", "external_github_secret": "gh-secret"})
	if r.status != http.StatusBadRequest || !strings.Contains(r.str("message"), "Invalid value for external_github_enabled: github cannot sign anyone in") ||
		!strings.Contains(r.str("message"), "external_github_url") {
		t.Errorf("enabling github: %d %s", r.status, r.raw)
	}
	r = w.mgmt(w.inst, http.MethodGet, tRef, tMgmtToken, nil)
	if r.body["external_github_enabled"] != false || r.body["external_github_client_id"] != nil {
		t.Errorf("the refused PATCH changed github: %s", r.raw)
	}
	if r.body["external_discord_enabled"] != false {
		t.Errorf("discord, enabled by the configuration but unable to sign in, is reported enabled: %v", r.body["external_discord_enabled"])
	}
	if logs := w.logs.String(); !strings.Contains(logs, `"msg":"an enabled provider cannot sign anyone in`) || !strings.Contains(logs, `"provider":"discord"`) {
		t.Errorf("the server did not name the configured provider that cannot sign in:\n%s", logs)
	}

	// A custom OpenID provider: any name, its issuer as url.
	r = w.mgmt(w.inst, http.MethodPatch, tRef, tMgmtToken, map[string]any{
		"external_corp_enabled": true, "external_corp_url": w.idp.URL(), "external_corp_client_id": tWebClient,
		"external_corp_secret": tIDPSecret})
	if r.status != http.StatusOK || r.body["external_corp_enabled"] != true || r.str("external_corp_url") != w.idp.URL() {
		t.Fatalf("enabling a custom OpenID provider: %d %s", r.status, r.raw)
	}
	settings := w.do(http.MethodGet, w.inst.apiURL+"/auth/v1/settings", nil, map[string]string{"apikey": w.anon})
	if ext, _ := settings.body["external"].(map[string]any); ext["corp"] != true || ext["github"] != false || ext["discord"] != false {
		t.Errorf("/settings external = %v", settings.body["external"])
	}
	authorize := w.do(http.MethodGet, w.inst.apiURL+"/auth/v1/authorize?provider=corp", nil, nil)
	if authorize.status != http.StatusFound || !strings.HasPrefix(authorize.header.Get("Location"), w.idp.URL()) {
		t.Errorf("/authorize?provider=corp: %d %s %s", authorize.status, authorize.header.Get("Location"), authorize.raw)
	}
}
