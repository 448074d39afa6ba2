// Package config reads a project's configuration the way the Supabase CLI does: supabase/config.toml with
// env(NAME) substitution, dotenv files beside it, then environment-variable overrides (GoTrue's names).
// Sources are applied in that order; later wins.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/joho/godotenv"

	catalog "github.com/pgreflect/pgreflect/reflect"
)

// Config is the part of supabase/config.toml that pgreflect understands. Unknown sections are ignored so that
// an existing Supabase project's file loads unchanged.
type Config struct {
	API  API  `toml:"api"`
	DB   DB   `toml:"db"`
	Auth Auth `toml:"auth"`
	// GraphQL is pgreflect's own section: how the GraphQL API departs from pg_graphql's defaults.
	GraphQL GraphQL `toml:"graphql"`
}

// GraphQL is [graphql].
type GraphQL struct {
	// Features turns extensions beyond pg_graphql (upsert, nestedInsert, relatedFilter, relatedOrder,
	// distinct, composite, exactPaging) on for every table; comment directives turn them on per schema or table
	// instead.
	Features []string `toml:"features"`
	// Version is the pg_graphql behaviour version to follow ("1.5", "1.6"); empty keeps the version the
	// project pinned on its first start.
	Version string `toml:"version"`
	// PersistedQueries bounds the documents of automatic persisted queries the database keeps for every
	// instance, the least recently used evicted first; 0 turns them off (docs/persisted-queries.md).
	PersistedQueries int `toml:"persisted_queries"`
	// GETCacheControl is the Cache-Control of successful anonymous answers to GET /graphql/v1, such as
	// "public, max-age=60"; empty sends none.
	GETCacheControl string `toml:"get_cache_control"`
	// TrustedDocuments is off, allow (requests may also name a trusted document by id or hash) or only (anon
	// and authenticated may run only trusted documents); empty is off.
	TrustedDocuments string `toml:"trusted_documents"`
	// TrustedDocumentsServiceRole subjects service_role to trusted_documents = "only" too.
	TrustedDocumentsServiceRole bool `toml:"trusted_documents_service_role"`
	// LegacyClaimSettings also sets request.jwt.claim.sub, .role and .email in every request's transaction, as
	// PostgREST did before v9 (before v12 on PostgreSQL 13 and older), for policies and functions written for
	// them (resolve.Options).
	LegacyClaimSettings bool `toml:"legacy_claim_settings"`
}

// DefaultPersistedQueries is [graphql] persisted_queries when the file does not say: enough for the
// operations of many apps and their versions, a few megabytes of table.
const DefaultPersistedQueries = 10000

// FeatureSet is the set [graphql] features names; check has rejected unknown names.
func (g GraphQL) FeatureSet() catalog.FeatureSet {
	set := catalog.FeatureSet{}
	for _, name := range g.Features {
		if f, err := catalog.ParseFeature(name); err == nil {
			set[f] = true
		}
	}
	return set
}

// DB is the part of [db] that pgreflect reads.
type DB struct {
	Pool DBPool `toml:"pool"`
}

// DBPool is [db.pool], pgreflect's own section (the CLI's [db.pooler] configures Supavisor, a separate pooler
// in front of Postgres, which an existing file may hold with enabled = false): the pool of connections that
// API requests run on.
type DBPool struct {
	// PoolSize is the largest number of connections open at once; 0 means a default that fits the machine.
	// Named after [db.pooler] default_pool_size.
	PoolSize int `toml:"pool_size"`
}

// API configures the GraphQL endpoint.
type API struct {
	Port int `toml:"port"`
	// Schemas and ExtraSearchPath together form the search_path of every API request; the GraphQL schema shows
	// exactly the schemas on it (where the role has USAGE).
	Schemas         []string `toml:"schemas"`
	ExtraSearchPath []string `toml:"extra_search_path"`
}

// Auth configures sign-in.
type Auth struct {
	SiteURL                    string              `toml:"site_url"`
	AdditionalRedirectURLs     []string            `toml:"additional_redirect_urls"`
	JWTExpiry                  int                 `toml:"jwt_expiry"`
	JWTIssuer                  string              `toml:"jwt_issuer"`
	SigningKeysPath            string              `toml:"signing_keys_path"`
	EnableRefreshTokenRotation bool                `toml:"enable_refresh_token_rotation"`
	RefreshTokenReuseInterval  int                 `toml:"refresh_token_reuse_interval"`
	EnableSignup               bool                `toml:"enable_signup"`
	External                   map[string]Provider `toml:"external"`
	RateLimit                  RateLimit           `toml:"rate_limit"`
}

