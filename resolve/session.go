package resolve

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/reflect"
	"github.com/pgreflect/pgreflect/sqlgen"
)

// preludeSQL switches the request's transaction to the session: role, search path, the JWT claims and the
// statement timeout. One statement, so that it costs one Bind/Execute in the request's pipeline and is prepared
// once whatever the values; every setting is local to the transaction. It sets request.jwt.claims only, as
// PostgREST does (always since v12, since v9 on PostgreSQL 14 and later), and Supabase's auth.uid() and
// auth.jwt() read it; the legacy per-claim settings (legacyClaimsSQL) cost three more settings in every
// transaction and are opt-in (Options.LegacyClaimSettings).
const preludeSQL = "select set_config('role', $1, true), set_config('search_path', $2, true), " +
	"set_config('request.jwt.claims', $3, true), set_config('statement_timeout', $4, true)"

// legacyClaimsSQL adds to preludeSQL the per-claim settings older PostgREST versions set, which older RLS
// policies and helpers read (current_setting('request.jwt.claim.sub')).
const legacyClaimsSQL = ", set_config('request.jwt.claim.sub', $5, true), " +
	"set_config('request.jwt.claim.role', $6, true), set_config('request.jwt.claim.email', $7, true)"

// The prelude with the application_name, for a session that names one; other sessions leave the connection's
// as it is, without the cost of setting it (and setting it back at commit) on every request. Its parameter
// follows the prelude's others.
const (
	applicationNameAt5SQL = ", set_config('application_name', $5, true)"
	applicationNameAt8SQL = ", set_config('application_name', $8, true)"
)

// The four preludes, spelled out so that each is one constant string (the statement cache's key) rather than
// a concatenation per request.
const (
	plainPreludeSQL       = preludeSQL
	namedPreludeSQL       = preludeSQL + applicationNameAt5SQL
	legacyPreludeSQL      = preludeSQL + legacyClaimsSQL
	legacyNamedPreludeSQL = preludeSQL + legacyClaimsSQL + applicationNameAt8SQL
)

// preludeArgs are the prelude's parameters that a role's requests share: the role, its search path quoted
// (quoteSearchPath) and the statement timeout it runs under, made into statement arguments once per role
// schema rather than once per request.
type preludeArgs struct{ role, searchPath, timeout any }

func newPreludeArgs(role, searchPath, statementTimeout string) preludeArgs {
	return preludeArgs{role, searchPath, statementTimeout}
}

// sessionPrelude returns the statement that switches the request's transaction to the session (its role,
// search path and statement timeout in fixed, its claims), and the legacy per-claim settings when legacy says so.
func sessionPrelude(s Session, fixed preludeArgs, legacy bool) (statement, error) {
	claims := s.EncodedClaims
	if claims == "" {
		b, err := json.Marshal(s.Claims)
		if err != nil {
			return statement{}, fmt.Errorf("encode claims: %w", err)
		}
		claims = string(b)
	}
	args := make([]any, 4, 8)
	args[0], args[1], args[2], args[3] = fixed.role, fixed.searchPath, claims, fixed.timeout
	sql := plainPreludeSQL
	if legacy {
		sub, role, email := legacyClaims(s, true)
		args = append(args, sub, role, email)
		sql = legacyPreludeSQL
	}
	if s.ApplicationName != "" {
		args = append(args, s.ApplicationName)
		sql = namedPreludeSQL
		if legacy {
			sql = legacyNamedPreludeSQL
		}
	}
	return statement{sql: sql, args: args}, nil
}

// legacyClaims are the values of the legacy per-claim settings (sub, role, email) of the session: its claims'
// when legacy settings are on, else empty, which auth.uid() and the like read as not set.
func legacyClaims(s Session, legacy bool) (sub, role, email string) {
	if !legacy {
		return "", "", ""
	}
	claim := func(name string) string {
		if v, ok := s.Claims[name].(string); ok {
			return v
		}
		return ""
	}
	return claim("sub"), claim("role"), claim("email")
}

// roleSettingsSQL reads the role's statement_timeout as ALTER ROLE ... SET stored it (this database's setting
// first). PostgREST applies an impersonated role's settings the same way, since SET ROLE does not.
const roleSettingsSQL = `select coalesce((select split_part(c, '=', 2)
	from pg_catalog.pg_db_role_setting s, unnest(s.setconfig) c
	where s.setrole = (select oid from pg_catalog.pg_roles where rolname = current_user)
	  and s.setdatabase in (0, (select oid from pg_catalog.pg_database where datname = current_database()))
	  and c like 'statement\_timeout=%'
	order by s.setdatabase desc limit 1), '')`

// loadAs builds the session's role's schema: the catalog, read once for every role of the search path (one
// round trip on a miss), and the role's privileges and settings (one round trip). No statement timeout
// applies: the catalog queries are the server's own.
func (e *Engine) loadAs(ctx context.Context, conn *pgx.Conn, s Session) (*roleSchema, error) {
	searchPath := quoteSearchPath(s.SearchPath)
	prelude, err := sessionPrelude(s, newPreludeArgs(s.Role, searchPath, "0"), false)
	if err != nil {
		return nil, err
	}
	catalog, err := e.catalogs.get(ctx, s.SearchPath, func(ctx context.Context, relations, types []uint32) (*reflect.Answer, error) {
		answer := &reflect.Answer{}
		_, err := runPipeline(ctx, conn, e.opts.StatementMode, s.Role, []statement{prelude,
			{sql: reflect.CatalogSettings},
			{sql: reflect.CatalogQuery, args: []any{schemaList(s.SearchPath), oidList(relations), oidList(types)},
				rows: answer.Add}})
		if err != nil {
			return nil, err
		}
		return answer, nil
	})
	if err != nil {
		return nil, err
	}
	results, err := runPipeline(ctx, conn, e.opts.StatementMode, s.Role, []statement{prelude, {sql: reflect.PrivilegesQuery}, {sql: roleSettingsSQL}})
	if err != nil {
		return nil, err
	}
	schema, err := e.buildFor(ctx, catalog, s.Role, s.SearchPath, results[1])
	if err != nil {
		return nil, err
	}
	return e.roleSchema(s.Role, schema, string(results[2]), searchPath), nil
}

