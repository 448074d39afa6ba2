package benchcmp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/auth"
)

// Ceiling is the least a server can do for the comparison's requests: the same API key and JWT checks as
// pgreflect (auth.APIKeys.Authenticate on a TokenCache, as pgreflect's server does), then one pgx batch, sent as one pipeline in one implicit transaction, that sets
// the role, the search path and the JWT claims and runs the hand-written statement of the request's operation.
// Anything pgreflect spends beyond this is the price of being a general GraphQL engine.
type Ceiling struct {
	pool    *pgxpool.Pool
	tokens  *auth.TokenCache
	apiKeys auth.APIKeys
	queries map[string]Query
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

func (c *Ceiling) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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

func (c *Ceiling) run(ctx context.Context, role, claims, sql string, args []any) ([]byte, error) {
	var batch pgx.Batch
	batch.Queue(`select set_config('role', $1, true), set_config('search_path', 'public', true),
		set_config('request.jwt.claims', $2, true)`, role, claims)
	var data []byte
	batch.Queue(sql, args...).QueryRow(func(row pgx.Row) error { return row.Scan(&data) })
	if err := c.pool.SendBatch(ctx, &batch).Close(); err != nil {
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