// RateLimit is [auth.rate_limit]: requests per 5 minutes per client address, with the Supabase CLI's names and
// defaults. 0 turns a limit off.
type RateLimit struct {
	// TokenRefresh limits POST /token?grant_type=refresh_token.
	TokenRefresh int `toml:"token_refresh"`
	// SignInSignUps limits GET /authorize and the other grants of POST /token, each on its own count, so that
	// one sign-in (authorize, then the code exchange) costs one of each.
	SignInSignUps int `toml:"sign_in_sign_ups"`
	// Header, when set, names a request header that holds the client address (a proxy's X-Forwarded-For or
	// CF-Connecting-IP; the last comma-separated entry is used, the one the nearest proxy wrote), as GoTrue's
	// GOTRUE_RATE_LIMIT_HEADER. Without it, or when the request lacks it, the TCP peer address is used.
	Header string `toml:"header"`
}

// RateLimitWindow is the period [auth.rate_limit] counts over.
const RateLimitWindow = 5 * 60 // seconds

// Provider is one [auth.external.<name>] section.
type Provider struct {
	Enabled bool `toml:"enabled"`
	// ClientID may hold several IDs separated by commas; the first (the web client) is used for redirects and
	// all are accepted as ID-token audiences.
	ClientID       string `toml:"client_id"`
	Secret         string `toml:"secret"`
	SkipNonceCheck bool   `toml:"skip_nonce_check"`
	EmailOptional  bool   `toml:"email_optional"`
	RedirectURI    string `toml:"redirect_uri"`
	// URL overrides the provider's issuer (self-hosted providers, tests).
	URL string `toml:"url"`
}

