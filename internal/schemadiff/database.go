package schemadiff

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/internal/sdl"
	"github.com/pgreflect/pgreflect/reflect"
	"github.com/pgreflect/pgreflect/sqlgen"
)

// LoadDatabase generates the schema role sees through searchPath in the database conn is connected to, as
// the server would for that role's requests. The role switch is local to a transaction that is rolled back.
func LoadDatabase(ctx context.Context, conn *pgx.Conn, role string, searchPath []string, version gqlschema.Version) (Side, error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return Side{}, fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // only read; nothing to keep
	quoted := make([]string, len(searchPath))
	for i, s := range searchPath {
		quoted[i] = sqlgen.Ident(s)
	}
	if _, err := tx.Exec(ctx, "select set_config('role', $1, true), set_config('search_path', $2, true)",
		role, strings.Join(quoted, ", ")); err != nil {
		return Side{}, fmt.Errorf("switch to role %s: %w", role, err)
	}
	cat, err := reflect.Load(ctx, tx)
	if err != nil {
		return Side{}, fmt.Errorf("role %s: %w", role, err)
	}
	gen := gqlschema.Build(cat, gqlschema.Options{Version: version})
	schema, err := sdl.FromSchema(ctx, gen)
	if err != nil {
		return Side{}, fmt.Errorf("role %s: %w", role, err)
	}
	return Side{Schema: schema, Generated: gen}, nil
}
