package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/authapi"
	"github.com/pgreflect/pgreflect/config"
	"github.com/pgreflect/pgreflect/console"
	"github.com/pgreflect/pgreflect/httpapi"
)

// serverOptions is what `start` and `serve` have found out before serving.
type serverOptions struct {
	// requestURL connects as the login role of API requests (authenticator): each request switches to the
	// role its JWT names, which the login role must have been granted.
	requestURL string
	// adminURL connects with rights on schema auth, for the auth service; empty: no auth routes.
	adminURL        string
	jwtSecret       string
	anonKey         string
	serviceRoleKey  string
	projectRef      string
	managementToken string
	searchPath      []string
	config          config.Config
	// apiURL is the server's public base URL (http://127.0.0.1:54321).
	apiURL string
}

// server is the HTTP server with the resources it holds.
type server struct {
	handler http.Handler
	closers []func()
}

// shutdownTimeout bounds the wait for requests in flight when stopping.
const shutdownTimeout = 10 * time.Second

func newServer(ctx context.Context, o serverOptions) (_ *server, err error) {
	s := &server{}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	keys, err := auth.NewKeys(o.jwtSecret)
	if err != nil {
		return nil, err
	}
	if path := o.config.Auth.SigningKeysPath; path != "" {
		// User access tokens are then signed with the asymmetric key; both the auth routes and /graphql/v1
		// verify them with the same key set.
		if keys, err = keys.WithSigningKeysFile(path); err != nil {
			return nil, err
		}
	}
	pool, err := newPool(ctx, o.requestURL)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, pool.Close)

	authHandler, managementHandler, closeAuth, err := authRoutes(ctx, o, keys)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, closeAuth)

	api, err := httpapi.New(ctx, httpapi.Options{
		Pool:           pool,
		Keys:           keys,
		AnonKey:        o.anonKey,
		ServiceRoleKey: o.serviceRoleKey,
		SearchPath:     o.searchPath,
		Auth:           authHandler,
		Management:     managementHandler,
		Console:        console.Handler(console.Options{APIURL: o.apiURL, AnonKey: o.anonKey}),
	})
	if err != nil {
		return nil, fmt.Errorf("start the GraphQL API: %w", err)
	}
	s.closers = append(s.closers, api.Close)
	s.handler = api
	return s, nil
}

// authRoutes returns the handlers mounted at /auth/v1/ and /v1/ (the management API) and what closes them.
// Without an adminURL there are no auth routes (nil handlers are not mounted).
func authRoutes(ctx context.Context, o serverOptions, keys *auth.Keys) (authHandler, managementHandler http.Handler, closeFn func(), err error) {
	if o.adminURL == "" {
		return nil, nil, func() {}, nil
	}
	pool, err := newPool(ctx, o.adminURL)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("auth database: %w", err)
	}
	svc, err := authapi.New(ctx, authapi.Options{
		Pool:            pool,
		Keys:            keys,
		Config:          o.config.Auth,
		APIURL:          o.apiURL,
		ProjectRef:      o.projectRef,
		ManagementToken: o.managementToken,
		AnonKey:         o.anonKey,
		ServiceRoleKey:  o.serviceRoleKey,
	})
	if err != nil {
		pool.Close()
		return nil, nil, nil, fmt.Errorf("start the auth service: %w", err)
	}
	return svc.AuthHandler(), svc.ManagementHandler(), func() { svc.Close(); pool.Close() }, nil
}

func newPool(ctx context.Context, connString string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, fmt.Errorf("parse database URL: %w", err)
	}
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "pgreflect"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to the database: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to the database as %s: %w", cfg.ConnConfig.User, err)
	}
	return pool, nil
}

// shutdownContext is done at the first SIGINT or SIGTERM, which starts a clean shutdown; a second signal then
// has its default effect, so that a second Ctrl-C ends a shutdown that hangs.
func shutdownContext() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

// Serve answers HTTP on l until ctx is done, then lets requests in flight finish (up to shutdownTimeout).
func (s *server) Serve(ctx context.Context, l net.Listener) error {
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	select {
	case err := <-errc:
		return fmt.Errorf("HTTP server: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil {
		hs.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("HTTP server: %w", err)
	}
	return nil
}

// Close releases the server's resources in reverse order of acquisition.
func (s *server) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// loadConfig reads supabase/config.toml under workdir and returns it with the API search path: --schemas when
// given, else [api] schemas followed by extra_search_path.
func loadConfig(workdir, schemasFlag string, stderr io.Writer) (config.Config, []string, error) {
	cfg, warnings, err := config.Load(workdir, os.Getenv)
	if err != nil {
		return cfg, nil, err
	}
	for _, w := range warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	searchPath := cfg.API.SearchPath()
	if schemasFlag != "" {
		searchPath = splitComma(schemasFlag)
		if len(searchPath) == 0 {
			return cfg, nil, errors.New("--schemas names no schema")
		}
	}
	return cfg, searchPath, nil
}

func splitComma(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

func joinComma(s []string) string { return strings.Join(s, ",") }
