// Package httpapi is the HTTP server: POST /graphql/v1 (pg_graphql's endpoint as Supabase exposes it), CORS
// for browsers, and the mounting of the auth and management routes. It is a thin layer over package resolve:
// it authenticates the request (API key, then the bearer JWT), picks the database role, and hands the body to
// the engine.
package httpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/textproto"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel/trace"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/internal/admission"
	"github.com/pgreflect/pgreflect/internal/live"
	"github.com/pgreflect/pgreflect/internal/obs"
	"github.com/pgreflect/pgreflect/reflect"
	"github.com/pgreflect/pgreflect/resolve"
)

// Options configure the server.
type Options struct {
	// Pool connects as the login role (e.g. authenticator); each request switches to the role its JWT names,
	// which the login role must have been granted.
	Pool *pgxpool.Pool
	// Engine answers the GraphQL requests: resolve.NewEngine with Pool as its primary (Options.Pool), and its
	// read replicas, over which queries are spread while mutations go to Pool (a replica lags the primary, so
	// a query may not yet see a mutation just answered: docs/deploy.md). The server starts its schema watch,
	// telling the subscriptions of each change, and Close stops it.
	Engine         *resolve.Engine
	Keys           *auth.Keys
	AnonKey        string
	ServiceRoleKey string
	// SearchPath lists the schemas the API shows (the request's search_path).
	SearchPath []string
	// Auth serves /auth/v1/* (paths relative to /auth/v1) when set.
	Auth http.Handler
	// Management serves /v1/* when set.
	Management http.Handler
	// Console serves /console/ when set (package console).
	Console http.Handler
	// MaxBodyBytes bounds request bodies; default 1 MiB.
	MaxBodyBytes int64
	// Logger receives the request lines and operational messages; default slog.Default().
	Logger *slog.Logger
	// Metrics, when set, count requests and schema reloads and are served at /metrics to the service_role key.
	Metrics *obs.Metrics
	// PollSchema, when set, makes the server poll the schema version at this interval instead of
	// LISTENing for its announcements, which do not come through a pooler in transaction mode.
	PollSchema time.Duration
	// BuildVersion is pgreflect's own version, sent with every /graphql/v1 response in VersionHeader.
	BuildVersion string
	// PoolTimeout bounds a request's wait for a database connection (a free one, or a new one connecting),
	// as PostgREST's db-pool-acquisition-timeout does; default DefaultPoolTimeout.
	PoolTimeout time.Duration
	// RequestTimeout bounds all of a request's database work on /graphql/v1, /auth/v1, /v1 and /console, whatever its
	// role's statement timeout (the stack passes most of the HTTP write timeout, after which no answer can be
	// written); 0: no bound of its own.
	RequestTimeout time.Duration
	// PoolShare is the share of each pool's connections that one credential (the bearer token, else the API
	// key) may hold at once; more of its requests wait for one of its own to finish, so that a few slow
	// clients cannot take the connections of all others. Requests of an operation known to be cheap (see
	// SlowThreshold) are not counted: they hold a connection for milliseconds. 0: DefaultPoolShare; 1 or more:
	// no limit.
	PoolShare float64
	// SlowShare is the share of each pool's connections that the requests of slow operations hold at most, all
	// clients together, so that a client's slow requests leave connections to cheap ones even of the same API
	// key and role (all anonymous clients share one key). 0: DefaultSlowShare; 1 or more: no limit.
	SlowShare float64
	// SlowThreshold is how long an operation (a document and operation name) holds its connection to be slow;
	// a request of an operation not known to be slow becomes one when it holds its connection this long.
	// 0: DefaultSlowThreshold.
	SlowThreshold time.Duration
	// ReadyChecks are further parts /ready checks, by name, beside the request pools and the roles (the stack
	// adds "auth", the auth service's database).
	ReadyChecks map[string]func(context.Context) error
	// ShareByRole also limits each role to PoolShare, as Hasura's per-role limits do: then one role's
	// requests (every signed-in user's, say) cannot use the whole pool even when no other role needs it.
	ShareByRole bool
	// ShareByAddress also limits each client address to PoolShare. Behind a proxy every request comes from
	// the proxy's address, so it is for servers that clients reach directly.
	ShareByAddress bool
	// ChangesURL, when set, connects with the REPLICATION attribute for the change feed of live queries
	// (logical decoding); without it, or when the feed cannot run, live queries are polled.
	ChangesURL string
	// LiveLimits bound subscriptions (WebSocket and Server-Sent Events on /graphql/v1); zero fields take
	// DefaultLiveLimits.
	LiveLimits LiveLimits
	// PersistedQueries bounds the documents of automatic persisted queries kept in the database for every
	// instance (docs/persisted-queries.md); 0 turns them off.
	PersistedQueries int
	// GETCacheControl is the Cache-Control of successful answers to anonymous GET requests (the anon key
	// alone), such as "public, max-age=60"; "" sends none. Other GET answers are "private, no-store".
	GETCacheControl string
	// TrustedDocuments say whether requests may name trusted documents and whether they may send other ones
	// (docs/persisted-queries.md); the zero value is off.
	TrustedDocuments TrustedDocuments
	// TracerProvider receives the spans of requests (internal/tracing); nil: tracing is off, and costs only
	// the no-op spans of BenchmarkTracingOff.
	TracerProvider trace.TracerProvider
	// TraceStatements puts the SQL text of each request (never a value: they are bound) on its
	// graphql.execute span.
	TraceStatements bool
}

