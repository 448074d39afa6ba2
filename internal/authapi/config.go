package authapi

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gobwas/glob"

	"github.com/pgreflect/pgreflect/internal/config"
	"github.com/pgreflect/pgreflect/oidc"
)

// settings is the effective auth configuration of one request: the configuration the server started with,
// overlaid by what the management API stored in Postgres.
type settings struct {
	SiteURL       string
	AllowList     []string
	allowGlobs    []*glob.Pattern
	JWTExpiry     int
	Rotation      bool
	ReuseInterval int
	EnableSignup  bool
	Providers     map[string]providerSettings
}

// providerSettings is one provider's configuration after overrides.
type providerSettings struct {
	config.Provider
	AdditionalClientIDs string
}

// clientIDs lists every accepted client ID, the redirect client first.
func (p providerSettings) clientIDs() []string {
	ids := p.Provider.ClientIDs()
	for _, id := range strings.Split(p.AdditionalClientIDs, ",") {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// defaultJWTExpiry applies when the configured expiry is 0, as in Supabase Auth.
const defaultJWTExpiry = 3600

// flowStateExpiry is how long an OAuth flow lives, from /authorize (Supabase Auth's default and minimum).
const flowStateExpiry = 300 * time.Second

// overrides is the JSON object stored by PATCH: management-API field names and their values.
type overrides map[string]json.RawMessage

// decodeOverrides reads the stored object (never nil, so that a change can add to it).
func decodeOverrides(raw json.RawMessage) (overrides, error) {
	ov := overrides{}
	if err := json.Unmarshal(raw, &ov); err != nil {
		return nil, fmt.Errorf("stored auth settings: %w", err)
	}
	if ov == nil { // a stored JSON null
		ov = overrides{}
	}
	return ov, nil
}

// providerFields are the per-provider fields of the management API, as external_<provider>_<field>.
var providerFields = []string{"enabled", "client_id", "secret", "skip_nonce_check", "email_optional", "additional_client_ids", "url"}

// splitProviderField splits "external_<provider>_<field>"; ok is false for other names.
func splitProviderField(name string) (provider, field string, ok bool) {
	rest, found := strings.CutPrefix(name, "external_")
	if !found {
		return "", "", false
	}
	for _, f := range providerFields {
		if p, found := strings.CutSuffix(rest, "_"+f); found && p != "" && validProviderName(p) {
			return p, f, true
		}
	}
	return "", "", false
}

func validProviderName(p string) bool {
	for _, c := range p {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return p != ""
}

// buildSettings overlays stored overrides on the base configuration. The overrides were validated when they
// were written, so a value of the wrong type here can only come from a hand edit and is reported.
func buildSettings(base config.Auth, ov overrides) (*settings, error) {
	s := &settings{
		SiteURL:       base.SiteURL,
		AllowList:     append([]string{}, base.AdditionalRedirectURLs...),
		JWTExpiry:     base.JWTExpiry,
		Rotation:      base.EnableRefreshTokenRotation,
		ReuseInterval: base.RefreshTokenReuseInterval,
		EnableSignup:  base.EnableSignup,
		Providers:     map[string]providerSettings{},
	}
	for name, p := range base.External {
		s.Providers[strings.ToLower(name)] = providerSettings{Provider: p}
	}
	for _, k := range slices.Sorted(maps.Keys(ov)) {
		raw := ov[k]
		var err error
		switch k {
		case "site_url":
			err = json.Unmarshal(raw, &s.SiteURL)
		case "uri_allow_list":
			var list string
			err = json.Unmarshal(raw, &list)
			s.AllowList = splitList(list)
		case "jwt_exp":
			err = json.Unmarshal(raw, &s.JWTExpiry)
		case "disable_signup":
			var disabled bool
			err = json.Unmarshal(raw, &disabled)
			s.EnableSignup = !disabled
		case "refresh_token_rotation_enabled":
			err = json.Unmarshal(raw, &s.Rotation)
		case "security_refresh_token_reuse_interval":
			err = json.Unmarshal(raw, &s.ReuseInterval)
		default:
			name, field, ok := splitProviderField(k)
			if !ok {
				continue
			}
			p := s.Providers[name]
			switch field {
			case "enabled":
				err = json.Unmarshal(raw, &p.Enabled)
			case "client_id":
				err = json.Unmarshal(raw, &p.ClientID)
			case "secret":
				err = json.Unmarshal(raw, &p.Secret)
			case "skip_nonce_check":
				err = json.Unmarshal(raw, &p.SkipNonceCheck)
			case "email_optional":
				err = json.Unmarshal(raw, &p.EmailOptional)
			case "additional_client_ids":
				err = json.Unmarshal(raw, &p.AdditionalClientIDs)
			case "url":
				err = json.Unmarshal(raw, &p.URL)
			}
			s.Providers[name] = p
		}
		if err != nil {
			return nil, fmt.Errorf("stored auth setting %s: %w", k, err)
		}
	}
	if s.JWTExpiry <= 0 {
		s.JWTExpiry = defaultJWTExpiry
	}
	for _, pattern := range s.AllowList {
		g, err := compileAllowGlob(pattern)
		if err != nil {
			return nil, fmt.Errorf("redirect allow list entry %q: %w", pattern, err)
		}
		s.allowGlobs = append(s.allowGlobs, g)
	}
	return s, nil
}

func splitList(list string) []string {
	var out []string
	for _, e := range strings.Split(list, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

func compileAllowGlob(pattern string) (*glob.Pattern, error) {
	return glob.Compile(pattern, '.', '/')
}

// settingsCache keeps the last parsed settings by their stored version, so a request costs one small read.
type settingsCache struct {
	mu      sync.Mutex
	version int64
	cached  *settings
}

// settings reads the stored version and overrides and returns the effective configuration. It reads the row
// on every request so that a PATCH on any instance takes effect on all of them at once.
func (s *Service) settings(ctx context.Context) (*settings, error) {
	raw, version, err := s.store.Settings(ctx)
	if err != nil {
		return nil, err
	}
	s.cache.mu.Lock()
	defer s.cache.mu.Unlock()
	if s.cache.cached != nil && s.cache.version == version {
		return s.cache.cached, nil
	}
	ov, err := decodeOverrides(raw)
	if err != nil {
		return nil, err
	}
	st, err := buildSettings(s.opts.Config, ov)
	if err != nil {
		return nil, err
	}
	s.cache.version, s.cache.cached = version, st
	return st, nil
}

// providerError explains why a provider cannot be used for the code flow (Supabase Auth's wording).
func (s *Service) codeFlowProvider(st *settings, name string) (oidc.Provider, error) {
	p, ok := st.Providers[name]
	issuer := p.URL
	if issuer == "" && name == "google" {
		issuer = oidc.GoogleIssuer
	}
	if !ok && name != "google" || issuer == "" {
		//lint:ignore ST1005 Supabase Auth's text, byte for byte (auth-api.md)
		return oidc.Provider{}, fmt.Errorf("Provider %s could not be found", name)
	}
	if !p.Enabled {
		return oidc.Provider{}, fmt.Errorf("provider is not enabled")
	}
	ids := p.clientIDs()
	if len(ids) == 0 {
		return oidc.Provider{}, fmt.Errorf("missing OAuth client ID")
	}
	if p.Secret == "" {
		return oidc.Provider{}, fmt.Errorf("missing OAuth secret")
	}
	return s.oidcProvider(name, issuer, p), nil
}

func (s *Service) oidcProvider(name, issuer string, p providerSettings) oidc.Provider {
	redirect := p.RedirectURI
	if redirect == "" {
		redirect = s.callbackURL()
	}
	return oidc.Provider{
		Name: name, Issuer: issuer, ClientIDs: p.clientIDs(), Secret: p.Secret, RedirectURI: redirect,
		SkipNonceCheck: p.SkipNonceCheck, EmailOptional: p.EmailOptional,
	}
}

// canSignIn reports whether a provider can sign anyone in: pgreflect speaks OpenID Connect only, so it needs
// an issuer, Google's own or the one configured as url (Keycloak, Azure, GitLab, any OpenID provider). The
// plain OAuth 2.0 providers of Supabase Auth (GitHub, Discord, ...) have none and are refused (issue 22).
func canSignIn(name string, p providerSettings) bool { return providerIssuer(name, p) != "" }

// providerIssuer is the issuer a configured provider's ID tokens carry.
func providerIssuer(name string, p providerSettings) string {
	if p.URL != "" {
		return p.URL
	}
	if name == "google" {
		return oidc.GoogleIssuer
	}
	return ""
}
