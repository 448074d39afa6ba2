package apisettings

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/pgreflect/pgreflect/gqlschema"
)

// Route is one route of the management API: the management handler (authapi) serves it behind its token and
// project checks, and writes the answer as JSON with status 200, or the error (a *BadRequest is a 400).
type Route struct {
	Pattern string
	Handle  func(r *http.Request) (any, error)
}

// maxSchemas bounds the exposed schemas a PATCH may name (each one is a catalog read for every role).
const maxSchemas = 64

// Routes are the management API's routes of the API settings, which apply a change to t at once (other
// instances follow within their poll interval):
//
//	GET, PATCH /v1/projects/{ref}/config/graphql           {"version": "1.5"}: the pinned pg_graphql version
//	GET, PATCH /v1/projects/{ref}/postgrest                {"db_schema": "public,api"}: Supabase's shape
//	GET        /v1/projects/{ref}/postgrest/overrides      what is stored over supabase/config.toml
//	DELETE     /v1/projects/{ref}/postgrest/overrides/{field}  forget it: the file's value applies again
func Routes(s *Store, f File, t Target) []Route {
	h := &handler{store: s, file: f, target: t}
	return []Route{
		{"GET /v1/projects/{ref}/config/graphql", h.getGraphQL},
		{"PATCH /v1/projects/{ref}/config/graphql", h.patchGraphQL},
		{"GET /v1/projects/{ref}/postgrest", h.getPostgrest},
		{"PATCH /v1/projects/{ref}/postgrest", h.patchPostgrest},
		{"GET /v1/projects/{ref}/postgrest/overrides", h.getOverrides},
		{"DELETE /v1/projects/{ref}/postgrest/overrides/{field}", h.deleteOverride},
	}
}

type handler struct {
	store  *Store
	file   File
	target Target
}

// graphqlVersionResponse mirrors pg_available_extensions: the version in use and the newest available.
func graphqlVersionResponse(v string) map[string]any {
	available := make([]string, len(gqlschema.Versions))
	for i, a := range gqlschema.Versions {
		available[i] = string(a)
	}
	return map[string]any{"name": "pg_graphql", "installed_version": v, "default_version": string(gqlschema.NewestVersion),
		"available_versions": available}
}

func (h *handler) getGraphQL(r *http.Request) (any, error) {
	st, err := h.store.Get(r.Context())
	if err != nil {
		return nil, err
	}
	return graphqlVersionResponse(st.GraphQLVersion), nil
}

// DecodeObject reads a management request's body, which must be one JSON object with nothing after it, into v.
func DecodeObject(r *http.Request, v any) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 || bytes.TrimSpace(b)[0] != '{' {
		return errNotAnObject()
	}
	if err := json.Unmarshal(b, v); err != nil {
		return errNotAnObject()
	}
	return nil
}

func (h *handler) patchGraphQL(r *http.Request) (any, error) {
	var body struct {
		Version *string `json:"version"`
	}
	if err := DecodeObject(r, &body); err != nil {
		return nil, errNotAnObject()
	}
	if body.Version == nil {
		return nil, badField(versionField, reasonRequired)
	}
	v, err := gqlschema.ParseVersion(*body.Version)
	if err != nil {
		return nil, badField(versionField, err.Error())
	}
	if err := h.store.SetGraphQLVersion(r.Context(), string(v)); err != nil {
		return nil, err
	}
	h.target.SetGraphQLVersion(v)
	return graphqlVersionResponse(string(v)), nil
}

// postgrestResponse answers the fields of Supabase's PostgrestConfigWithJWTSecretResponse that pgreflect has
// (docs/compatibility.md: max_rows, db_pool and jwt_secret are not answered).
func (h *handler) postgrestResponse(st Stored) map[string]any {
	e := h.file.effective("", st)
	return map[string]any{schemasField: strings.Join(e.Schemas, ","), "db_extra_search_path": strings.Join(h.file.ExtraSearchPath, ",")}
}

func (h *handler) getPostgrest(r *http.Request) (any, error) {
	st, err := h.store.Get(r.Context())
	if err != nil {
		return nil, err
	}
	return h.postgrestResponse(st), nil
}

