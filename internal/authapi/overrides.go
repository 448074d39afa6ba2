package authapi

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"

	"github.com/pgreflect/pgreflect/internal/apisettings"
)

// storedOverrides lists the settings stored through the management API (the console's pages, the Supabase
// CLI) whose values differ from the configuration the server started with, supabase/config.toml: the stored
// value wins until it is reset (issue 22: a client ID set on the console went on beating the file's without a
// word). FileKey is "" for a field the file has no setting for; a secret shows as its hash, as GET
// .../config/auth shows it.
func (s *Service) storedOverrides(ctx context.Context) ([]apisettings.Override, error) {
	raw, _, err := s.store.Settings(ctx)
	if err != nil {
		return nil, err
	}
	ov, err := decodeOverrides(raw)
	if err != nil {
		return nil, err
	}
	effective, err := buildSettings(s.opts.Config, ov)
	if err != nil {
		return nil, err
	}
	file, err := buildSettings(s.opts.Config, nil)
	if err != nil {
		return nil, err
	}
	stored, fromFile := s.authConfigResponse(effective), s.authConfigResponse(file)
	var out []apisettings.Override
	for _, k := range slices.Sorted(maps.Keys(ov)) {
		if !reflect.DeepEqual(stored[k], fromFile[k]) {
			out = append(out, apisettings.Override{Field: k, FileKey: fileKey(k), Stored: stored[k], File: fromFile[k]})
		}
	}
	return out, nil
}

// fileKey is where supabase/config.toml sets the management API's field.
func fileKey(field string) string {
	switch field {
	case "site_url":
		return "[auth] site_url"
	case "uri_allow_list":
		return "[auth] additional_redirect_urls"
	case "jwt_exp":
		return "[auth] jwt_expiry"
	case "disable_signup":
		return "[auth] enable_signup"
	case "refresh_token_rotation_enabled":
		return "[auth] enable_refresh_token_rotation"
	case "security_refresh_token_reuse_interval":
		return "[auth] refresh_token_reuse_interval"
	}
	if name, f, ok := splitProviderField(field); ok && f != "additional_client_ids" {
		return fmt.Sprintf("[auth.external.%s] %s", name, f)
	}
	return ""
}

// warnStoredOverrides names, when the server starts, each stored setting that beats supabase/config.toml.
func (s *Service) warnStoredOverrides(ctx context.Context) error {
	shadowing, err := s.storedOverrides(ctx)
	if err != nil {
		return err
	}
	for _, o := range shadowing {
		attrs := []any{"setting", o.Field, "config.toml", o.FileKey}
		if _, f, _ := splitProviderField(o.Field); f != "secret" {
			attrs = append(attrs, "stored", o.Stored, "file", o.File)
		}
		s.log.Warn("a value stored through the console or the management API overrides supabase/config.toml until it is reset (console Providers page, or DELETE /v1/projects/<ref>/config/auth/overrides/<setting>)", attrs...)
	}
	return nil
}

// getOverrides answers GET /v1/projects/{ref}/config/auth/overrides: the stored settings that differ from
// supabase/config.toml, for the console to show where each value comes from.
func (s *Service) getOverrides(w http.ResponseWriter, r *http.Request) error {
	list, err := s.storedOverrides(r.Context())
	if err != nil {
		return err
	}
	if list == nil {
		list = []apisettings.Override{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"overrides": list})
	return nil
}

// deleteOverride answers DELETE /v1/projects/{ref}/config/auth/overrides/{field}: the stored value is
// forgotten, so the field takes supabase/config.toml's value again; the answer is the new configuration, as
// PATCH's. Deleting a field that is not stored changes nothing.
func (s *Service) deleteOverride(w http.ResponseWriter, r *http.Request) error {
	field := r.PathValue("field")
	// validateField tells a field it knows whatever the value; null is no valid value of any.
	if _, known, _ := validateField(field, json.RawMessage(`null`)); !known {
		return &fieldError{Field: field, Reason: "not a setting of this API"}
	}
	return s.changeOverrides(w, r, func(ov overrides) error {
		delete(ov, field)
		return nil
	})
}
