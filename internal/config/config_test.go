package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeProject(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		path := filepath.Join(dir, "supabase", name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

const sample = `
[api]
port = 54321
schemas = ["public", "storage"]
extra_search_path = ["public", "extensions"]

[auth]
site_url = "http://127.0.0.1:3000"
additional_redirect_urls = ["https://127.0.0.1:3000", "env(EXTRA_REDIRECT)"]
jwt_expiry = 3600
enable_refresh_token_rotation = true
refresh_token_reuse_interval = 10

[auth.external.google]
enabled = true
client_id = "web-id, ios-id,android-id"
secret = "env(SUPABASE_AUTH_EXTERNAL_GOOGLE_CLIENT_SECRET)"
skip_nonce_check = false
redirect_uri = ""
url = ""

[storage]
enabled = true
`

func TestLoadSupabaseConfig(t *testing.T) {
	dir := writeProject(t, map[string]string{
		"config.toml": sample,
		".env":        "SUPABASE_AUTH_EXTERNAL_GOOGLE_CLIENT_SECRET=from-dotenv\nEXTRA_REDIRECT=myapp://**\n",
		".env.local":  "EXTRA_REDIRECT=http://localhost:3000/**\n",
	})
	cfg, warnings, err := Load(dir, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %v", warnings)
	}
	g := cfg.Auth.External["google"]
	if !g.Enabled || g.Secret != "from-dotenv" {
		t.Errorf("google = %+v", g)
	}
	if got := g.ClientIDs(); !reflect.DeepEqual(got, []string{"web-id", "ios-id", "android-id"}) {
		t.Errorf("client ids = %v", got)
	}
	// .env.local is read before .env and wins.
	if got := cfg.Auth.AdditionalRedirectURLs[1]; got != "http://localhost:3000/**" {
		t.Errorf("redirect from dotenv = %q", got)
	}
	if got := cfg.API.SearchPath(); !reflect.DeepEqual(got, []string{"public", "storage", "extensions"}) {
		t.Errorf("search path = %v", got)
	}
	if cfg.Auth.RefreshTokenReuseInterval != 10 || !cfg.Auth.EnableRefreshTokenRotation || cfg.Auth.JWTExpiry != 3600 {
		t.Errorf("auth = %+v", cfg.Auth)
	}
}

func TestProcessEnvironmentWins(t *testing.T) {
	dir := writeProject(t, map[string]string{
		"config.toml": sample,
		".env":        "SUPABASE_AUTH_EXTERNAL_GOOGLE_CLIENT_SECRET=from-dotenv\n",
	})
	cfg, _, err := Load(dir, env(map[string]string{
		"SUPABASE_AUTH_EXTERNAL_GOOGLE_CLIENT_SECRET": "from-env",
		"GOTRUE_EXTERNAL_GOOGLE_SKIP_NONCE_CHECK":     "true",
		"GOTRUE_SITE_URL":       "https://app.example.com",
		"GOTRUE_URI_ALLOW_LIST": "https://app.example.com/**,myapp://**",
		"GOTRUE_JWT_EXP":        "600",
		"PGREFLECT_SCHEMAS":     "api",
	}))
	if err != nil {
		t.Fatal(err)
	}
	g := cfg.Auth.External["google"]
	if g.Secret != "from-env" || !g.SkipNonceCheck {
		t.Errorf("google = %+v", g)
	}
	if cfg.Auth.SiteURL != "https://app.example.com" || cfg.Auth.JWTExpiry != 600 || len(cfg.Auth.AdditionalRedirectURLs) != 2 {
		t.Errorf("auth = %+v", cfg.Auth)
	}
	if got := cfg.API.SearchPath(); !reflect.DeepEqual(got, []string{"api", "public", "extensions"}) {
		t.Errorf("search path = %v", got)
	}
}

func TestUnsetVariableKeepsLiteralAndWarns(t *testing.T) {
	dir := writeProject(t, map[string]string{"config.toml": sample})
	cfg, warnings, err := Load(dir, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Auth.External["google"].Secret; got != "env(SUPABASE_AUTH_EXTERNAL_GOOGLE_CLIENT_SECRET)" {
		t.Errorf("secret = %q", got)
	}
	if len(warnings) != 2 {
		t.Errorf("warnings = %v", warnings)
	}
}

func TestDefaultsWithoutFileAndBadInput(t *testing.T) {
	cfg, _, err := Load(t.TempDir(), env(map[string]string{"GOTRUE_EXTERNAL_GOOGLE_ENABLED": "true", "GOTRUE_EXTERNAL_GOOGLE_CLIENT_ID": "x"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.API.Port != 54321 || !reflect.DeepEqual(cfg.API.Schemas, []string{"public"}) || !cfg.Auth.External["google"].Enabled {
		t.Errorf("defaults = %+v", cfg)
	}
	if _, _, err := Load(t.TempDir(), env(map[string]string{"GOTRUE_JWT_EXP": "soon"})); err == nil {
		t.Error("a non-numeric GOTRUE_JWT_EXP was accepted")
	}
	dir := writeProject(t, map[string]string{"config.toml": "[auth\nsite_url ="})
	if _, _, err := Load(dir, env(nil)); err == nil {
		t.Error("malformed TOML was accepted")
	}
}

func TestSigningKeysPathIsRelativeToSupabaseDir(t *testing.T) {
	dir := writeProject(t, map[string]string{"config.toml": "[auth]\nsigning_keys_path = \"./signing_keys.json\"\n"})
	cfg, _, err := Load(dir, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "supabase", "signing_keys.json"); cfg.Auth.SigningKeysPath != want {
		t.Errorf("signing keys path %q, want %q", cfg.Auth.SigningKeysPath, want)
	}
}

func TestLimitsConfig(t *testing.T) {
	cfg, _, err := Load(t.TempDir(), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Auth.RateLimit != (RateLimit{TokenRefresh: 150, SignInSignUps: 30}) || cfg.DB.Pool.PoolSize != 0 {
		t.Errorf("defaults: %+v %+v", cfg.Auth.RateLimit, cfg.DB.Pool)
	}
	dir := writeProject(t, map[string]string{"config.toml": `
[db.pooler]
enabled = false
default_pool_size = 20

[db.pool]
pool_size = 12

[auth.rate_limit]
email_sent = 2
sign_in_sign_ups = 5
`})
	cfg, _, err = Load(dir, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DB.Pool.PoolSize != 12 || cfg.Auth.RateLimit != (RateLimit{TokenRefresh: 150, SignInSignUps: 5}) {
		t.Errorf("file: %+v %+v", cfg.DB.Pool, cfg.Auth.RateLimit)
	}
	cfg, _, err = Load(dir, env(map[string]string{"GOTRUE_RATE_LIMIT_TOKEN_REFRESH": "7", "GOTRUE_RATE_LIMIT_HEADER": "X-Forwarded-For",
		"PGREFLECT_DB_POOL_SIZE": "3"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DB.Pool.PoolSize != 3 || cfg.Auth.RateLimit != (RateLimit{TokenRefresh: 7, SignInSignUps: 5, Header: "X-Forwarded-For"}) {
		t.Errorf("environment: %+v %+v", cfg.DB.Pool, cfg.Auth.RateLimit)
	}
	bad := writeProject(t, map[string]string{"config.toml": "[db.pool]\npool_size = -1\n"})
	if _, _, err := Load(bad, env(nil)); err == nil {
		t.Error("a negative pool size was accepted")
	}
}

func TestGraphQLFeatures(t *testing.T) {
	dir := writeProject(t, map[string]string{"config.toml": "[graphql]\nfeatures = [\"upsert\", \"relatedFilter\"]\n"})
	cfg, _, err := Load(dir, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	set := cfg.GraphQL.FeatureSet()
	if len(set) != 2 || !set.Has("upsert") || !set.Has("relatedFilter") || set.Has("distinct") {
		t.Errorf("features = %v", set)
	}
	bad := writeProject(t, map[string]string{"config.toml": "[graphql]\nfeatures = [\"upsrt\"]\n"})
	_, _, err = Load(bad, env(nil))
	if err == nil || !strings.Contains(err.Error(), "unknown feature `upsrt`, expected one of `upsert`") {
		t.Errorf("a misspelt feature: err = %v", err)
	}
}

// Persisted queries are on by default, bounded; GET caching, trusted documents and the legacy claim settings
// are off until configured.
func TestGraphQLPersistedAndTrusted(t *testing.T) {
	cfg, _, err := Load(writeProject(t, map[string]string{}), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if g := cfg.GraphQL; g.PersistedQueries != DefaultPersistedQueries || g.GETCacheControl != "" || g.TrustedDocuments != "" || g.TrustedDocumentsServiceRole || g.LegacyClaimSettings {
		t.Errorf("defaults: %+v", g)
	}
	dir := writeProject(t, map[string]string{"config.toml": `[graphql]
persisted_queries = 0
get_cache_control = "public, max-age=60"
trusted_documents = "only"
trusted_documents_service_role = true
legacy_claim_settings = true
`})
	if cfg, _, err = Load(dir, env(nil)); err != nil {
		t.Fatal(err)
	}
	if g := cfg.GraphQL; g.PersistedQueries != 0 || g.GETCacheControl != "public, max-age=60" || g.TrustedDocuments != "only" || !g.TrustedDocumentsServiceRole || !g.LegacyClaimSettings {
		t.Errorf("configured: %+v", g)
	}
	for text, want := range map[string]string{
		"persisted_queries = -1":     "persisted_queries must not be negative",
		`trusted_documents = "some"`: `trusted_documents must be off, allow or only, got "some"`,
	} {
		_, _, err := Load(writeProject(t, map[string]string{"config.toml": "[graphql]\n" + text + "\n"}), env(nil))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v", text, err)
		}
	}
}
