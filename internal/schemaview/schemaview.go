// Package schemaview answers "why can't this role see that field?": the JSON behind the console's Schema
// pages. For the relations and functions of the API's schemas it reads row level security, policies, grants
// and EXECUTE per API role, and puts beside them what each role's generated schema makes of them (collection,
// byPk, mutations, fields, root or computed fields), with the usual mistakes flagged; it also serves each role's
// SDL with the database object behind each type, the lint findings, and the drift between two roles or against
// the snapshots `pgreflect check` uses.
//
// Every answer is read fresh from the database through the API's login role, which may switch to the API
// roles; nothing is cached, and the pool it is given bounds how many run at once.
package schemaview

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/internal/apisettings"
	"github.com/pgreflect/pgreflect/internal/lint"
	"github.com/pgreflect/pgreflect/internal/schemadiff"
	"github.com/pgreflect/pgreflect/internal/sdl"
)

//go:embed access.sql
var accessQuery string

// DefaultRoles are the API roles the pages show.
var DefaultRoles = []string{"anon", "authenticated", "service_role"}

// Options say where the schema comes from.
type Options struct {
	// Pool connects as a role that may switch to the API roles (the API's login role, authenticator).
	Pool *pgxpool.Pool
	// SearchPath is the API's search path.
	SearchPath []string
	// Settings, when set, are what the configuration says of the API settings: exposed schemas stored through
	// the management API then replace its schemas, read for each page as the API applies them.
	Settings *apisettings.File
	// Roles are the roles shown; nil: DefaultRoles.
	Roles []string
	// Version is the pg_graphql behaviour the API follows; nil: the version the database pinned, else the
	// newest.
	Version func() gqlschema.Version
	// Snapshots is the directory of ROLE.graphql snapshots that `pgreflect check --snapshot` compares with;
	// empty: the Drift page compares roles only.
	Snapshots string
}

// View serves the Schema pages' JSON: access, graphql?role=R, lint, drift?from=R&to=R (or drift?snapshot=1).
type View struct{ o Options }

// New returns the view; it does not touch the database until asked.
func New(o Options) *View {
	if len(o.Roles) == 0 {
		o.Roles = DefaultRoles
	}
	return &View{o: o}
}

var (
	// errBadRequest marks a client's mistake (an unknown role, a missing parameter): 400, not 500.
	errBadRequest = errors.New("bad request")
	// errNoSnapshot: the Drift page was asked for snapshots the server does not have (404).
	errNoSnapshot = errors.New("no snapshot")
)

// ServeHTTP answers the path after the console's api/schema/; the console has checked who asks.
func (v *View) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"message": "method not allowed"})
		return
	}
	ctx := r.Context()
	q := r.URL.Query()
	var body any
	var err error
	switch strings.TrimPrefix(r.URL.Path, "/") {
	case "access":
		body, err = v.Access(ctx)
	case "graphql":
		body, err = v.GraphQL(ctx, q.Get("role"))
	case "lint":
		body, err = v.Lint(ctx)
	case "drift":
		if q.Get("snapshot") != "" {
			body, err = v.SnapshotDrift(ctx)
		} else {
			body, err = v.RoleDrift(ctx, q.Get("from"), q.Get("to"))
		}
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "no such schema page: " + r.URL.Path})
		return
	}
	switch {
	case errors.Is(err, errBadRequest):
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": err.Error()})
	case errors.Is(err, errNoSnapshot):
		writeJSON(w, http.StatusNotFound, map[string]string{"message": err.Error()})
	case err != nil:
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"message": "reading the schema failed: " + err.Error()})
	default:
		writeJSON(w, http.StatusOK, body)
	}
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body) // the client may have gone; nothing to tell it
}

// version is the configured one, else the one the database pinned (when the role may read it), else the
// newest: the order `pgreflect schema` follows.
func (v *View) version(ctx context.Context, conn *pgx.Conn) gqlschema.Version {
	if v.o.Version != nil {
		return v.o.Version()
	}
	if st, err := apisettings.Read(ctx, conn); err == nil && st.GraphQLVersion != "" {
		if version, err := gqlschema.ParseVersion(st.GraphQLVersion); err == nil {
			return version
		}
	}
	return gqlschema.NewestVersion
}

func (v *View) checkRole(role string) error {
	if !slices.Contains(v.o.Roles, role) {
		return fmt.Errorf("%w: role %q is not one of %s", errBadRequest, role, strings.Join(v.o.Roles, ", "))
	}
	return nil
}

// searchPath is the API's: SearchPath, or with Settings the one the stored settings make.
func (v *View) searchPath(ctx context.Context, conn *pgx.Conn) []string {
	if v.o.Settings == nil {
		return v.o.SearchPath
	}
	st, err := apisettings.Read(ctx, conn)
	if err != nil {
		st = apisettings.Stored{} // a database set up by an older pgreflect stores nothing
	}
	return v.o.Settings.SearchPath(st)
}

// load generates the schema of each role, as the API would, on one connection, and gives the search path.
func (v *View) load(ctx context.Context, roles ...string) (map[string]schemadiff.Side, []string, error) {
	conn, err := v.o.Pool.Acquire(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("connect: %w", err)
	}
	defer conn.Release()
	out := make(map[string]schemadiff.Side, len(roles))
	version := v.version(ctx, conn.Conn())
	path := v.searchPath(ctx, conn.Conn())
	for _, role := range roles {
		side, err := schemadiff.LoadDatabase(ctx, conn.Conn(), role, path, version)
		if err != nil {
			return nil, nil, err
		}
		out[role] = side
	}
	return out, path, nil
}