// ClientIDs splits the comma-separated client ID list, dropping blanks.
func (p Provider) ClientIDs() []string {
	var ids []string
	for _, id := range strings.Split(p.ClientID, ",") {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// Default returns the configuration used when there is no config.toml; values match the Supabase CLI template.
func Default() Config {
	return Config{
		API: API{
			Port:            54321,
			Schemas:         []string{"public"},
			ExtraSearchPath: []string{"public", "extensions"},
		},
		Auth: Auth{
			SiteURL:                    "http://127.0.0.1:3000",
			JWTExpiry:                  3600,
			EnableRefreshTokenRotation: true,
			RefreshTokenReuseInterval:  10,
			EnableSignup:               true,
			External:                   map[string]Provider{},
			RateLimit:                  RateLimit{TokenRefresh: 150, SignInSignUps: 30},
		},
		GraphQL: GraphQL{PersistedQueries: DefaultPersistedQueries},
	}
}

// SearchPath is the API search_path: the exposed schemas followed by the extra ones, without repeats.
func (a API) SearchPath() []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range append(append([]string{}, a.Schemas...), a.ExtraSearchPath...) {
		if s = strings.TrimSpace(s); s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// check rejects values that cannot mean anything.
func (c Config) check() error {
	var errs []error
	if c.DB.Pool.PoolSize < 0 {
		errs = append(errs, fmt.Errorf("[db.pool] pool_size must not be negative, got %d", c.DB.Pool.PoolSize))
	}
	if c.Auth.RateLimit.TokenRefresh < 0 || c.Auth.RateLimit.SignInSignUps < 0 {
		errs = append(errs, errors.New("[auth.rate_limit] limits must not be negative"))
	}
	if c.GraphQL.PersistedQueries < 0 {
		errs = append(errs, fmt.Errorf("[graphql] persisted_queries must not be negative (0 turns them off), got %d", c.GraphQL.PersistedQueries))
	}
	switch c.GraphQL.TrustedDocuments {
	case "", "off", "allow", "only":
	default:
		errs = append(errs, fmt.Errorf("[graphql] trusted_documents must be off, allow or only, got %q", c.GraphQL.TrustedDocuments))
	}
	for _, name := range c.GraphQL.Features {
		if _, err := catalog.ParseFeature(name); err != nil {
			errs = append(errs, fmt.Errorf("[graphql] features: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Warning is a non-fatal remark about the configuration (the CLI prints these and goes on).
type Warning string

// Load reads <workdir>/supabase/config.toml (absent is fine: defaults apply), the dotenv files of
// <workdir>/supabase, and the environment given by getenv. It returns the configuration and any warnings.
func Load(workdir string, getenv func(string) string) (Config, []Warning, error) {
	cfg := Default()
	dir := filepath.Join(workdir, "supabase")
	dotenv, err := readDotenv(dir, getenv)
	if err != nil {
		return cfg, nil, err
	}
	lookup := func(name string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return dotenv[name]
	}
	var warnings []Warning
	path := filepath.Join(dir, "config.toml")
	if _, err := toml.DecodeFile(path, &cfg); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return cfg, nil, fmt.Errorf("read %s: %w", path, err)
	}
	substituteEnv(reflect.ValueOf(&cfg).Elem(), lookup, &warnings)
	// As in the Supabase CLI, signing_keys_path is relative to the supabase directory.
	if p := cfg.Auth.SigningKeysPath; p != "" && !filepath.IsAbs(p) {
		cfg.Auth.SigningKeysPath = filepath.Join(dir, p)
	}
	if err := applyEnvOverrides(&cfg, lookup); err != nil {
		return cfg, warnings, err
	}
	if err := cfg.check(); err != nil {
		return cfg, warnings, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, warnings, nil
}

// readDotenv loads the dotenv files the Supabase CLI loads, earlier files winning.
func readDotenv(dir string, getenv func(string) string) (map[string]string, error) {
	env := getenv("SUPABASE_ENV")
	if env == "" {
		env = "development"
	}
	names := []string{".env." + env + ".local"}
	if env != "test" {
		names = append(names, ".env.local")
	}
	names = append(names, ".env."+env, ".env")
	out := map[string]string{}
	for _, name := range names {
		vals, err := godotenv.Read(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, name), err)
		}
		for k, v := range vals {
			if _, set := out[k]; !set {
				out[k] = v
			}
		}
	}
	return out, nil
}

var envRef = regexp.MustCompile(`^env\((.*)\)$`)

// substituteEnv replaces every string that is wholly env(NAME) by the variable's value. An unset variable keeps
// the literal text and yields a warning, as the CLI does.
func substituteEnv(v reflect.Value, lookup func(string) string, warnings *[]Warning) {
	switch v.Kind() {
	case reflect.String:
		if m := envRef.FindStringSubmatch(v.String()); m != nil {
			if val := lookup(m[1]); val != "" {
				v.SetString(val)
			} else {
				*warnings = append(*warnings, Warning("environment variable is unset: "+m[1]))
			}
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			substituteEnv(v.Field(i), lookup, warnings)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			substituteEnv(v.Index(i), lookup, warnings)
		}
	case reflect.Map:
		for _, key := range v.MapKeys() {
			elem := reflect.New(v.Type().Elem()).Elem()
			elem.Set(v.MapIndex(key))
			substituteEnv(elem, lookup, warnings)
			v.SetMapIndex(key, elem)
		}
	}
}

// applyEnvOverrides applies GoTrue's environment variables, which win over the file.
func applyEnvOverrides(cfg *Config, lookup func(string) string) error {
	var errs []error
	str := func(name string, dst *string) {
		if v := lookup(name); v != "" {
			*dst = v
		}
	}
	boolean := func(name string, dst *bool) {
		if v := lookup(name); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
				return
			}
			*dst = b
		}
	}
	integer := func(name string, dst *int) {
		if v := lookup(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
				return
			}
			*dst = n
		}
	}
	str("GOTRUE_SITE_URL", &cfg.Auth.SiteURL)
	if v := lookup("GOTRUE_URI_ALLOW_LIST"); v != "" {
		cfg.Auth.AdditionalRedirectURLs = strings.Split(v, ",")
	}
	integer("GOTRUE_JWT_EXP", &cfg.Auth.JWTExpiry)
	str("GOTRUE_JWT_ISSUER", &cfg.Auth.JWTIssuer)
	integer("GOTRUE_RATE_LIMIT_TOKEN_REFRESH", &cfg.Auth.RateLimit.TokenRefresh)
	str("GOTRUE_RATE_LIMIT_HEADER", &cfg.Auth.RateLimit.Header)
	boolean("GOTRUE_SECURITY_REFRESH_TOKEN_ROTATION_ENABLED", &cfg.Auth.EnableRefreshTokenRotation)
	integer("GOTRUE_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL", &cfg.Auth.RefreshTokenReuseInterval)
	if v := lookup("GOTRUE_DISABLE_SIGNUP"); v != "" {
		disabled, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("GOTRUE_DISABLE_SIGNUP: %w", err))
		} else {
			cfg.Auth.EnableSignup = !disabled
		}
	}
	integer("PGREFLECT_DB_POOL_SIZE", &cfg.DB.Pool.PoolSize)
	if v := lookup("PGREFLECT_SCHEMAS"); v != "" {
		cfg.API.Schemas = strings.Split(v, ",")
	}
	if cfg.Auth.External == nil {
		cfg.Auth.External = map[string]Provider{}
	}
	for _, name := range providerNames(cfg) {
		p := cfg.Auth.External[name]
		prefix := "GOTRUE_EXTERNAL_" + strings.ToUpper(name) + "_"
		boolean(prefix+"ENABLED", &p.Enabled)
		str(prefix+"CLIENT_ID", &p.ClientID)
		str(prefix+"SECRET", &p.Secret)
		boolean(prefix+"SKIP_NONCE_CHECK", &p.SkipNonceCheck)
		boolean(prefix+"EMAIL_OPTIONAL", &p.EmailOptional)
		str(prefix+"REDIRECT_URI", &p.RedirectURI)
		str(prefix+"URL", &p.URL)
		if p != (Provider{}) {
			cfg.Auth.External[name] = p
		}
	}
	return errors.Join(errs...)
}

// providerNames lists the providers named in the file plus google, the model provider, which the environment
// alone may configure.
func providerNames(cfg *Config) []string {
	names := []string{"google"}
	for name := range cfg.Auth.External {
		if name != "google" {
			names = append(names, name)
		}
	}
	return names
}
