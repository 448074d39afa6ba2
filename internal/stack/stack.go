// Package stack assembles the whole server from its parts (pools, keys, the auth service, the GraphQL API,
// metrics) and serves it over HTTP with the server's limits. The command and the test fixture of the packages
// above (stacktest) both build their server here, so that tests run what production runs.
package stack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/net/netutil"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/internal/apisettings"
	"github.com/pgreflect/pgreflect/internal/authapi"
	"github.com/pgreflect/pgreflect/internal/config"
	"github.com/pgreflect/pgreflect/internal/connwatch"
	"github.com/pgreflect/pgreflect/internal/httpapi"
	"github.com/pgreflect/pgreflect/internal/obs"
	"github.com/pgreflect/pgreflect/internal/tracing"
	"github.com/pgreflect/pgreflect/resolve"
)

// Options say what to serve.
type Options struct {
	// RequestURL connects as the login role of API requests (authenticator): each request switches to the
	// role its JWT names, which the login role must have been granted.
	RequestURL string
	// AdminURL connects with rights on schema auth, for the auth service; empty: no auth routes.
	AdminURL        string
	JWTSecret       string
	AnonKey         string
	ServiceRoleKey  string
	ProjectRef      string
	ManagementToken string
	SearchPath      []string
	Config          config.Config
	// APIURL is the server's public base URL (http://127.0.0.1:54321).
	APIURL string
	// Console is mounted at /console/ when set.
	Console http.Handler
	// PoolSize bounds the connections of API requests; 0: Config's [db.pool] pool_size, else DefaultPoolSize.
	PoolSize int
	// PoolTimeout, PoolShare, ShareByRole, ShareByAddress, SlowShare and SlowThreshold bound a request's
	// wait for a connection, each client's share of the pool and the slow operations' (see httpapi.Options);
	// zero values take httpapi's defaults.
	PoolTimeout    time.Duration
	PoolShare      float64
	ShareByRole    bool
	ShareByAddress bool
	SlowShare      float64
	SlowThreshold  time.Duration
	Limits         Limits
	// RequestLimits and StatementTimeout bound each GraphQL request (see resolve.Options: Limits, StatementTimeout).
	RequestLimits    resolve.Limits
	StatementTimeout time.Duration
	Logger           *slog.Logger // nil: slog.Default()
	// ReadURLs are read replicas of RequestURL's database, logged in as the same role: queries go to them in
	// turn, mutations to RequestURL.
	ReadURLs []string
	// StatementMode is auto (or empty), prepared or unnamed: see ParseConnConfig. When any pool goes through a
	// pooler in transaction mode, every pool sends unnamed statements and the schema version is polled.
	StatementMode string
	// BuildVersion is pgreflect's version, sent in a header with every GraphQL response.
	BuildVersion string
	// ChangesURL connects with the REPLICATION attribute for the live queries' change feed; empty: AdminURL;
	// ChangesOff: none. Without a feed, or when logical decoding is not available there, live queries are
	// polled.
	ChangesURL string
	// LiveLimits bound subscriptions (httpapi.LiveLimits; zero fields take the defaults).
	LiveLimits httpapi.LiveLimits
}

// Limits are the HTTP server's; zero fields take DefaultLimits' values.
type Limits struct {
	// ReadHeaderTimeout bounds the wait for a request's headers.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds the whole request, headers and body: a client that trickles its body is cut off.
	ReadTimeout time.Duration
	// WriteTimeout bounds the time from the end of the headers to the end of the answer.
	WriteTimeout time.Duration
	// IdleTimeout closes keep-alive connections that send nothing.
	IdleTimeout time.Duration
	// MaxConnections caps the connections served at once; more wait in the kernel's accept queue until one
	// closes, so that a flood cannot take all file descriptors.
	MaxConnections int
}