// buildFor returns the schema of role, whose privileges answer is privileges, built from catalog. Roles that
// see the same (their privileges answers are equal) in the same read share one schema: one build, and one of
// each compiled request and introspection answer. The read is part of the key because a load that took its
// read before a change may build after it, in the new generation, beside loads that took the new read.
func (e *Engine) buildFor(ctx context.Context, catalog *catalogRead, role string, searchPath []string, privileges []byte) (*gqlschema.Schema, error) {
	seen := sha256.Sum256(privileges)
	key := strconv.FormatUint(catalog.serial, 10) + " " + string(seen[:])
	e.takes(role, searchPath, key)
	return e.builds.Get(ctx, key, searchPath, func(context.Context) (*gqlschema.Schema, error) {
		cat, err := catalog.ForRole(role, privileges)
		if err != nil {
			return nil, err
		}
		return e.build(cat), nil
	})
}

// buildTakers records which build each role's last schema load took, by role and search path (at most
// maxBuildTakers: roles are few).
type buildTakers struct {
	mu   sync.Mutex
	last map[[2]string]string
}

const maxBuildTakers = 1024

// takes records that role's load takes the build of key. The build its last load took, when another, is dropped
// if Renew carried it over and no role's last load took it: no load will take it up any more. At thousands of
// tables a schema is tens of megabytes, which the garbage collector would otherwise mark while its successor is
// built.
func (e *Engine) takes(role string, searchPath []string, key string) {
	path := strings.Join(searchPath, ",")
	t := &e.takers
	t.mu.Lock()
	if len(t.last) >= maxBuildTakers {
		clear(t.last)
	}
	prev, had := t.last[[2]string{role, path}]
	t.last[[2]string{role, path}] = key
	unwanted := had && prev != key
	if unwanted {
		for taker, k := range t.last {
			if taker[1] == path && k == prev {
				unwanted = false // another role's last load took it: that role may take it up again
				break
			}
		}
	}
	t.mu.Unlock()
	if unwanted {
		e.compiled.forget(e.builds.Drop(prev, searchPath))
	}
}

// schemaList is the catalog query's parameter for a search path: its schemas, or NULL (the session's).
func schemaList(searchPath []string) any {
	if searchPath == nil {
		return nil
	}
	list := make([]*string, len(searchPath))
	for i := range searchPath {
		list[i] = &searchPath[i]
	}
	return list
}

// oidList is a catalog query's parameter of oids (relations, types), or NULL for nil.
func oidList(oids []uint32) any {
	if oids == nil {
		return nil
	}
	list := make([]*string, len(oids))
	for i, oid := range oids {
		text := strconv.FormatUint(uint64(oid), 10)
		list[i] = &text
	}
	return list
}

// roleSchema is what requests of a role with schema run with: the role's own statement_timeout setting
// (own, "" when it has none) or else the engine's, the budget that follows from it, and the prelude's
// arguments with the quoted search path.
func (e *Engine) roleSchema(role string, schema *gqlschema.Schema, own, searchPath string) *roleSchema {
	rs := &roleSchema{schema: schema, timeout: own}
	switch {
	case own != "":
	case e.opts.StatementTimeout < 0:
		rs.timeout = "0"
	default:
		rs.timeout = strconv.FormatInt(e.opts.StatementTimeout.Milliseconds(), 10)
	}
	if d, ok := parseTimeout(rs.timeout); ok && d > 0 {
		rs.budget = d + e.opts.AnswerGrace
	}
	rs.prelude = newPreludeArgs(role, searchPath, rs.timeout)
	return rs
}

func quoteSearchPath(schemas []string) string {
	quoted := make([]string, len(schemas))
	for i, s := range schemas {
		quoted[i] = sqlgen.Ident(s)
	}
	return strings.Join(quoted, ", ")
}

// timeoutUnits are the time units of Postgres' settings, as a statement_timeout value may carry them.
var timeoutUnits = map[string]time.Duration{"": time.Millisecond, "us": time.Microsecond, "ms": time.Millisecond,
	"s": time.Second, "min": time.Minute, "h": time.Hour, "d": 24 * time.Hour}

// parseTimeout reads a statement_timeout value as Postgres does (a number, in milliseconds unless a unit
// follows: "8000", "500ms", "8s", "1.5min"); ok is false for a value it cannot read.
func parseTimeout(v string) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	end := strings.IndexFunc(v, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if end < 0 {
		end = len(v)
	}
	n, err := strconv.ParseFloat(v[:end], 64)
	unit, known := timeoutUnits[strings.TrimSpace(v[end:])]
	if err != nil || !known || n < 0 {
		return 0, false
	}
	return time.Duration(n * float64(unit)), true
}
