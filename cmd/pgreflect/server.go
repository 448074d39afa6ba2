package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/internal/apisettings"
	"github.com/pgreflect/pgreflect/internal/config"
	"github.com/pgreflect/pgreflect/internal/console"
	"github.com/pgreflect/pgreflect/internal/httpapi"
	"github.com/pgreflect/pgreflect/internal/obs"
	"github.com/pgreflect/pgreflect/internal/schemaview"
	"github.com/pgreflect/pgreflect/internal/stack"
	"github.com/pgreflect/pgreflect/resolve"
)

// serverFlags are the flags `start` and `serve` share: limits, logging and metrics.
type serverFlags struct {
	logFormat string
	// logLevel is the least level written: info writes a line per request, warn and error only problems.
	logLevel    string
	metricsAddr string
	poolSize    int
	// poolTimeout, poolShare, shareByRole, shareByAddress, slowShare and slowThreshold bound the wait for a
	// connection, each client's share and the slow operations'.
	poolTimeout    time.Duration
	poolShare      float64
	shareByRole    bool
	shareByAddress bool
	slowShare      float64
	slowThreshold  time.Duration
	limits         stack.Limits
	requests       resolve.Limits
	// statementTimeout applies to roles without a statement_timeout of their own.
	statementTimeout time.Duration
	// statementMode is auto, prepared or unnamed (stack.ParseConnConfig).
	statementMode string
	// live bounds subscriptions; changesURL is the change feed's connection (stack.Options).
	live       httpapi.LiveLimits
	changesURL string
	// trustedDocuments, when given, replaces [graphql] trusted_documents.
	trustedDocuments string
	// legacyClaimSettings turns [graphql] legacy_claim_settings on.
	legacyClaimSettings bool
	// snapshots is the directory of schema snapshots the console's Drift page compares with.
	snapshots string
}

func addServerFlags(fs *flag.FlagSet) *serverFlags {
	f := &serverFlags{}
	d := stack.DefaultLimits()
	fs.StringVar(&f.logFormat, "log-format", "text", "log format on stderr: text (for a terminal) or json")
	fs.StringVar(&f.logLevel, "log-level", "info", "least level of the lines logged: debug, info (a line per request), warn or error (only problems, each with its request id; for a proxy in front that logs every request)")
	fs.StringVar(&f.metricsAddr, "metrics-addr", "", "also serve Prometheus /metrics without a key on this address, e.g. 127.0.0.1:9100 (on the API port /metrics needs the service_role key)")
	fs.IntVar(&f.poolSize, "pool-size", 0, fmt.Sprintf("most database connections of API requests (default: [db.pool] pool_size of supabase/config.toml, else %d on this machine)", stack.DefaultPoolSize()))
	fs.DurationVar(&f.poolTimeout, "pool-timeout", httpapi.DefaultPoolTimeout, "longest wait of a request for a database connection; then 503 \"Database busy\"")
	fs.Float64Var(&f.poolShare, "pool-share", httpapi.DefaultPoolShare, "share of the pool one API key or token may hold at once with requests not known to be cheap; its further requests wait (then 429); 1: no limit")
	fs.Float64Var(&f.slowShare, "pool-slow-share", httpapi.DefaultSlowShare, "share of the pool the slow operations of all clients together may hold at once; further slow requests wait (then 503), cheap ones keep the rest; 1: no limit")
	fs.DurationVar(&f.slowThreshold, "pool-slow-threshold", httpapi.DefaultSlowThreshold, "how long an operation (document and operation name) holds its connection to count as slow for --pool-slow-share")
	fs.BoolVar(&f.shareByRole, "pool-share-by-role", false, "also limit each database role (anon, authenticated, ...) to --pool-share")
	fs.BoolVar(&f.shareByAddress, "pool-share-by-address", false, "also limit each client address to --pool-share (not behind a proxy, where all requests come from its address)")
	fs.DurationVar(&f.limits.ReadHeaderTimeout, "read-header-timeout", d.ReadHeaderTimeout, "longest wait for a request's headers")
	fs.DurationVar(&f.limits.ReadTimeout, "read-timeout", d.ReadTimeout, "longest time to read a whole request, headers and body")
	fs.DurationVar(&f.limits.WriteTimeout, "write-timeout", d.WriteTimeout, "longest time from the end of a request's headers to the end of its answer")
	fs.DurationVar(&f.limits.IdleTimeout, "idle-timeout", d.IdleTimeout, "how long an idle keep-alive connection stays open")
	fs.IntVar(&f.limits.MaxConnections, "max-connections", d.MaxConnections, "most HTTP connections served at once; more wait to be accepted")
	r := resolve.DefaultLimits()
	fs.IntVar(&f.requests.MaxFields, "max-fields", r.MaxFields, "most fields of a GraphQL request once its fragments are spread (-1: no limit)")
	fs.IntVar(&f.requests.MaxDepth, "max-depth", r.MaxDepth, "deepest nesting of a GraphQL request (-1: no limit)")
	fs.IntVar(&f.requests.MaxAliases, "max-aliases", r.MaxAliases, "most aliases of a GraphQL request (-1: no limit)")
	fs.DurationVar(&f.statementTimeout, "statement-timeout", 8*time.Second, "statement_timeout of a request whose role sets none (alter role ... set statement_timeout)")
	l := httpapi.DefaultLiveLimits()
	fs.DurationVar(&f.live.PollInterval, "live-poll-interval", l.PollInterval, "how often live queries (subscriptions) are refreshed where the change feed cannot tell what changed: without logical decoding, behind a pooler, for functions and views")
	fs.IntVar(&f.live.PerConnection, "max-subscriptions-per-connection", l.PerConnection, "most operations on one subscription WebSocket")
	fs.IntVar(&f.live.PerInstance, "max-subscriptions", l.PerInstance, "most subscriptions this server holds")
	fs.StringVar(&f.changesURL, "changes-db-url", os.Getenv("PGREFLECT_CHANGES_DATABASE_URL"), "database URL of a role with REPLICATION that may add tables to publication pgreflect_live, for the live queries' change feed (env PGREFLECT_CHANGES_DATABASE_URL; default: the auth database URL; off: none; without a feed live queries are polled)")
	fs.StringVar(&f.statementMode, "statement-mode", envOr("PGREFLECT_STATEMENT_MODE", stack.StatementModeAuto), "prepared (named prepared statements, for direct connections), unnamed (for a pooler in transaction mode: PgBouncer, Supavisor on port 6543; the schema version is then polled), or auto: unnamed when the database URL has pgbouncer=true, port 6543 or default_query_exec_mode=exec (env PGREFLECT_STATEMENT_MODE)")
	fs.StringVar(&f.trustedDocuments, "trusted-documents", "", "off, allow (requests may also name a trusted document by id or hash) or only (anon and authenticated may run only trusted documents); default: [graphql] trusted_documents, else off")
	fs.BoolVar(&f.legacyClaimSettings, "legacy-claim-settings", false, "also set request.jwt.claim.sub, .role and .email in every request, as PostgREST before v9 did (before v12 on PostgreSQL 13 and older), for policies that read them (default: [graphql] legacy_claim_settings, else only request.jwt.claims, which auth.uid() and auth.jwt() read)")
	fs.StringVar(&f.snapshots, "snapshots", "", "directory of the schema snapshots (ROLE.graphql, as pgreflect check --snapshot writes them) that the console's Schema > Drift page compares the database with")
	return f
}