// DefaultLimits are generous for real clients and short for a client that holds a connection without using
// it: 30 s to send a request of at most 1 MiB is 35 KB/s.
func DefaultLimits() Limits {
	return Limits{
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxConnections:    DefaultMaxConnections(),
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	l.ReadHeaderTimeout = cmp.Or(l.ReadHeaderTimeout, d.ReadHeaderTimeout)
	l.ReadTimeout = cmp.Or(l.ReadTimeout, d.ReadTimeout)
	l.WriteTimeout = cmp.Or(l.WriteTimeout, d.WriteTimeout)
	l.IdleTimeout = cmp.Or(l.IdleTimeout, d.IdleTimeout)
	l.MaxConnections = cmp.Or(l.MaxConnections, d.MaxConnections)
	return l
}

// DefaultMaxConnections is half the process's file descriptor limit (Go raises the soft limit to the hard one
// at start), so that the other half stays for the pool, the logs and Postgres' sockets, within [64, 4096]:
// 4096 connections are some 100 MB of buffers and goroutines.
func DefaultMaxConnections() int {
	n := 1024
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err == nil && rl.Cur < 1<<20 {
		n = int(rl.Cur / 2)
	} else if err == nil {
		n = 4096
	}
	return min(max(n, 64), 4096)
}

// DefaultPoolSize fits the machine: requests spend most of their time waiting on Postgres (one round trip
// each), so a few connections per core keep the cores busy, where pgx's default of max(4, cores) let six slow
// requests block all others on a small machine. The cap keeps several instances and the auth service within
// Postgres' default max_connections of 100.
func DefaultPoolSize() int {
	return min(max(4*runtime.NumCPU(), 8), 32)
}

// Stack is the assembled server with the resources it holds.
type Stack struct {
	handler http.Handler
	metrics *obs.Metrics
	keys    *auth.Keys
	limits  Limits
	log     *slog.Logger
	// watch keeps the far deadlines of the HTTP server's connections and of the pools' (the HTTP server sets
	// four a request, the engine one on its database connection) without a runtime timer each.
	watch   *connwatch.Watchdog
	closers []func()
	// engine is the API's resolver, whose pg_graphql version the management API may change while it runs.
	engine *resolve.Engine
}

// GraphQLVersion is the pg_graphql behaviour the API follows now: the settled one, or what the management API
// set since.
func (s *Stack) GraphQLVersion() gqlschema.Version { return s.engine.Version() }

// New connects to the database and assembles the server. Close releases what it holds.
func New(ctx context.Context, o Options) (_ *Stack, err error) {
	s := &Stack{metrics: obs.NewMetrics(), limits: o.Limits.withDefaults(), log: o.Logger,
		watch: connwatch.New(connwatch.DefaultTick, connwatch.DefaultHorizon)}
	if s.log == nil {
		s.log = slog.Default()
	}
	// Closed last: every connection it watches is closed before.
	s.closers = append(s.closers, s.watch.Close)
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	s.keys, err = auth.NewKeys(o.JWTSecret)
	if err != nil {
		return nil, err
	}
	if path := o.Config.Auth.SigningKeysPath; path != "" {
		// User access tokens are then signed with the asymmetric key; both the auth routes and /graphql/v1
		// verify them with the same key set.
		if s.keys, err = s.keys.WithSigningKeysFile(path); err != nil {
			return nil, err
		}
	}
	// Traces go where the OTEL_* environment variables say, if anywhere (docs/operations.md).
	tracerProvider, stopTracing, err := tracing.Setup(ctx, o.BuildVersion)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := stopTracing(ctx); err != nil {
			s.log.Warn("OpenTelemetry: the last spans were not sent", slog.Any("error", err))
		}
	})
	poolSize := o.PoolSize
	if poolSize == 0 {
		poolSize = o.Config.DB.Pool.PoolSize
	}
	if poolSize == 0 {
		poolSize = DefaultPoolSize()
	}
	pool, readPools, pooled, err := s.requestPools(ctx, o, poolSize)
	if err != nil {
		return nil, err
	}
	var schemaPoll time.Duration
	if pooled {
		schemaPoll = SchemaPollInterval
	}
	adminPool, err := s.adminPool(ctx, o)
	if err != nil {
		return nil, err
	}
	// The API settings are the engine's: settled first, so that the API starts with them; the management API
	// that changes them is given the API once it is built.
	file := APISettingsFile(o)
	var settingsStore *apisettings.Store
	var settings apisettings.Effective
	if adminPool != nil {
		settingsStore = apisettings.NewStore(adminPool)
		settings, err = apisettings.Settle(ctx, settingsStore, file, s.log)
	} else {
		settings, err = apisettings.FileOnly(file)
	}
	if err != nil {
		return nil, err
	}
	authSvc, err := s.authService(ctx, o, adminPool, tracerProvider)
	if err != nil {
		return nil, err
	}
	var readyChecks map[string]func(context.Context) error
	var authHandler http.Handler
	if authSvc != nil {
		readyChecks = map[string]func(context.Context) error{"auth": adminPool.Ping}
		authHandler = authSvc.AuthHandler()
	}
	trustedMode, err := httpapi.ParseTrustedMode(o.Config.GraphQL.TrustedDocuments)
	if err != nil {
		return nil, fmt.Errorf("[graphql] %w", err)
	}
	// The engine answers GraphQL on the request pools; the API starts and stops its schema watch.
	engine := resolve.NewEngine(resolve.Options{
		Pool:                pool,
		Replicas:            readPools,
		StatementMode:       statementMode(pooled),
		Limits:              o.RequestLimits,
		StatementTimeout:    o.StatementTimeout,
		Features:            o.Config.GraphQL.FeatureSet(),
		Version:             settings.GraphQLVersion,
		LegacyClaimSettings: o.Config.GraphQL.LegacyClaimSettings,
		Logger:              s.log,
	})
	s.engine = engine
	api, err := httpapi.New(ctx, httpapi.Options{
		Pool:           pool,
		Engine:         engine,
		Keys:           s.keys,
		AnonKey:        o.AnonKey,
		ServiceRoleKey: o.ServiceRoleKey,
		SearchPath:     settings.SearchPath(),
		Auth:           authHandler,
		Console:        o.Console,
		Logger:         s.log,
		Metrics:        s.metrics,
		PollSchema:     schemaPoll,
		BuildVersion:   o.BuildVersion,
		PoolTimeout:    o.PoolTimeout,
		PoolShare:      o.PoolShare,
		ReadyChecks:    readyChecks,
		ShareByRole:    o.ShareByRole,
		ShareByAddress: o.ShareByAddress,
		SlowShare:      o.SlowShare,
		SlowThreshold:  o.SlowThreshold,
		// No answer can be written after the write timeout: the database work stops before it, leaving a
		// tenth of it to write the outage's answer.
		RequestTimeout:   s.limits.WriteTimeout - s.limits.WriteTimeout/10,
		ChangesURL:       changesURL(o),
		LiveLimits:       o.LiveLimits,
		PersistedQueries: o.Config.GraphQL.PersistedQueries,
		GETCacheControl:  o.Config.GraphQL.GETCacheControl,
		TrustedDocuments: httpapi.TrustedDocuments{Mode: trustedMode, ServiceRole: o.Config.GraphQL.TrustedDocumentsServiceRole},
		TracerProvider:   tracerProvider,
		TraceStatements:  tracerProvider != nil && tracing.Statements(os.Getenv),
	})
	if err != nil {
		return nil, fmt.Errorf("start the GraphQL API: %w", err)
	}
	s.closers = append(s.closers, api.Close)
	if authSvc != nil {
		api.MountManagement(authSvc.ManagementHandler(apisettings.Routes(settingsStore, file, api)...))
		// Another instance may change the settings through its management API.
		followCtx, stopFollowing := context.WithCancel(context.WithoutCancel(ctx))
		var following sync.WaitGroup
		following.Go(func() {
			apisettings.Follow(followCtx, settingsStore, file, api, settings, SettingsPollInterval, s.log)
		})
		s.closers = append(s.closers, func() { stopFollowing(); following.Wait() })
	}
	s.handler = api
	return s, nil
}