// VersionHeader carries the server's build version on every /graphql/v1 response.
const VersionHeader = "X-Pgreflect-Version"

// Server is the HTTP handler of the whole API.
type Server struct {
	opts Options
	log  *slog.Logger
	// exposed is the search path the management API set (SetSearchPath); nil: opts.SearchPath.
	exposed atomic.Pointer[[]string]
	// searchPathChanged ends the event streams when SetSearchPath changes the search path.
	searchPathChanged changeSignal
	// tokens skips verifying a token seen before (the anon key comes with every request).
	tokens  *auth.TokenCache
	engine  *resolve.Engine
	mux     *http.ServeMux
	handler http.Handler
	cancel  context.CancelFunc
	// watchers is the change feed of the subscriptions (the engine runs the schema watch).
	watchers sync.WaitGroup
	// waits bound the waits for a connection.
	waits waitDeadlines
	// watches holds slow watches whose timers can be armed again (see slowWatch).
	watches sync.Pool
	// gates admit requests to the engine's sources, by resolve.Source.Replica (the primary's first); costs
	// tell slow operations from cheap ones for all of them.
	gates []gate
	costs *admission.Costs
	// loginRole is the role the pool connects as: a JWT naming it would run with the login role's own rights
	// (it may switch to every API role), so it is refused.
	loginRole string

	// live refreshes the subscriptions; sockets are the open WebSockets.
	live       *live.Hub
	liveLimits LiveLimits
	sockets    sockets

	// persisted is the store of automatic persisted queries; nil when they are off.
	persisted *persistedQueries
	trusted   *trustedDocuments
	// tracer makes the spans of requests; nil when tracing is off (see startSpan).
	tracer trace.Tracer
	// anyOrigin, exposeHeaders, preflight and version are the values of route's headers, shared by every answer
	// (see crossOriginHeaders).
	anyOrigin, exposeHeaders, preflight fixedHeaders
	version                             []string

	// roles is read by every request without a lock; refreshing serializes only the refreshes.
	roles     atomic.Pointer[assumableRoles]
	refreshMu sync.Mutex
}

// assumableRoles are the roles the login role may switch to, as read at one moment.
type assumableRoles struct {
	names   map[string]bool
	expires time.Time
}

// fresh reports whether r is there and not expired.
func (r *assumableRoles) fresh() bool { return r != nil && time.Now().Before(r.expires) }

// lookupTimeout bounds a small query of the server's own once it has a connection: the assumable roles, a
// trusted document, a persisted query.
const lookupTimeout = 2 * time.Second

// rolesTTL bounds how long a change of role membership (which no event trigger announces) takes to show.
const rolesTTL = 10 * time.Second

