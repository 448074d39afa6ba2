package apisettings

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/internal/config"
)

// File is what the server's configuration says (supabase/config.toml, its environment overrides, the flags).
type File struct {
	// GraphQLVersion is [graphql] version; "": the stored one, else the newest.
	GraphQLVersion string
	// Schemas are [api] schemas (or --schemas, which then replaces extra_search_path too).
	Schemas []string
	// ExtraSearchPath is [api] extra_search_path: on the search path after the exposed schemas, stored or not.
	ExtraSearchPath []string
	// SchemasKey names where Schemas come from, for the messages that say a stored value beats them.
	SchemasKey string
}

// Effective are the settings a server runs with.
type Effective struct {
	GraphQLVersion gqlschema.Version
	// Schemas are the exposed schemas: the stored ones when there are, else the file's.
	Schemas []string
	// SchemasStored says that Schemas are the stored ones.
	SchemasStored bool
	extra         []string
}

// SearchPath is the API's search path: the exposed schemas, then the extra ones, without repeats (as
// config.toml's [api] makes it).
func (e Effective) SearchPath() []string {
	return config.API{Schemas: e.Schemas, ExtraSearchPath: e.extra}.SearchPath()
}

// SearchPath is the API's search path with the stored settings st: the stored exposed schemas, else the file's,
// then the extra ones.
func (f File) SearchPath(st Stored) []string { return f.effective("", st).SearchPath() }

// effective combines the stored settings with the file's (the version is settled apart: see Settle).
func (f File) effective(version gqlschema.Version, st Stored) Effective {
	e := Effective{GraphQLVersion: version, Schemas: f.Schemas, extra: f.ExtraSearchPath}
	if st.Schemas != nil {
		e.Schemas, e.SchemasStored = st.Schemas, true
	}
	return e
}

// Target is the server the settings apply to (httpapi.Server). A setter given the value the server has does
// nothing: Follow applies what is stored at every read.
type Target interface {
	SetGraphQLVersion(gqlschema.Version)
	SetSearchPath([]string)
}

// Settle reads the stored settings when a server starts and settles the pg_graphql version it follows: the
// file's when given, else the stored one, else the newest, which is then stored so that a later pgreflect with
// a newer version keeps the project where it was. A stored value that beats the file's is logged by name.
func Settle(ctx context.Context, s *Store, f File, log *slog.Logger) (Effective, error) {
	st, err := s.Get(ctx)
	if err != nil {
		return Effective{}, err
	}
	want := cmp.Or(f.GraphQLVersion, st.GraphQLVersion, string(gqlschema.NewestVersion))
	v, err := gqlschema.ParseVersion(want)
	if err != nil {
		return Effective{}, fmt.Errorf("[graphql] version: %w", err)
	}
	if string(v) != st.GraphQLVersion {
		err := s.SetGraphQLVersion(ctx, string(v))
		var pgErr *pgconn.PgError
		switch {
		case errors.As(err, &pgErr) && pgErr.Code == "42501":
			// The role was given schema auth after the setup, which grants the writes to auth's owner: serving
			// is still right, only the pin is not kept.
			log.Warn("the pinned GraphQL version cannot be stored: run `pgreflect setup` again, which grants the owner of schema auth the writes", "graphql_version", v, "error", err)
		case err != nil:
			return Effective{}, err
		}
	}
	e := f.effective(v, st)
	if o, ok := schemasOverride(f, st); ok {
		log.Warn("a value stored through the console or the management API overrides supabase/config.toml until it is reset (console Settings > API, or DELETE /v1/projects/<ref>/postgrest/overrides/db_schema)",
			"setting", o.Field, "config.toml", o.FileKey, "stored", o.Stored, "file", o.File)
	}
	return e, nil
}

// FileOnly is the settings of a server without a store (no database URL with rights on them): the file's.
func FileOnly(f File) (Effective, error) {
	v, err := gqlschema.ParseVersion(cmp.Or(f.GraphQLVersion, string(gqlschema.NewestVersion)))
	if err != nil {
		return Effective{}, fmt.Errorf("[graphql] version: %w", err)
	}
	return f.effective(v, Stored{}), nil
}

// Follow applies to t the settings another instance of the project stores through its management API: it
// reads them every interval until ctx ends. Reading a row is used rather than NOTIFY, which a transaction
// pooler or a standby does not deliver. current is what the server runs with when it starts. What is stored is
// applied at every read, not only when it differs from the last read: this instance's management API applies
// what it stores itself, and two of its requests racing (each stores, then applies) can leave the server on
// the value that lost, which the next read then puts right.
func Follow(ctx context.Context, s *Store, f File, t Target, current Effective, every time.Duration, log *slog.Logger) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	badVersion := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		st, err := s.Get(ctx)
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("read the API settings", "error", err)
			}
			continue
		}
		if st.GraphQLVersion != "" && st.GraphQLVersion != badVersion {
			if v, err := gqlschema.ParseVersion(st.GraphQLVersion); err != nil {
				log.Warn("the pinned GraphQL version is not one this build knows; keeping "+string(current.GraphQLVersion), "stored", st.GraphQLVersion)
				badVersion = st.GraphQLVersion // warn once per change
			} else {
				current.GraphQLVersion = v
			}
		}
		t.SetGraphQLVersion(current.GraphQLVersion)
		current = f.effective(current.GraphQLVersion, st)
		t.SetSearchPath(current.SearchPath())
	}
}
