// Package httpapi is the HTTP server: POST /graphql/v1 (pg_graphql's endpoint as Supabase exposes it), CORS
// for browsers, and the mounting of the auth and management routes. It is a thin layer over package resolve:
// it authenticates the request (API key, then the bearer JWT), picks the database role, and hands the body to
// the engine.
package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/dbsetup"
	"github.com/pgreflect/pgreflect/reflect"
	"github.com/pgreflect/pgreflect/resolve"
)

// Options configure the server.
type Options struct {
	// Pool connects as the login role (e.g. authenticator); each request switches to the role its JWT names,
	// which the login role must have been granted.
	Pool           *pgxpool.Pool
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
	// MaxRows caps page sizes where no directive does; default pg_graphql's 30.
	MaxRows int
	// Logf receives operational messages; default log.Printf.
	Logf func(format string, args ...any)
}

// Server is the HTTP handler of the whole API.
type Server struct {
	opts   Options
	engine *resolve.Engine
	mux    *http.ServeMux
	cancel context.CancelFunc
	done   chan struct{}

	rolesMu      sync.Mutex
	roles        map[string]bool
	rolesExpires time.Time
}

// rolesTTL bounds how long a change of role membership (which no event trigger announces) takes to show.
const rolesTTL = 10 * time.Second

// New starts the schema watcher and returns the server. Close stops the watcher.
func New(ctx context.Context, opts Options) (*Server, error) {
	if opts.Pool == nil || opts.Keys == nil {
		return nil, errors.New("httpapi: Pool and Keys are required")
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	if opts.Logf == nil {
		opts.Logf = log.Printf
	}
	if len(opts.SearchPath) == 0 {
		opts.SearchPath = []string{"public"}
	}
	s := &Server{opts: opts, engine: resolve.NewEngine(resolve.Options{MaxRows: opts.MaxRows}), mux: http.NewServeMux(), done: make(chan struct{})}
	watchCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	ready := make(chan struct{})
	connect := func(ctx context.Context) (*pgx.Conn, error) {
		return pgx.ConnectConfig(ctx, opts.Pool.Config().ConnConfig.Copy())
	}
	go func() {
		defer close(s.done)
		reflect.Watch(watchCtx, connect, dbsetup.NotifyChannel, s.engine, ready, opts.Logf)
	}()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		s.Close()
		return nil, errors.New("httpapi: the schema watcher could not LISTEN within 10s")
	case <-ctx.Done():
		s.Close()
		return nil, ctx.Err()
	}

	s.mux.HandleFunc("/graphql/v1", s.graphql)
	if opts.Auth != nil {
		s.mux.Handle("/auth/v1/", http.StripPrefix("/auth/v1", opts.Auth))
	}
	if opts.Management != nil {
		s.mux.Handle("/v1/", opts.Management)
	}
	if opts.Console != nil {
		s.mux.Handle("/console/", opts.Console)
	}
	return s, nil
}

// Close stops the schema watcher.
func (s *Server) Close() {
	s.cancel()
	<-s.done
}

// Engine is the resolver the server uses (for embedding programs that add routes of their own).
func (s *Server) Engine() *resolve.Engine { return s.engine }

var corsHeaders = "authorization, x-client-info, apikey, content-type, x-supabase-api-version, accept, accept-profile, content-profile, prefer, x-upsert"

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Browsers call the API and the auth routes from any origin; the console and the management API are not
	// for cross-origin use.
	if r.URL.Path != "/graphql/v1" && !strings.HasPrefix(r.URL.Path, "/auth/v1/") {
		s.mux.ServeHTTP(w, r)
		return
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Headers", corsHeaders)
	h.Set("Access-Control-Allow-Methods", "GET, POST, PATCH, PUT, DELETE, OPTIONS")
	h.Set("Access-Control-Expose-Headers", "X-Total-Count, Link, X-Supabase-Api-Version, Content-Range")
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		h.Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
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
	b, _ := json.Marshal(map[string]any{"errors": []any{map[string]string{"message": msg}}})
	writeJSON(w, status, b)
}

