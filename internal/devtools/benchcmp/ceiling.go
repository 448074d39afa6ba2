package benchcmp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/httpapi"
	"github.com/pgreflect/pgreflect/internal/obs"
)

// Ceiling is the least a server can do for the comparison's requests: the same API key and JWT checks as
// pgreflect (auth.APIKeys.Authenticate on a TokenCache, as pgreflect's server does), then one pgx batch, sent as
// one pipeline in one implicit transaction, that sets the role, the search path and the JWT claims and runs the
// hand-written statement of the request's operation. Anything pgreflect spends beyond this is the price of being
// a general GraphQL engine and of the duties its contract gives every request (WithDuties does those too).
type Ceiling struct {
	pool    *pgxpool.Pool
	tokens  *auth.TokenCache
	apiKeys auth.APIKeys
	queries map[string]Query
	// duties: the ceiling does pgreflect's per-request duties too (WithDuties).
	duties bool
}

// NewCeiling serves the queries of Queries(accounts) and the rows curve's RowsQuery by their operation names.
func NewCeiling(pool *pgxpool.Pool, keys *auth.Keys, apiKeys auth.APIKeys, accounts int) *Ceiling {
	c := &Ceiling{pool: pool, tokens: auth.NewTokenCache(keys, 4096), apiKeys: apiKeys, queries: map[string]Query{}}
	// The size of the rows curve's answer is a variable; any n gives the same statement.
	for _, q := range append(Queries(accounts), RowsQuery(1)) {
		c.queries[q.Name] = q
	}
	return c
}

// apiRoles are the roles a JWT may select; the minimal server knows them rather than asking the database.
var apiRoles = map[string]bool{"anon": true, "authenticated": true, "service_role": true}

// WithDuties is the ceiling doing, beside its work, what pgreflect's contract asks of every request besides its
// answer, as pgreflect's binary does it (docs/operations.md): a request id in the answer and in one request
// line written to logger, the request counted and timed in Prometheus metrics (obs.Handler, pgreflect's own),
// the CORS and version headers of every answer (and the exposed headers of one to a request with an Origin), a
// bound on the wait for a pool connection (DefaultPoolTimeout) and on the statements (the statement timeout
// and the grace after it, each a deadline context, as pgreflect's pool wait and engine make them), and the
// statement timeout set in the transaction; the HTTP server's limits are the server's (cmd/benchcmp).
// pgreflect against it measures what the GraphQL engine costs; against the plain ceiling, the engine and the
// duties together.
func (c *Ceiling) WithDuties(logger *slog.Logger) http.Handler {
	d := &Ceiling{pool: c.pool, tokens: c.tokens, apiKeys: c.apiKeys, queries: c.queries, duties: true}
	return obs.Handler(logger, obs.NewMetrics(), d)
}

// The duties' settings: pgreflect's defaults (httpapi.DefaultPoolTimeout; resolve's statement timeout of a
// role without one of its own, 8 s, and its grace of 2 s).
const (
	dutyStatementTimeout = "8000"
	dutyBudget           = 10 * time.Second
)

// The headers pgreflect puts on every /graphql/v1 answer beside the ceiling's (httpapi's route), with the same
// values but for the version, and the one it adds to the answer of a request with an Origin; set as route sets
// them, shared slices.
var (
	dutyHeaders = http.Header{
		"Access-Control-Allow-Origin": {"*"},
		httpapi.VersionHeader:         {"devel"},
	}
	dutyExposed = []string{httpapi.ExposedHeaders}
)

func (c *Ceiling) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if c.duties {
		h := w.Header()
		for name, value := range dutyHeaders {
			h[name] = value
		}
		if _, crossOrigin := r.Header["Origin"]; crossOrigin {
			h["Access-Control-Expose-Headers"] = dutyExposed
		}
	}
	if r.Method != http.MethodPost || r.URL.Path != "/graphql/v1" {
		http.Error(w, "POST /graphql/v1 only", http.StatusNotFound)
		return
	}
	caller, refusal := c.apiKeys.Authenticate(auth.APIKeyFromRequest(r), r.Header.Get("Authorization"), c.tokens)
	if refusal != "" {
		writeError(w, http.StatusUnauthorized, refusal)
		return
	}
	// Where pgreflect asks the database which roles the login role may assume, the ceiling knows them.
	if !apiRoles[caller.Role] {
		writeError(w, http.StatusUnauthorized, "JWT role may not be assumed")
		return
	}
	var req struct {
		OperationName string         `json:"operationName"`
		Variables     map[string]any `json:"variables"`
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "request body must be a JSON object")
		return
	}
	q, ok := c.queries[req.OperationName]
	if !ok {
		writeError(w, http.StatusBadRequest, "the ceiling knows only the benchmark's operations")
		return
	}
	if c.duties {
		// The request line's role and operation, as pgreflect's handler notes them.
		obs.SetRole(r.Context(), caller.Role)
		if info := obs.FromContext(r.Context()); info != nil {
			info.Operation = "query"
			if strings.HasPrefix(q.PgGraphQL, "mutation") {
				info.Operation = "mutation"
			}
		}
	}
	data, err := c.run(r.Context(), caller.Role, caller.EncodedClaims, q.CeilingSQL, q.CeilingArgs(req.Variables))
	if err != nil {
		b, _ := json.Marshal(map[string]any{"data": nil, "errors": []any{map[string]string{"message": err.Error()}}})
		writeJSON(w, b)
		return
	}
	out := make([]byte, 0, len(data)+10)
	out = append(out, `{"data":`...)
	out = append(out, data...)
	out = append(out, '}')
	writeJSON(w, out)
}

// ceilingPrelude switches the transaction to the request's role, search path and claims.
const ceilingPrelude = `select set_config('role', $1, true), set_config('search_path', 'public', true),
		set_config('request.jwt.claims', $2, true)`

func (c *Ceiling) run(ctx context.Context, role, claims, sql string, args []any) ([]byte, error) {
	var batch pgx.Batch
	if c.duties {
		batch.Queue(ceilingPrelude+", set_config('statement_timeout', $3, true)", role, claims, dutyStatementTimeout)
	} else {
		batch.Queue(ceilingPrelude, role, claims)
	}
	var data []byte
	batch.Queue(sql, args...).QueryRow(func(row pgx.Row) error { return row.Scan(&data) })
	if !c.duties {
		if err := c.pool.SendBatch(ctx, &batch).Close(); err != nil {
			return nil, err
		}
		return data, nil
	}
	wait, cancel := context.WithTimeout(ctx, httpapi.DefaultPoolTimeout)
	conn, err := c.pool.Acquire(wait)
	cancel()
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	budget, cancel := context.WithTimeout(ctx, dutyBudget)
	defer cancel()
	if err := conn.SendBatch(budget, &batch).Close(); err != nil {
		return nil, err
	}
	return data, nil
}

func writeJSON(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]string{"message": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
