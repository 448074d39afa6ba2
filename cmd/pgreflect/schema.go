package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/internal/apisettings"
	"github.com/pgreflect/pgreflect/internal/schemadiff"
	"github.com/pgreflect/pgreflect/internal/sdl"
	"github.com/pgreflect/pgreflect/resolve"
)

// schemaFlags are the flags of the commands that generate a role's schema from a database.
type schemaFlags struct {
	dbURL, schemas, workdir, version string
}

func addSchemaFlags(fs *flag.FlagSet, withDBURL bool) *schemaFlags {
	sf := &schemaFlags{}
	if withDBURL {
		fs.StringVar(&sf.dbURL, "db-url", os.Getenv("PGREFLECT_DATABASE_URL"), "database URL, of a role that may switch to the API roles (env PGREFLECT_DATABASE_URL)")
	}
	fs.StringVar(&sf.schemas, "schemas", "", "comma-separated API search path (overrides [api] schemas and extra_search_path)")
	fs.StringVar(&sf.workdir, "workdir", ".", "project root holding supabase/config.toml")
	fs.StringVar(&sf.version, "graphql-version", "", "pg_graphql behaviour version (default: [graphql] version, else the version the database pinned, else the newest)")
	return sf
}

// dbSchemas generates schemas of one database, one role at a time.
type dbSchemas struct {
	conn       *pgx.Conn
	searchPath []string
	version    gqlschema.Version
}

// open connects and settles the search path and the version the schemas are generated with.
func (sf *schemaFlags) open(ctx context.Context, url string, stderr io.Writer) (*dbSchemas, error) {
	cfg, searchPath, err := loadConfig(sf.workdir, sf.schemas, stderr)
	if err != nil {
		return nil, err
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", redactURL(url), err)
	}
	want := sf.version
	if want == "" {
		want = cfg.GraphQL.Version
	}
	if want == "" {
		// A database set up by an older pgreflect has no pinned version to read; the newest is then a guess
		// worth saying.
		st, err := apisettings.Read(ctx, conn)
		if want = st.GraphQLVersion; err != nil {
			fmt.Fprintf(stderr, "warning: %v; generating pg_graphql %s's schema (give --graphql-version)\n", err, gqlschema.NewestVersion)
			want = ""
		}
	}
	version := gqlschema.NewestVersion
	if want != "" {
		if version, err = gqlschema.ParseVersion(want); err != nil {
			conn.Close(ctx)
			return nil, err
		}
	}
	return &dbSchemas{conn: conn, searchPath: searchPath, version: version}, nil
}

// schemaCommandTimeout bounds lint, check and diff from start to end: connecting, and generating each role's
// schema, which takes seconds on a large catalog. A CI job waiting on an unanswering database should fail, not hang.
const schemaCommandTimeout = 2 * time.Minute

// openInput is open for the commands that tell bad input from a finding (lint, check, diff): a database that
// cannot be opened or read is bad input, exit status 2.
func (sf *schemaFlags) openInput(ctx context.Context, url string, stderr io.Writer) (*dbSchemas, error) {
	db, err := sf.open(ctx, url, stderr)
	if err != nil {
		return nil, &inputError{err}
	}
	return db, nil
}

// openDatabase opens the database of --db-url within schemaCommandTimeout, the start lint and check share;
// done closes it and ends the context.
func (sf *schemaFlags) openDatabase(stderr io.Writer) (ctx context.Context, db *dbSchemas, done func(), err error) {
	ctx, cancel := context.WithTimeout(context.Background(), schemaCommandTimeout)
	db, err = sf.openInput(ctx, sf.dbURL, stderr)
	if err != nil {
		cancel()
		return nil, nil, nil, err
	}
	return ctx, db, func() { db.close(); cancel() }, nil
}

func (d *dbSchemas) load(ctx context.Context, role string) (schemadiff.Side, error) {
	return schemadiff.LoadDatabase(ctx, d.conn, role, d.searchPath, d.version)
}

func (d *dbSchemas) close() { d.conn.Close(context.Background()) }

// redactURL hides a URL's password in messages.
func redactURL(s string) string {
	if cfg, err := pgx.ParseConfig(s); err == nil && cfg.Password != "" {
		return strings.Replace(s, ":"+cfg.Password+"@", ":***@", 1)
	}
	return s
}

func runSchema(args []string, stdout, stderr io.Writer) error {
	var role, format string
	fs := newFlagSet("schema", stderr)
	sf := addSchemaFlags(fs, true)
	fs.StringVar(&role, "role", "anon", "the database role whose schema to print: anon, authenticated, service_role or another")
	fs.StringVar(&format, "format", "sdl", "sdl, or json (the introspection result, for graphql-codegen and similar tools)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: pgreflect schema --db-url URL [--role ROLE] [--schemas a,b] [--format sdl|json]")
		fmt.Fprintln(fs.Output(), "Prints the GraphQL schema the role sees, deterministically, ready to commit as a snapshot.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if format != "sdl" && format != "json" {
		return fmt.Errorf("unknown format %q: use sdl or json", format)
	}
	if sf.dbURL == "" {
		return errors.New("--db-url is required (or PGREFLECT_DATABASE_URL)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := sf.open(ctx, sf.dbURL, stderr)
	if err != nil {
		return err
	}
	defer db.close()
	side, err := db.load(ctx, role)
	if err != nil {
		return err
	}
	if format == "sdl" {
		_, err = stdout.Write(sdl.Print(side.Schema))
		return err
	}
	body, err := resolve.Introspect(ctx, side.Generated)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", body)
	return err
}
