// Package authapi serves Supabase Auth's external-provider sign-in over HTTP (the /auth/v1 routes that
// supabase-js calls) and the auth part of the Supabase Management API (/v1/projects/{ref}/config/auth).
package authapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/config"
	"github.com/pgreflect/pgreflect/internal/obs"
	"github.com/pgreflect/pgreflect/oidc"
)

// Options configure a Service.
type Options struct {
	Pool            *pgxpool.Pool // a role that may own and write schema auth
	Keys            *auth.Keys
	Config          config.Auth
	APIURL          string // e.g. http://127.0.0.1:54321; default redirect_uri {APIURL}/auth/v1/callback, issuer {APIURL}/auth/v1
	ProjectRef      string
	ManagementToken string // required by the management API; kept only as a hash
	AnonKey         string // accepted apikey values
	ServiceRoleKey  string
	HTTPClient      *http.Client // for provider calls; nil = default with a 10 s timeout
	Logger          *slog.Logger // nil = slog.Default()
	Metrics         *obs.Metrics // nil = none; counts sign-in events and rate-limit refusals
}

// Service is the auth HTTP service. It keeps no state of its own beyond caches: every record and every
// configuration change lives in Postgres, so several instances may serve the same database.
type Service struct {
	opts      Options
	store     *auth.Store
	providers *oidc.Client
	log       *slog.Logger
	cache     settingsCache
	mgmt      auth.SecretDigest
	limits    rateLimits
	now       func() time.Time
}

// New checks the options, applies the auth schema migrations and returns the service.
func New(ctx context.Context, opts Options) (*Service, error) {
	if opts.Pool == nil || opts.Keys == nil {
		return nil, errors.New("authapi: Pool and Keys are required")
	}
	opts.APIURL = strings.TrimSuffix(opts.APIURL, "/")
	if opts.APIURL == "" {
		return nil, errors.New("authapi: APIURL is required")
	}
	if err := auth.Migrate(ctx, opts.Pool); err != nil {
		return nil, err
	}
	s := &Service{
		opts:      opts,
		store:     auth.NewStore(opts.Pool),
		providers: oidc.NewClient(opts.HTTPClient),
		log:       opts.Logger,
		limits:    newRateLimits(opts.Config.RateLimit),
		now:       time.Now,
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.mgmt = auth.NewSecretDigest(opts.ManagementToken)
	s.opts.ManagementToken = ""
	if _, err := s.settings(ctx); err != nil {
		return nil, fmt.Errorf("authapi: %w", err)
	}
	if err := s.warnStoredOverrides(ctx); err != nil {
		return nil, fmt.Errorf("authapi: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(opts.Config.External)) {
		if p := (providerSettings{Provider: opts.Config.External[name]}); p.Enabled && !canSignIn(name, p) {
			s.log.Warn("an enabled provider cannot sign anyone in: pgreflect signs in with OpenID Connect providers only, Google or one given its issuer as url; /auth/v1/settings lists it as false",
				"provider", name, "config.toml", "[auth.external."+name+"] url")
		}
	}
	return s, nil
}

// Close releases the service's resources; the pool belongs to the caller.
func (s *Service) Close() {}

// issuer is the iss claim of access tokens.
func (s *Service) issuer() string {
	if s.opts.Config.JWTIssuer != "" {
		return s.opts.Config.JWTIssuer
	}
	return s.opts.APIURL + "/auth/v1"
}

func (s *Service) callbackURL() string { return s.opts.APIURL + "/auth/v1/callback" }

// maxBodyBytes is Supabase Auth's request body limit.
const maxBodyBytes = 1 << 20

// handlerFunc is a handler that returns its error for writeError.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

func (s *Service) wrap(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	}
}

// AuthHandler serves the /auth/v1 routes, with paths relative to /auth/v1.
func (s *Service) AuthHandler() http.Handler {
	mux := http.NewServeMux()
	open := func(pattern string, h handlerFunc) { mux.Handle(pattern, s.wrap(h)) }
	keyed := func(pattern string, h handlerFunc) { mux.Handle(pattern, s.requireAPIKey(s.wrap(h))) }
	// The limits come before the apikey check, so that a flood of requests with bad keys counts as well.
	mux.Handle("GET /authorize", s.limit(func(*http.Request) *rateLimiter { return s.limits.authorize }, s.wrap(s.authorize)))
	mux.Handle("POST /token", s.limit(func(r *http.Request) *rateLimiter {
		if r.URL.Query().Get("grant_type") == "refresh_token" {
			return s.limits.refresh
		}
		return s.limits.signIn
	}, s.requireAPIKey(s.wrap(s.token))))
	// A browser navigating to these sends no apikey, and the JWKS is public.
	open("GET /callback", s.callback)
	open("POST /callback", s.callback)
	open("GET /.well-known/jwks.json", s.jwks)
	keyed("GET /health", s.health)
	keyed("GET /settings", s.settingsHandler)
	keyed("GET /user", s.user)
	keyed("POST /logout", s.logout)
	keyed("GET /admin/users", s.adminUsers)
	keyed("/", func(w http.ResponseWriter, r *http.Request) error {
		return newError(http.StatusNotFound, codeNotFound, "Not Found")
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, _ = obs.Ensure(w, r)
		if r.Method == http.MethodOptions {
			// CORS preflights carry no apikey; the server's CORS layer answers them, and anything that
			// reaches us is acknowledged without content.
			w.WriteHeader(http.StatusNoContent)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// requireAPIKey does what Supabase's gateway does in front of Auth: the apikey header (or query parameter)
// must be one of the project's keys.
func (s *Service) requireAPIKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		role, refusal := auth.APIKeys{Anon: s.opts.AnonKey, ServiceRole: s.opts.ServiceRoleKey}.KeyRole(auth.APIKeyFromRequest(r))
		if refusal != "" {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"message": refusal})
			return
		}
		obs.SetRole(r.Context(), role)
		next.ServeHTTP(w, r)
	})
}