// Schema is one role's SDL, with the database object behind each type and root field.
type Schema struct {
	Role string `json:"role"`
	SDL  string `json:"sdl"`
	// Sources name the object behind a type (Film, FilmConnection: table public.film) or a root field
	// (Query.search: function public.search(text)).
	Sources map[string]Source `json:"sources"`
}

// Source is a database object: its kind (table, view, materialized view, foreign table, type, function) and
// its qualified name, which the Access page lists under the same name.
type Source struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// GraphQL is role's schema as its introspection shows it.
func (v *View) GraphQL(ctx context.Context, role string) (*Schema, error) {
	if err := v.checkRole(role); err != nil {
		return nil, err
	}
	sides, _, err := v.load(ctx, role)
	if err != nil {
		return nil, err
	}
	side := sides[role]
	out := &Schema{Role: role, SDL: string(sdl.Print(side.Schema)), Sources: map[string]Source{}}
	for name, t := range side.Generated.Types {
		if side.Schema.Types[name] == nil {
			continue // hidden from introspection
		}
		switch {
		case t.Table != nil:
			out.Sources[name] = relationSource(t.Table)
		case t.Enum != nil:
			out.Sources[name] = Source{Kind: "type", Name: t.Enum.SchemaName + "." + t.Enum.Name}
		}
		for _, f := range t.Fields {
			if f.Function != nil && (t.Role == gqlschema.RoleQuery || t.Role == gqlschema.RoleMutation || t.Table != nil) {
				fn := f.Function.SQL
				out.Sources[name+"."+f.Name] = Source{Kind: "function", Name: fn.Schema.Name + "." + fn.Name}
			}
		}
	}
	return out, nil
}

func relationSource(t *gqlschema.Table) Source {
	kinds := map[string]string{"v": "view", "m": "materialized view", "f": "foreign table"}
	kind := kinds[t.Rel.Kind]
	if kind == "" {
		kind = "table"
	}
	return Source{Kind: kind, Name: t.Rel.Schema.Name + "." + t.Rel.Name}
}

// Findings are the lint findings of every role.
type Findings struct {
	Errors   int            `json:"errors"`
	Findings []lint.Finding `json:"findings"`
}

// Lint is what `pgreflect lint` reports for the roles.
func (v *View) Lint(ctx context.Context) (*Findings, error) {
	sides, _, err := v.load(ctx, v.o.Roles...)
	if err != nil {
		return nil, err
	}
	var perRole [][]lint.Finding
	for _, role := range v.o.Roles {
		perRole = append(perRole, lint.Schema(sides[role].Generated))
	}
	findings := lint.Merge(perRole...)
	if findings == nil {
		findings = []lint.Finding{}
	}
	return &Findings{Errors: lint.Errors(findings), Findings: findings}, nil
}

// Drift is a comparison of two schemas with `pgreflect diff`'s levels and reasons.
type Drift struct {
	From    string              `json:"from"`
	To      string              `json:"to"`
	Changes []schemadiff.Change `json:"changes"`
}

// RoleDrift is what role to sees that role from does not, and the reverse: the changes from from's schema to
// to's.
func (v *View) RoleDrift(ctx context.Context, from, to string) (*Drift, error) {
	if err := v.checkRole(from); err != nil {
		return nil, err
	}
	if err := v.checkRole(to); err != nil {
		return nil, err
	}
	sides, _, err := v.load(ctx, from, to)
	if err != nil {
		return nil, err
	}
	changes := schemadiff.Compare(sides[from], sides[to])
	if changes == nil {
		changes = []schemadiff.Change{}
	}
	return &Drift{From: from, To: to, Changes: changes}, nil
}

// SnapshotDrift compares each role's schema with its snapshot, as `pgreflect check --snapshot` does.
func (v *View) SnapshotDrift(ctx context.Context) (*Drift, error) {
	if v.o.Snapshots == "" {
		return nil, fmt.Errorf("%w: this server has no snapshot directory (start or serve --snapshots DIR)", errNoSnapshot)
	}
	sides, _, err := v.load(ctx, v.o.Roles...)
	if err != nil {
		return nil, err
	}
	changes := []schemadiff.Change{}
	for _, role := range v.o.Roles {
		path := schemadiff.SnapshotFile(v.o.Snapshots, role)
		src, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: no snapshot of %s in %s (pgreflect check --snapshot %[3]s --update writes them)",
				errNoSnapshot, role, v.o.Snapshots)
		}
		if err != nil {
			return nil, fmt.Errorf("snapshot of %s: %w", role, err)
		}
		snapshot, err := sdl.Load(path, src)
		if err != nil {
			return nil, fmt.Errorf("snapshot of %s: %w", role, err)
		}
		for _, c := range schemadiff.Compare(schemadiff.Side{Schema: snapshot}, sides[role]) {
			c.Role = role
			changes = append(changes, c)
		}
	}
	schemadiff.Sort(changes)
	return &Drift{From: v.o.Snapshots, To: "database", Changes: changes}, nil
}
