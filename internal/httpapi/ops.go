package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
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
		"primary": func(ctx context.Context) error { return s.answers(ctx, s.opts.Pool, s.engine) },
		"roles": func(ctx context.Context) error {
			roles, err := s.readRoles(ctx)
			if err == nil {
				s.roles.Store(roles) // fresh: requests need not read them again
			}
			return err
		},
	}
	maps.Copy(checks, s.opts.ReadyChecks)
	for i, rep := range s.replicas {
		checks[fmt.Sprintf("replica_%d", i+1)] = func(ctx context.Context) error { return s.answers(ctx, rep.gate.pool, rep.engine) }
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

// operationType is the type (query, mutation, subscription) of the operation a request runs, found by a look at
// the top level of the document without parsing it: the engine parses it anyway, and the metrics only need the
// keyword. With several operations it is the one operationName names, else the first. An unreadable document
// counts as a query; the engine reports what is wrong with it.
func operationType(doc, operationName string) string {
	first := ""
	depth := 0
	inFragment := false // a fragment's selection set is no shorthand query
	for i := 0; i < len(doc); {
		c := doc[i]
		switch {
		case c == '#':
			for i < len(doc) && doc[i] != '\n' {
				i++
			}
			continue
		case c == '"':
			i = skipString(doc, i)
			continue
		case c == '{' || c == '(' || c == '[':
			if depth == 0 && c == '{' {
				if !inFragment && first == "" {
					first = "query" // the shorthand query
				}
				inFragment = false
			}
			depth++
		case c == '}' || c == ')' || c == ']':
			depth--
		case depth == 0 && isNameStart(c):
			j := i
			for j < len(doc) && isNameChar(doc[j]) {
				j++
			}
			word := doc[i:j]
			if word == "fragment" {
				inFragment = true
			}
			if word == "query" || word == "mutation" || word == "subscription" {
				k := j
				for k < len(doc) && (doc[k] == ' ' || doc[k] == '\t' || doc[k] == '\n' || doc[k] == '\r' || doc[k] == ',') {
					k++
				}
				n := k
				for n < len(doc) && isNameChar(doc[n]) {
					n++
				}
				if operationName != "" && doc[k:n] == operationName {
					return word
				}
				if first == "" {
					first = word
				}
				j = n
			}
			i = j
			continue
		}
		i++
	}
	if first == "" {
		return "query"
	}
	return first
}

// skipString returns the index after the string (or block string) starting at i.
func skipString(doc string, i int) int {
	if strings.HasPrefix(doc[i:], `"""`) {
		if end := strings.Index(doc[i+3:], `"""`); end >= 0 {
			return i + 3 + end + 3
		}
		return len(doc)
	}
	for j := i + 1; j < len(doc); j++ {
		switch doc[j] {
		case '\\':
			j++
		case '"', '\n':
			return j + 1
		}
	}
	return len(doc)
}

func isNameStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isNameChar(c byte) bool  { return isNameStart(c) || c >= '0' && c <= '9' }