func (s *Server) graphql(w http.ResponseWriter, r *http.Request) {
	// A bug must not take the connection down with it: answer in the GraphQL shape and log the stack.
	defer func() {
		if v := recover(); v != nil {
			s.opts.Logf("graphql: panic: %v\n%s", v, debug.Stack())
			writeGraphQLError(w, http.StatusInternalServerError, "internal error")
		}
	}()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeGraphQLError(w, http.StatusMethodNotAllowed, "only POST is supported")
		return
	}
	session, status, msg := s.authenticate(r)
	if status != 0 {
		writeMessage(w, status, msg)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeGraphQLError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds %d bytes", s.opts.MaxBodyBytes))
			return
		}
		writeGraphQLError(w, http.StatusBadRequest, "could not read the request body")
		return
	}
	var req resolve.Request
	if err := json.Unmarshal(body, &req); err != nil {
		writeGraphQLError(w, http.StatusBadRequest, "request body must be a JSON object with a query")
		return
	}
	if strings.TrimSpace(req.Query) == "" {
		writeGraphQLError(w, http.StatusBadRequest, "query is required")
		return
	}
	conn, err := s.opts.Pool.Acquire(r.Context())
	if err != nil {
		s.opts.Logf("graphql: acquire connection: %v", err)
		writeGraphQLError(w, http.StatusServiceUnavailable, "database unavailable")
		return
	}
	defer conn.Release()
	writeJSON(w, http.StatusOK, s.engine.ExecuteAs(r.Context(), conn.Conn(), session, req))
}

// authenticate checks the API key and the bearer token and returns the session, or an HTTP status and
// message.
func (s *Server) authenticate(r *http.Request) (resolve.Session, int, string) {
	key := auth.APIKeyFromRequest(r)
	if key == "" {
		return resolve.Session{}, http.StatusUnauthorized, auth.MsgNoAPIKey
	}
	keyRole := auth.APIKeys{Anon: s.opts.AnonKey, ServiceRole: s.opts.ServiceRoleKey}.Role(key)
	if keyRole == "" {
		return resolve.Session{}, http.StatusUnauthorized, auth.MsgInvalidAPIKey
	}
	token := key
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, rest, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(rest) == "" {
			return resolve.Session{}, http.StatusUnauthorized, "Authorization header must be Bearer <JWT>"
		}
		token = strings.TrimSpace(rest)
	}
	claims, err := s.opts.Keys.Verify(token)
	if err != nil {
		return resolve.Session{}, http.StatusUnauthorized, err.Error()
	}
	role, _ := claims["role"].(string)
	if role == "" {
		role = keyRole
	}
	ok, err := s.mayAssume(r.Context(), role)
	if err != nil {
		return resolve.Session{}, http.StatusServiceUnavailable, "database unavailable"
	}
	if !ok {
		return resolve.Session{}, http.StatusUnauthorized, fmt.Sprintf("JWT role %q may not be assumed", role)
	}
	return resolve.Session{Role: role, Claims: claims, SearchPath: s.opts.SearchPath}, 0, ""
}

// mayAssume reports whether the login role may switch to role. Superuser-only roles are refused even when the
// login role is a superuser: API requests never run with superuser rights.
func (s *Server) mayAssume(ctx context.Context, role string) (bool, error) {
	s.rolesMu.Lock()
	defer s.rolesMu.Unlock()
	if s.roles == nil || time.Now().After(s.rolesExpires) {
		rows, err := s.opts.Pool.Query(ctx, `select rolname::text from pg_roles
			where pg_has_role(current_user, oid, 'MEMBER') and not rolsuper`)
		if err != nil {
			return false, err
		}
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return false, err
		}
		s.roles = map[string]bool{}
		for _, n := range names {
			s.roles[n] = true
		}
		s.rolesExpires = time.Now().Add(rolesTTL)
	}
	return s.roles[role], nil
}