// New starts the schema watcher and returns the server. Close stops the watcher.
func New(ctx context.Context, opts Options) (*Server, error) {
	if opts.Pool == nil || opts.Keys == nil || opts.Engine == nil {
		return nil, errors.New("httpapi: Pool, Keys and Engine are required")
	}
	if opts.Engine.Sources()[0].Pool != opts.Pool {
		// The login role read from Pool, the persisted queries and the trusted documents kept through it must
		// be the engine's database's.
		return nil, errors.New("httpapi: the Engine's primary must be Pool")
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if len(opts.SearchPath) == 0 {
		opts.SearchPath = []string{"public"}
	}
	if opts.BuildVersion == "" {
		opts.BuildVersion = "devel"
	}
	engine := opts.Engine
	anyOrigin, exposeHeaders, preflight := crossOriginHeaders()
	opts.PoolTimeout = cmp.Or(opts.PoolTimeout, DefaultPoolTimeout)
	opts.PoolShare = cmp.Or(opts.PoolShare, DefaultPoolShare)
	opts.SlowShare = cmp.Or(opts.SlowShare, DefaultSlowShare)
	opts.SlowThreshold = cmp.Or(opts.SlowThreshold, DefaultSlowThreshold)
	s := &Server{opts: opts, log: opts.Logger, engine: engine, mux: http.NewServeMux(),
		tokens: auth.NewTokenCache(opts.Keys, 4096), costs: admission.NewCosts(rememberedOperations, opts.SlowThreshold),
		anyOrigin: anyOrigin, exposeHeaders: exposeHeaders, preflight: preflight, version: []string{opts.BuildVersion},
		liveLimits: opts.LiveLimits.withDefaults(), persisted: newPersistedQueries(opts.Pool, opts.PersistedQueries, opts.PoolTimeout+lookupTimeout, opts.Logger)}
	s.waits.tick = waitTick
	if err := opts.Pool.QueryRow(ctx, "select session_user::text").Scan(&s.loginRole); err != nil {
		return nil, fmt.Errorf("httpapi: read the login role: %w", err)
	}
	if opts.TracerProvider != nil {
		s.tracer = opts.TracerProvider.Tracer(tracerName)
	}
	var err error
	if s.trusted, err = newTrustedDocuments(ctx, opts.Pool, opts.TrustedDocuments, opts.PoolTimeout+lookupTimeout); err != nil {
		return nil, err
	}
	liveOpts := live.Options{Engine: s.engine, Pool: opts.Pool, PollInterval: s.liveLimits.PollInterval,
		MaxSubscriptions: s.liveLimits.PerInstance, Logger: s.log}
	if opts.Metrics != nil {
		liveOpts.Registerer = opts.Metrics.Registry()
	}
	for _, src := range engine.Sources() {
		s.gates = append(s.gates, newGate(src.Pool, opts.PoolShare, opts.SlowShare))
		if src.Replica > 0 {
			liveOpts.Replicas = append(liveOpts.Replicas, live.Source{Pool: src.Pool, Engine: src.Engine})
		}
	}
	liveOpts.TracerProvider = opts.TracerProvider
	s.live = live.New(liveOpts)
	feedCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	if opts.ChangesURL != "" {
		s.watchers.Go(func() { s.live.RunFeed(feedCtx, live.FeedOptions{URL: opts.ChangesURL, Logger: s.log}) })
	}
	// The hub refreshes every subscription after a schema change, once the engine has dropped its schemas. A
	// server that does not answer fails a poll of the schema version, and the next one tries again.
	watch := resolve.WatchOptions{Poll: opts.PollSchema, PollTimeout: opts.PoolTimeout + lookupTimeout,
		Also: countingInvalidator{s.live, opts.Metrics, s.persisted.schemaChanged}}
	if err := engine.Start(ctx, watch); err != nil {
		s.Close()
		return nil, fmt.Errorf("httpapi: %w", err)
	}

	// /graphql/v1 is route's own (s.graphql), past the mux.
	s.mux.HandleFunc("GET /health", s.health)
	s.mux.HandleFunc("GET /ready", s.ready)
	if opts.Metrics != nil {
		s.mux.Handle("GET /metrics", s.requireServiceRole(opts.Metrics.Handler()))
	}
	if opts.Auth != nil {
		s.mux.Handle("/auth/v1/", http.StripPrefix("/auth/v1", opts.Auth))
	}
	if opts.Management != nil {
		s.mux.Handle("/v1/", opts.Management)
	}
	if opts.Console != nil {
		s.mux.Handle("/console/", opts.Console)
	}
	s.handler = obs.Handler(s.log, opts.Metrics, http.HandlerFunc(s.route))
	if opts.TracerProvider != nil {
		s.handler = traced(s.tracer, s.handler)
	}
	return s, nil
}

// countingInvalidator counts what the schema watcher does to the engine's cache, and tells changed of every
// change.
type countingInvalidator struct {
	reflect.Invalidator
	metrics *obs.Metrics
	changed func()
}

func (c countingInvalidator) Invalidate() {
	c.metrics.SchemaReloaded()
	c.changed()
	c.Invalidator.Invalidate()
}

func (c countingInvalidator) InvalidatePrivileges() {
	c.metrics.SchemaReloaded()
	c.changed()
	reflect.InvalidatePrivileges(c.Invalidator)
}

func (c countingInvalidator) InvalidateRelations(relations []uint32) {
	c.metrics.SchemaReloaded()
	c.changed()
	reflect.InvalidateRelations(c.Invalidator, relations)
}

// PublicationsChanged is no schema change: nothing is reloaded or counted.
func (c countingInvalidator) PublicationsChanged() { reflect.PublicationsChanged(c.Invalidator) }

// Close stops the schema watcher and the subscriptions (their sockets are closed with 1013, so that clients
// reconnect to another instance).
func (s *Server) Close() {
	s.engine.Close()
	s.cancel()
	s.watchers.Wait()
	s.sockets.closeAll(wsReasonShutdown)
	s.live.Close()
}

// Engine is the resolver the server uses (for embedding programs that add routes of their own).
func (s *Server) Engine() *resolve.Engine { return s.engine }

// SetGraphQLVersion switches the engine (its replicas' too) to another pg_graphql behaviour version.
func (s *Server) SetGraphQLVersion(v gqlschema.Version) { s.engine.SetVersion(v) }

var corsHeaders = "authorization, x-client-info, apikey, content-type, x-supabase-api-version, accept, accept-profile, content-profile, prefer, x-upsert"

// ExposedHeaders are the headers of an answer that a browser's script may read (Access-Control-Expose-Headers).
const ExposedHeaders = "X-Total-Count, Link, X-Supabase-Api-Version, Content-Range, X-Request-Id, ETag, " + VersionHeader

// crossOriginHeaders are the CORS headers of the API's and the auth routes' answers, made once: route puts
// their values into each answer's header as they are (net/http only reads them, and an Add appends to a copy,
// the values' capacity being their length), instead of a slice per header and request. Every answer gets
// anyOrigin, as every answer of Supabase's gateway (Kong's cors plugin) does. The headers a script may read
// (exposeHeaders) mean something only to a browser's cross-origin request, which always carries an Origin (Fetch
// standard), and only the answer to one gets them: a server's or a script's request is answered a long header
// shorter. The methods, headers and max age mean something only to a preflight, and, as the gateway and
// Supabase Auth (rs/cors) do, only its answer carries them.
func crossOriginHeaders() (anyOrigin, exposeHeaders, preflight fixedHeaders) {
	anyOrigin = fixedHeaders{}.with("Access-Control-Allow-Origin", "*")
	exposeHeaders = fixedHeaders{}.with("Access-Control-Expose-Headers", ExposedHeaders)
	preflight = fixedHeaders{}.with("Access-Control-Allow-Headers", corsHeaders).
		with("Access-Control-Allow-Methods", "GET, POST, PATCH, PUT, DELETE, OPTIONS").with("Access-Control-Max-Age", "86400")
	return anyOrigin, exposeHeaders, preflight
}

// fixedHeaders are headers with the same values on many answers, in a slice: walking a map of them costs an
// answer more than putting them.
type fixedHeaders []fixedHeader

type fixedHeader struct {
	name  string // canonical
	value []string
}

func (f fixedHeaders) with(name, value string) fixedHeaders {
	return append(f, fixedHeader{name: textproto.CanonicalMIMEHeaderKey(name), value: []string{value}})
}

// put sets the headers in h, sharing their values (see crossOriginHeaders).
func (f fixedHeaders) put(h http.Header) {
	for _, kv := range f {
		h[kv.name] = kv.value
	}
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	// Browsers call the API and the auth routes from any origin; the console and the management API are not
	// for cross-origin use.
	if s.opts.RequestTimeout > 0 && (strings.HasPrefix(r.URL.Path, "/auth/v1/") || strings.HasPrefix(r.URL.Path, "/v1/") ||
		strings.HasPrefix(r.URL.Path, "/console/")) {
		// The auth service, the management API and the console's Schema pages wait on their database under the
		// request's budget too.
		ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
		defer cancel()
		r = r.WithContext(ctx)
	}
	api := r.URL.Path == "/graphql/v1"
	if !api && !strings.HasPrefix(r.URL.Path, "/auth/v1/") {
		s.mux.ServeHTTP(w, r)
		return
	}
	h := w.Header()
	if api {
		h[VersionHeader] = s.version
	}
	s.anyOrigin.put(h)
	if _, crossOrigin := r.Header["Origin"]; crossOrigin {
		s.exposeHeaders.put(h)
	}
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		s.preflight.put(h)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if api {
		// The API's path, served without the mux's pattern matching, which cost every request a microsecond.
		s.graphql(w, r)
		return
	}
	s.mux.ServeHTTP(w, r)
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeMessage(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]string{"message": msg})
	writeJSON(w, status, b)
}