// schemaView is the console's Schema pages, on a pool of their own of at most two connections of url's role
// (which must be able to switch to the API roles), so that they never take a connection from API requests.
// The pool connects when a page is first asked for; close releases it. The pages show the pg_graphql version
// that version says the API follows, which the management API may change while the server runs.
func (f *serverFlags) schemaView(ctx context.Context, url string, searchPath []string, settings *apisettings.File, version func() gqlschema.Version) (view *schemaview.View, close func(), err error) {
	connCfg, _, err := stack.ParseConnConfig(url, stack.StatementModeUnnamed)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, nil, err
	}
	cfg.ConnConfig, cfg.MaxConns = connCfg, 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("console's schema pages: %w", err)
	}
	o := schemaview.Options{Pool: pool, SearchPath: searchPath, Settings: settings, Snapshots: f.snapshots, Version: version}
	return schemaview.New(o), pool.Close, nil
}

// configure applies the flags that replace values of config.toml.
func (f *serverFlags) configure(cfg *config.Config) {
	if f.trustedDocuments != "" {
		cfg.GraphQL.TrustedDocuments = f.trustedDocuments
	}
	if f.legacyClaimSettings {
		cfg.GraphQL.LegacyClaimSettings = true
	}
}

// check rejects values that cannot mean anything, before anything starts.
func (f *serverFlags) check() error {
	if f.logFormat != "text" && f.logFormat != "json" {
		return fmt.Errorf("--log-format must be text or json, not %q", f.logFormat)
	}
	if _, ok := logLevels[f.logLevel]; !ok {
		return fmt.Errorf("--log-level must be debug, info, warn or error, not %q", f.logLevel)
	}
	if _, err := httpapi.ParseTrustedMode(f.trustedDocuments); err != nil {
		return fmt.Errorf("--trusted-documents: %w", err)
	}
	switch f.statementMode {
	case stack.StatementModeAuto, stack.StatementModePrepared, stack.StatementModeUnnamed:
	default:
		return fmt.Errorf("--statement-mode must be auto, prepared or unnamed, not %q", f.statementMode)
	}
	l := f.limits
	if f.poolShare <= 0 || f.poolTimeout <= 0 || f.slowShare <= 0 || f.slowThreshold <= 0 {
		return errors.New("--pool-share, --pool-timeout, --pool-slow-share and --pool-slow-threshold must be positive")
	}
	if f.live.PollInterval < 0 || f.live.PerConnection < 0 || f.live.PerInstance < 0 {
		return errors.New("--live-poll-interval and the subscription limits must not be negative")
	}
	if f.poolSize < 0 || l.ReadHeaderTimeout < 0 || l.ReadTimeout < 0 || l.WriteTimeout < 0 || l.IdleTimeout < 0 || l.MaxConnections < 0 {
		return errors.New("--pool-size, the timeouts and --max-connections must not be negative")
	}
	return nil
}