// providerClient makes the auth service's calls to identity providers spans of the sign-in's trace when
// there are traces; nil (the auth service's default client) when there are none.
func providerClient(tp trace.TracerProvider) *http.Client {
	if tp == nil {
		return nil
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: tracing.Transport(tp, http.DefaultTransport)}
}

// ChangesOff as Options.ChangesURL runs no change feed: live queries are polled.
const ChangesOff = "off"

func changesURL(o Options) string {
	if o.ChangesURL == ChangesOff {
		return ""
	}
	return cmp.Or(o.ChangesURL, o.AdminURL)
}

// APISettingsFile is what the configuration says of the API settings: [graphql] version, [api] schemas and
// extra_search_path, or the whole search path that --schemas (or an embedding program) gives.
func APISettingsFile(o Options) apisettings.File {
	f := apisettings.File{GraphQLVersion: o.Config.GraphQL.Version, SchemasKey: "[api] schemas",
		Schemas:         config.API{Schemas: o.Config.API.Schemas}.SearchPath(),
		ExtraSearchPath: config.API{ExtraSearchPath: o.Config.API.ExtraSearchPath}.SearchPath()}
	if len(o.SearchPath) > 0 && !slices.Equal(o.SearchPath, o.Config.API.SearchPath()) {
		f.Schemas, f.ExtraSearchPath, f.SchemasKey = o.SearchPath, nil, "--schemas"
	}
	return f
}