func writeGraphQLError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorsBody(msg))
}

// unavailableMessage answers every request the database being away fails: one shape per outage, always this
// 503 on /graphql/v1. Like resolve.InternalErrorMessage, it carries the request id, so that an operator can find
// the logged reason, and nothing of the reason itself.
func unavailableMessage(id string) string { return fmt.Sprintf(msgUnavailableByID, id) }

// writeInternal logs err with the request id and answers status in the GraphQL contract's shape, with the
// text message gives for the id.
func (s *Server) writeInternal(w http.ResponseWriter, r *http.Request, status int, message func(id string) string, what string, err error) {
	obs.Logger(r.Context(), s.log).ErrorContext(r.Context(), what, slog.Any("error", err))
	b, _ := json.Marshal(map[string]any{"data": nil, "errors": []any{map[string]string{"message": message(obs.RequestID(r.Context()))}}})
	writeJSON(w, status, b)
}

func (s *Server) graphql(w http.ResponseWriter, r *http.Request) {
	// A bug must not take the connection down with it: answer in the GraphQL shape and log the stack.
	defer func() {
		if v := recover(); v != nil {
			s.writeInternal(w, r, http.StatusInternalServerError, resolve.InternalErrorMessage, "graphql: panic",
				fmt.Errorf("%v\n%s", v, debug.Stack()))
		}
	}()
	if isWebSocket(r) {
		s.serveWebSocket(w, r)
		return
	}
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET, POST")
		writeGraphQLError(w, http.StatusMethodNotAllowed, msgOnlyGetPost)
		return
	}
	session, ok := s.requestSession(w, r)
	if !ok {
		return
	}
	if wantsEventStream(r) {
		s.serveSSE(w, r, session)
		return
	}
	wire, ok := s.readRequest(w, r)
	if !ok || !s.resolveDocument(w, r, session.Role, &wire) {
		return
	}
	req := wire.Request
	if strings.TrimSpace(req.Query) == "" {
		writeGraphQLError(w, http.StatusBadRequest, msgQueryRequired)
		return
	}
	// The engine parses the document to tell its operation, and sends queries to a read replica: they only read
	// (pg_graphql shows volatile functions as mutations).
	kind, src := s.engine.Route(req)
	op := string(kind)
	if info := obs.FromContext(r.Context()); info != nil {
		info.Operation = op
	}
	if r.Method == http.MethodGet && kind != ast.Query {
		// A GET must not change anything (browsers prefetch links, caches replay them).
		w.Header().Set("Allow", "POST")
		writeGraphQLError(w, http.StatusMethodNotAllowed, fmt.Sprintf(msgGETOnlyQueries, op))
		return
	}
	body, failed := s.answerOnce(r.Context(), requesterOf(r), src, op, session, req)
	switch {
	case failed != nil:
		s.writeFailure(w, r, failed)
	case body != nil:
		s.writeAnswer(w, r, body)
	}
}