// patchPostgrest changes the exposed schemas (db_schema, comma-separated as Supabase's) and applies them to
// this server at once. The other fields of Supabase's body (db_extra_search_path, max_rows, db_pool) are not
// settings of pgreflect's and are ignored, as the Supabase CLI sends them all (docs/compatibility.md).
func (h *handler) patchPostgrest(r *http.Request) (any, error) {
	var body struct {
		DBSchema *string `json:"db_schema"`
	}
	if err := DecodeObject(r, &body); err != nil {
		return nil, errNotAnObject()
	}
	if body.DBSchema == nil {
		return h.getPostgrest(r) // nothing of ours to change
	}
	schemas, err := h.checkSchemas(r.Context(), *body.DBSchema)
	if err != nil {
		return nil, err
	}
	if err := h.store.SetSchemas(r.Context(), schemas); err != nil {
		return nil, err
	}
	st, err := h.store.Get(r.Context())
	if err != nil {
		return nil, err
	}
	h.target.SetSearchPath(h.file.SearchPath(st))
	return h.postgrestResponse(st), nil
}

// checkSchemas splits a comma-separated list and checks that each is a schema of the database.
func (h *handler) checkSchemas(ctx context.Context, list string) ([]string, error) {
	var schemas []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(schemas, s) {
			schemas = append(schemas, s)
		}
	}
	switch {
	case len(schemas) == 0:
		return nil, badField(schemasField, reasonNoSchema)
	case len(schemas) > maxSchemas:
		return nil, badField(schemasField, reasonTooManySchemas(maxSchemas))
	}
	for _, s := range schemas {
		// Postgres cuts longer names to 63 bytes, which would expose another schema than the one named.
		if len(s) > 63 || strings.ContainsRune(s, 0) {
			return nil, badField(schemasField, reasonInvalidSchemaName(s))
		}
	}
	var missing []string
	if err := h.store.db.QueryRow(ctx, `SELECT coalesce(array_agg(s ORDER BY n), '{}') FROM unnest($1::text[]) WITH ORDINALITY AS u(s, n)
		WHERE NOT EXISTS (SELECT FROM pg_namespace WHERE nspname = s)`, schemas).Scan(&missing); err != nil {
		return nil, fmt.Errorf("check the exposed schemas: %w", err)
	}
	if len(missing) > 0 {
		return nil, badField(schemasField, reasonNoSuchSchemas(missing))
	}
	return schemas, nil
}

// Override is a setting stored over supabase/config.toml's, as the console shows it: the API settings' here, and
// the auth settings' (GET .../config/auth/overrides, internal/authapi).
type Override struct {
	Field string `json:"field"`
	// FileKey names the setting in supabase/config.toml; "" when the file has no such setting.
	FileKey string `json:"file_key"`
	Stored  any    `json:"stored"`
	File    any    `json:"file"`
}

// schemasOverride is the stored exposed schemas when they differ from the file's.
func schemasOverride(f File, st Stored) (Override, bool) {
	if st.Schemas == nil || slices.Equal(st.Schemas, f.Schemas) {
		return Override{}, false
	}
	return Override{Field: schemasField, FileKey: cmp.Or(f.SchemasKey, "[api] schemas"), Stored: strings.Join(st.Schemas, ","),
		File: strings.Join(f.Schemas, ",")}, true
}

func (h *handler) getOverrides(r *http.Request) (any, error) {
	st, err := h.store.Get(r.Context())
	if err != nil {
		return nil, err
	}
	list := []Override{}
	if o, ok := schemasOverride(h.file, st); ok {
		list = append(list, o)
	}
	return map[string]any{"overrides": list}, nil
}

// deleteOverride forgets the stored exposed schemas, so that the file's apply again; the answer is the new
// configuration, as PATCH's.
func (h *handler) deleteOverride(r *http.Request) (any, error) {
	if field := r.PathValue("field"); field != schemasField {
		return nil, badField(field, reasonNotStored)
	}
	if err := h.store.SetSchemas(r.Context(), nil); err != nil {
		return nil, err
	}
	h.target.SetSearchPath(h.file.SearchPath(Stored{}))
	return h.postgrestResponse(Stored{}), nil
}
