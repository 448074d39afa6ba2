package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/obs"
	"github.com/pgreflect/pgreflect/resolve"
)

// health answers 200 while the process serves HTTP: a liveness probe that no database outage fails, so that an
// orchestrator does not restart a server that is only waiting for Postgres.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`))
}

// readyTimeout bounds the readiness check, so that a probe gets its answer before its own timeout.
const readyTimeout = 3 * time.Second

// readiness is /ready's answer: the status, and the state of each part a request may need.
type readiness struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}

// ready answers 200 only when every request would work: the primary and each read replica answer a real
// `{ __typename }` request as anon (a connection within the timeout, the schema loaded), the roles a JWT may
// name can be read, and the ReadyChecks pass (the auth service's database). Otherwise 503, the body naming each part "ok" or "unavailable" (the reasons go to
// the log, not to an unauthenticated caller), so that a load balancer stops sending requests that would fail.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	checks := map[string]func(context.Context) error{
		"roles": func(ctx context.Context) error {
			roles, err := s.readRoles(ctx)
			if err == nil {
				s.roles.Store(roles) // fresh: requests need not read them again
			}
			return err
		},
	}
	maps.Copy(checks, s.opts.ReadyChecks)
	for _, src := range s.engine.Sources() {
		part := "primary"
		if src.Replica > 0 {
			part = fmt.Sprintf("replica_%d", src.Replica)
		}
		checks[part] = func(ctx context.Context) error { return s.answers(ctx, src.Pool, src.Engine) }
	}
	out := readiness{Status: "ready", Checks: make(map[string]string, len(checks))}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for part, check := range checks {
		wg.Go(func() {
			err := check(ctx)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				obs.Logger(r.Context(), s.log).WarnContext(r.Context(), "not ready", "part", part, "reason", err)
				out.Checks[part], out.Status = "unavailable", "unavailable"
				return
			}
			out.Checks[part] = "ok"
		})
	}
	wg.Wait()
	status := http.StatusOK
	if out.Status != "ready" {
		status = http.StatusServiceUnavailable
	}
	b, _ := json.Marshal(out)
	writeJSON(w, status, b)
}

// answers runs `{ __typename }` as anon on a connection of pool: a connection is free or can be made, the
// server answers, and the schema loads.
func (s *Server) answers(ctx context.Context, pool *pgxpool.Pool, engine *resolve.Engine) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire a connection: %w", err)
	}
	defer conn.Release()
	session := resolve.Session{Role: "anon", Claims: map[string]any{"role": "anon"}, SearchPath: s.searchPath()}
	out, err := engine.Answer(ctx, conn.Conn(), session, resolve.Request{Query: "{ __typename }"})
	if err != nil {
		return err
	}
	if !bytes.Contains(out, []byte(`"__typename": "Query"`)) {
		return fmt.Errorf("schema: %s", out)
	}
	return nil
}

// requireServiceRole lets only the service_role key through, as apikey or as bearer token (what Prometheus'
// authorization setting sends).
func (s *Server) requireServiceRole(next http.Handler) http.Handler {
	keys := auth.APIKeys{ServiceRole: s.opts.ServiceRoleKey}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := auth.APIKeyFromRequest(r)
		if bearer, ok := auth.BearerToken(r); key == "" && ok {
			key = bearer
		}
		// keys knows only the service_role key: any other key, the anon one included, is the wrong one.
		if role, refusal := keys.KeyRole(key); role != "service_role" {
			if refusal != auth.MsgNoAPIKey {
				refusal = msgServiceRoleRequired
			}
			writeMessage(w, http.StatusUnauthorized, refusal)
			return
		}
		obs.SetRole(r.Context(), "service_role")
		next.ServeHTTP(w, r)
	})
}