// requestSession authenticates r and notes its role for the request log; when it cannot, it has answered r.
func (s *Server) requestSession(w http.ResponseWriter, r *http.Request) (resolve.Session, bool) {
	session, status, msg, err := s.authenticate(r)
	if err != nil {
		s.writeInternal(w, r, http.StatusServiceUnavailable, unavailableMessage, "graphql: read the roles", err)
		return session, false
	}
	if status != 0 {
		writeMessage(w, status, msg)
		return session, false
	}
	obs.SetRole(r.Context(), session.Role)
	return session, true
}

// authenticate checks the API key and the bearer token and returns the session, or an HTTP status and
// message for the client, or an error when the database could not be asked.
func (s *Server) authenticate(r *http.Request) (resolve.Session, int, string, error) {
	ctx, span := s.startSpan(r.Context(), "authenticate")
	session, status, msg, err := s.authenticateCredentials(ctx, auth.APIKeyFromRequest(r), r.Header.Get("Authorization"))
	endAuthenticate(span, session, status, err)
	return session, status, msg, err
}

// authenticateCredentials is authenticate for an API key and an Authorization value however they came (HTTP
// headers, or a subscription's connection_init payload).
func (s *Server) authenticateCredentials(ctx context.Context, key, authorization string) (resolve.Session, int, string, error) {
	caller, refusal := auth.APIKeys{Anon: s.opts.AnonKey, ServiceRole: s.opts.ServiceRoleKey}.Authenticate(key, authorization, s.tokens)
	if refusal != "" {
		return resolve.Session{}, http.StatusUnauthorized, refusal, nil
	}
	role := caller.Role
	if role == s.loginRole {
		return resolve.Session{}, http.StatusUnauthorized, fmt.Sprintf(msgRoleNotAssumable, role), nil
	}
	ok, err := s.mayAssume(ctx, role)
	if err != nil {
		return resolve.Session{}, 0, "", err
	}
	if !ok {
		return resolve.Session{}, http.StatusUnauthorized, fmt.Sprintf(msgRoleNotAssumable, role), nil
	}
	return resolve.Session{Role: role, Claims: caller.Claims, EncodedClaims: caller.EncodedClaims, SearchPath: s.searchPath()}, 0, "", nil
}

