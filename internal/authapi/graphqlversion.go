package authapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/pgreflect/pgreflect/gqlschema"
)

// PinGraphQLVersion settles the pg_graphql behaviour version a starting server follows and stores it:
// explicit (config.toml [graphql] version) when given, else the stored one, else the newest, which is then
// stored so that a later pgreflect with a newer version keeps the project where it was.
func (s *Service) PinGraphQLVersion(ctx context.Context, explicit string) (gqlschema.Version, error) {
	stored, err := s.store.GraphQLVersion(ctx)
	if err != nil {
		return "", err
	}
	want := explicit
	if want == "" {
		want = stored
	}
	if want == "" {
		want = string(gqlschema.NewestVersion)
	}
	v, err := gqlschema.ParseVersion(want)
	if err != nil {
		return "", err
	}
	if string(v) != stored {
		if err := s.store.SetGraphQLVersion(ctx, string(v)); err != nil {
			return "", err
		}
	}
	return v, nil
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

func (s *Service) getGraphQLConfig(w http.ResponseWriter, r *http.Request) error {
	v, err := s.store.GraphQLVersion(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, graphqlVersionResponse(v))
	return nil
}

// patchGraphQLConfig changes the pinned version ({"version": "1.5"}) and applies it to this server at once;
// other instances follow through FollowGraphQLVersion.
func (s *Service) patchGraphQLConfig(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Version *string `json:"version"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		return &fieldError{Reason: "Request body must be a JSON object"}
	}
	if body.Version == nil {
		return &fieldError{Field: "version", Reason: "required"}
	}
	v, err := gqlschema.ParseVersion(*body.Version)
	if err != nil {
		return &fieldError{Field: "version", Reason: err.Error()}
	}
	if err := s.store.SetGraphQLVersion(r.Context(), string(v)); err != nil {
		return fmt.Errorf("store the GraphQL version: %w", err)
	}
	if s.opts.OnGraphQLVersion != nil {
		s.opts.OnGraphQLVersion(v)
	}
	writeJSON(w, http.StatusOK, graphqlVersionResponse(string(v)))
	return nil
}

// FollowGraphQLVersion applies, through OnGraphQLVersion, the version another instance of the project pins
// through the management API: it reads the pinned version every interval until ctx ends. current is the
// version in effect when it starts. Reading a row is used rather than NOTIFY, which a transaction pooler or a
// standby does not deliver.
func (s *Service) FollowGraphQLVersion(ctx context.Context, current gqlschema.Version, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		stored, err := s.store.GraphQLVersion(ctx)
		if err != nil || stored == "" || stored == string(current) {
			if err != nil && ctx.Err() == nil {
				s.log.Warn("read the pinned GraphQL version", "error", err)
			}
			continue
		}
		v, err := gqlschema.ParseVersion(stored)
		if err != nil {
			s.log.Warn("the pinned GraphQL version is not one this build knows; keeping "+string(current), "stored", stored)
			current = gqlschema.Version(stored) // warn once per change
			continue
		}
		current = v
		if s.opts.OnGraphQLVersion != nil {
			s.opts.OnGraphQLVersion(v)
		}
	}
}