// SettingsPollInterval is how often an instance reads the API settings the project stores (the pinned GraphQL
// version, the exposed schemas), so that a change made through another instance's management API is in
// effect here within about a second.
const SettingsPollInterval = 500 * time.Millisecond

// adminPool connects with rights on schema auth and on the API settings, for the auth service and the
// management API; without an AdminURL there is none.
func (s *Stack) adminPool(ctx context.Context, o Options) (*pgxpool.Pool, error) {
	if o.AdminURL == "" {
		return nil, nil
	}
	// The auth service runs a few short statements per sign-in: pgx's default size suits it.
	pool, pooled, err := s.newPool(ctx, o.AdminURL, o.StatementMode, 0)
	if err != nil {
		return nil, fmt.Errorf("auth database: %w", err)
	}
	if pooled && o.StatementMode != StatementModeUnnamed { // the URL or the connections say so
		s.log.Warn("the auth database URL goes through a pooler in transaction mode, where the auth migrations' session lock does not hold: give a direct connection or a pooler in session mode (docs/deploy.md)")
	}
	s.closers = append(s.closers, pool.Close)
	if err := s.metrics.RegisterPool("auth", pool); err != nil {
		return nil, err
	}
	return pool, nil
}

// authService starts the service of /auth/v1/ and of the management API (/v1/) on the admin pool; without
// one there is none.
func (s *Stack) authService(ctx context.Context, o Options, pool *pgxpool.Pool, tp trace.TracerProvider) (*authapi.Service, error) {
	if pool == nil {
		return nil, nil
	}
	svc, err := authapi.New(ctx, authapi.Options{
		Pool:            pool,
		Keys:            s.keys,
		Config:          o.Config.Auth,
		APIURL:          o.APIURL,
		ProjectRef:      o.ProjectRef,
		ManagementToken: o.ManagementToken,
		AnonKey:         o.AnonKey,
		ServiceRoleKey:  o.ServiceRoleKey,
		Logger:          s.log,
		Metrics:         s.metrics,
		HTTPClient:      providerClient(tp),
	})
	if err != nil {
		return nil, fmt.Errorf("start the auth service: %w", err)
	}
	s.closers = append(s.closers, svc.Close)
	return svc, nil
}

// newPool opens a pool of at most size connections (0: pgx's default) with the statement mode (see
// transactionPooled), checks that it connects, and reports whether it goes through a transaction pooler (as
// the URL or the mode says, or as its connections show: sharesSessions).
func (s *Stack) newPool(ctx context.Context, connString, mode string, size int) (*pgxpool.Pool, bool, error) {
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, false, fmt.Errorf("parse database URL: %w", err)
	}
	pooled, err := transactionPooled(cfg.ConnConfig, mode)
	if err != nil {
		return nil, false, err
	}
	if !pooled && mode != StatementModeUnnamed {
		// pgx's own named statements would clash with another client's on a shared server session.
		if pooled, _, err = sharesSessions(ctx, cfg.ConnConfig); err != nil {
			return nil, false, err
		}
	}
	if pooled {
		prepareNothing(cfg.ConnConfig)
	}
	pool, err := s.openPool(ctx, cfg, size)
	return pool, pooled, err
}