// mayAssume reports whether the login role may switch to role. Superuser-only roles are refused even when the
// login role is a superuser: API requests never run with superuser rights.
func (s *Server) mayAssume(ctx context.Context, role string) (bool, error) {
	if r := s.roles.Load(); r.fresh() {
		return r.names[role], nil
	}
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	if r := s.roles.Load(); r.fresh() { // refreshed while this request waited
		return r.names[role], nil
	}
	r, err := s.readRoles(ctx)
	if err != nil {
		return false, err
	}
	s.roles.Store(r)
	return r.names[role], nil
}

// readRoles reads the roles the login role may switch to, within PoolTimeout for a connection and
// lookupTimeout for the query: a refresh holds every request that needs it, and a server that does not
// answer must not hold them longer.
func (s *Server) readRoles(ctx context.Context) (*assumableRoles, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.PoolTimeout+lookupTimeout)
	defer cancel()
	rows, err := s.opts.Pool.Query(ctx, `select rolname::text from pg_roles
		where pg_has_role(current_user, oid, 'MEMBER') and not rolsuper`)
	if err != nil {
		return nil, fmt.Errorf("read the assumable roles: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("read the assumable roles: %w", err)
	}
	r := &assumableRoles{names: make(map[string]bool, len(names)), expires: time.Now().Add(rolesTTL)}
	for _, n := range names {
		r.names[n] = true
	}
	return r, nil
}