// servedProject is what start and serve know of the project they serve once its database is ready.
type servedProject struct {
	workdir    string
	requestURL string   // the login role's: API requests
	adminURL   string   // the auth schema's and the management API's; "" turns them off
	schemaURL  string   // the console's Schema pages', a role that may switch to the API roles
	readURLs   []string // read replicas
	secrets    projectSecrets
	keys       *auth.Keys
	searchPath []string
	cfg        config.Config
	apiURL     string
}

// newStack assembles the server of p, console included, with what the flags say of the server: pool, limits,
// logs, statement mode, subscriptions. start and serve both serve this way. closeStack closes the stack, then
// the console's Schema pages' pool, then writes the log lines still pending. The logs reach stderr through an
// obs.LineWriter: a busy server's request lines go out several to a write, off the requests' path.
func (f *serverFlags) newStack(ctx context.Context, stderr io.Writer, p servedProject) (st *stack.Stack, closeStack func(), err error) {
	o := stack.Options{
		RequestURL:      p.requestURL,
		AdminURL:        p.adminURL,
		ReadURLs:        p.readURLs,
		JWTSecret:       p.secrets.JWTSecret,
		AnonKey:         p.secrets.AnonKey,
		ServiceRoleKey:  p.secrets.ServiceRoleKey,
		ProjectRef:      p.secrets.ProjectRef,
		ManagementToken: p.secrets.ManagementToken,
		SearchPath:      p.searchPath,
		Config:          p.cfg,
		APIURL:          p.apiURL,
	}
	// The Schema pages follow the exposed schemas stored through the management API, as the API does.
	settings := stack.APISettingsFile(o)
	// The pages are made before the stack (the console is one of its options) and asked for once it serves.
	schemaPages, closeSchemaPages, err := f.schemaView(ctx, p.schemaURL, p.searchPath, &settings, func() gqlschema.Version { return st.GraphQLVersion() })
	if err != nil {
		return nil, nil, err
	}
	o.Console = console.Handler(console.Options{APIURL: p.apiURL, AnonKey: p.secrets.AnonKey, ServiceRoleKey: p.secrets.ServiceRoleKey,
		ProjectName: projectName(p.workdir), ProjectRef: p.secrets.ProjectRef, ManagementToken: p.secrets.ManagementToken,
		MintToken: console.Minter(p.keys), SearchPath: p.searchPath, Schema: schemaPages})
	o.PoolSize, o.PoolTimeout, o.PoolShare = f.poolSize, f.poolTimeout, f.poolShare
	o.ShareByRole, o.ShareByAddress = f.shareByRole, f.shareByAddress
	o.SlowShare, o.SlowThreshold = f.slowShare, f.slowThreshold
	o.RequestLimits, o.StatementTimeout, o.Limits = f.requests, f.statementTimeout, f.limits
	logs := obs.NewLineWriter(stderr)
	o.Logger = f.logger(logs)
	o.StatementMode = f.statementMode
	o.BuildVersion = buildVersion()
	o.LiveLimits, o.ChangesURL = f.live, f.changesURL
	st, err = stack.New(ctx, o)
	if err != nil {
		closeSchemaPages()
		_ = logs.Close()
		return nil, nil, err
	}
	return st, func() { st.Close(); closeSchemaPages(); _ = logs.Close() }, nil
}

// logger writes to stderr in the chosen format. JSON logs write durations as the text logs do ("10s"), not
// as slog's default integer of nanoseconds, which no reader of a log takes for ten seconds.
func (f *serverFlags) logger(stderr io.Writer) *slog.Logger {
	level := logLevels[f.logLevel]
	if f.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level, ReplaceAttr: durationAsText}))
	}
	return slog.New(obs.NewTextHandler(stderr, level))
}

// logLevels are --log-level's values.
var logLevels = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}

func durationAsText(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.String(a.Key, a.Value.Duration().String())
	}
	return a
}

// serveStack serves st on listener, and /metrics on --metrics-addr when given, until ctx is done.
func serveStack(ctx context.Context, st *stack.Stack, listener net.Listener, f *serverFlags) error {
	if f.metricsAddr == "" {
		return st.Serve(ctx, listener)
	}
	ml, err := net.Listen("tcp", f.metricsAddr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s (--metrics-addr): %w", f.metricsAddr, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	metricsDone := make(chan error, 1)
	go func() { metricsDone <- st.ServeMetrics(ctx, ml) }()
	err = st.Serve(ctx, listener)
	cancel()
	return errors.Join(err, <-metricsDone)
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

// envOr is the environment variable name when set, else def.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
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