// DefaultConnectTimeout bounds a connection's whole start (TCP, TLS, authentication) when the URL's
// connect_timeout does not: without it a connect to a server that accepts but does not answer waits forever,
// and holds a place of the pool meanwhile.
const DefaultConnectTimeout = 5 * time.Second

// keepAlive probes an idle connection after 15 s without traffic, then every 5 s: a server gone from the
// network (a partition, a host that died without closing its sockets) is noticed within about 30 s instead of
// the kernel's two hours, for the schema watcher's LISTEN and for idle connections of the pool.
var keepAlive = net.KeepAliveConfig{Enable: true, Idle: 15 * time.Second, Interval: 5 * time.Second, Count: 3}

// openPool opens a pool of at most size connections (0: pgx's default) and checks that it connects.
func (s *Stack) openPool(ctx context.Context, cfg *pgxpool.Config, size int) (*pgxpool.Pool, error) {
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "pgreflect"
	}
	cfg.ConnConfig.ConnectTimeout = cmp.Or(cfg.ConnConfig.ConnectTimeout, DefaultConnectTimeout)
	dialer := &net.Dialer{Timeout: cfg.ConnConfig.ConnectTimeout, KeepAliveConfig: keepAlive}
	cfg.ConnConfig.DialFunc = s.watch.Dial(dialer.DialContext)
	if size > 0 {
		cfg.MaxConns = int32(size)
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

// ShutdownTimeout bounds the wait for requests in flight when stopping.
const ShutdownTimeout = 10 * time.Second

// Serve answers HTTP on l, with the limits, until ctx is done, then lets requests in flight finish (up to
// ShutdownTimeout).
func (s *Stack) Serve(ctx context.Context, l net.Listener) error {
	var open atomic.Int64
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.limits.ReadHeaderTimeout,
		ReadTimeout:       s.limits.ReadTimeout,
		WriteTimeout:      s.limits.WriteTimeout,
		IdleTimeout:       s.limits.IdleTimeout,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		ConnState: func(_ net.Conn, state http.ConnState) {
			switch state {
			case http.StateNew:
				s.metrics.ConnOpened()
				if open.Add(1) >= int64(s.limits.MaxConnections) {
					// Further connections now wait to be accepted.
					s.metrics.Refused(obs.RefusedConnectionCap)
				}
			case http.StateClosed, http.StateHijacked:
				s.metrics.ConnClosed()
				open.Add(-1)
			}
		},
	}
	s.log.Info("serving", "addr", l.Addr().String(), "read_header_timeout", s.limits.ReadHeaderTimeout,
		"read_timeout", s.limits.ReadTimeout, "write_timeout", s.limits.WriteTimeout,
		"idle_timeout", s.limits.IdleTimeout, "max_connections", s.limits.MaxConnections)
	return serve(ctx, hs, netutil.LimitListener(s.watch.Listener(l), s.limits.MaxConnections), s.log)
}

// ServeMetrics answers /metrics, without a key, on l (a separate address, for a scraper on a private
// network) until ctx is done.
func (s *Stack) ServeMetrics(ctx context.Context, l net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.metrics.Handler())
	hs := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: s.limits.ReadHeaderTimeout,
		ReadTimeout:       s.limits.ReadTimeout,
		WriteTimeout:      s.limits.WriteTimeout,
		IdleTimeout:       s.limits.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	s.log.Info("serving metrics", "addr", l.Addr().String())
	return serve(ctx, hs, s.watch.Listener(l), s.log)
}

func serve(ctx context.Context, hs *http.Server, l net.Listener, log *slog.Logger) error {
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	select {
	case err := <-errc:
		return fmt.Errorf("HTTP server: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "addr", l.Addr().String(), "grace", ShutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil {
		log.Warn("requests still running at the end of the grace period", "error", err)
		hs.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("HTTP server: %w", err)
	}
	log.Info("stopped", "addr", l.Addr().String())
	return nil
}

// Close releases the server's resources in reverse order of acquisition.
func (s *Stack) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}
