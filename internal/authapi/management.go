package authapi

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/apisettings"
	"github.com/pgreflect/pgreflect/internal/dberr"
	"github.com/pgreflect/pgreflect/internal/obs"
)

// maxJWTExpiry is the longest access-token lifetime the management API accepts (one week).
const maxJWTExpiry = 604800

// ManagementHandler serves GET and PATCH /v1/projects/{ref}/config/auth, pgreflect's own GET
// /config/auth/overrides and DELETE /config/auth/overrides/{field}, and the engine's routes (the API settings:
// internal/apisettings) behind the same token and project checks (full paths; mount at /v1/).
func (s *Service) ManagementHandler(engine ...apisettings.Route) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/projects/{ref}/config/auth", s.management(s.getAuthConfig))
	mux.HandleFunc("PATCH /v1/projects/{ref}/config/auth", s.management(s.patchAuthConfig))
	mux.HandleFunc("GET /v1/projects/{ref}/config/auth/overrides", s.management(s.getOverrides))
	mux.HandleFunc("DELETE /v1/projects/{ref}/config/auth/overrides/{field}", s.management(s.deleteOverride))
	mux.HandleFunc("GET /v1/projects/{ref}/graphql/documents", s.management(s.getTrustedDocuments))
	mux.HandleFunc("POST /v1/projects/{ref}/graphql/documents", s.management(s.postTrustedDocuments))
	for _, route := range engine {
		mux.HandleFunc(route.Pattern, s.management(func(w http.ResponseWriter, r *http.Request) error {
			body, err := route.Handle(r)
			if err == nil {
				writeJSON(w, http.StatusOK, body)
			}
			return err
		}))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
	})
	return mux
}

// management checks the management token (401) and then the project ref (404).
func (s *Service) management(h func(w http.ResponseWriter, r *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r, _ = obs.Ensure(w, r)
		if token, ok := auth.BearerToken(r); !ok || !s.mgmt.Matches(token) {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Unauthorized"})
			return
		}
		if r.PathValue("ref") != s.opts.ProjectRef {
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "Project not found"})
			return
		}
		// The body is read whole here, so that one too large is told as such (413) rather than as the JSON it
		// stopped being where it was cut.
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		if err != nil {
			if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
				writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"message": fmt.Sprintf("Request body too large: at most %d bytes", maxBodyBytes)})
				return
			}
			writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Request body could not be read"})
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err := h(w, r); err != nil {
			var fe *fieldError
			if errors.As(err, &fe) {
				writeJSON(w, http.StatusBadRequest, map[string]string{"message": fe.Error()})
				return
			}
			var br *apisettings.BadRequest
			if errors.As(err, &br) {
				writeJSON(w, http.StatusBadRequest, map[string]string{"message": br.Error()})
				return
			}
			if dberr.RefusedText(err) {
				writeJSON(w, http.StatusBadRequest, map[string]string{"message": msgUnstorableText})
				return
			}
			obs.Logger(r.Context(), s.log).ErrorContext(r.Context(), "management request failed", "error", err)
			status, msg := http.StatusInternalServerError, "Internal Server Error"
			if dberr.Unavailable(err) {
				status, msg = http.StatusServiceUnavailable, "Database unavailable"
			}
			writeJSON(w, status, map[string]string{"message": fmt.Sprintf("%s (request id %s)", msg, obs.RequestID(r.Context()))})
		}
	}
}

// fieldError is a 400 naming the offending field.
type fieldError struct {
	Field  string
	Reason string
}

func (e *fieldError) Error() string {
	if e.Field == "" {
		return e.Reason
	}
	return fmt.Sprintf("Invalid value for %s: %s", e.Field, e.Reason)
}

func (s *Service) getAuthConfig(w http.ResponseWriter, r *http.Request) error {
	st, err := s.settings(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.authConfigResponse(st))
	return nil
}

// hashSecret is how secrets appear in responses: hex HMAC-SHA256 keyed by the project ref, which the Supabase
// CLI compares against its own hash of the local value.
func (s *Service) hashSecret(secret string) any {
	if secret == "" {
		return nil
	}
	m := hmac.New(sha256.New, []byte(s.opts.ProjectRef))
	m.Write([]byte(secret))
	return hex.EncodeToString(m.Sum(nil))
}

func (s *Service) authConfigResponse(st *settings) map[string]any {
	out := map[string]any{
		"site_url":                              st.SiteURL,
		"uri_allow_list":                        strings.Join(st.AllowList, ","),
		"jwt_exp":                               st.JWTExpiry,
		"disable_signup":                        !st.EnableSignup,
		"refresh_token_rotation_enabled":        st.Rotation,
		"security_refresh_token_reuse_interval": st.ReuseInterval,
	}
	names := map[string]bool{}
	for _, n := range settingsProviders {
		if n != "email" && n != "phone" && n != "anonymous_users" {
			names[n] = true
		}
	}
	for n := range st.Providers {
		names[n] = true
	}
	for n := range names {
		p := st.Providers[n]
		prefix := "external_" + n + "_"
		// enabled as /auth/v1/settings says it: a provider that cannot sign in is not (a config.toml may
		// enable one; the management API refuses to)
		out[prefix+"enabled"] = p.Enabled && canSignIn(n, p)
		out[prefix+"url"] = nullable(p.URL)
		out[prefix+"client_id"] = nullable(p.ClientID)
		out[prefix+"secret"] = s.hashSecret(p.Secret)
		out[prefix+"skip_nonce_check"] = p.SkipNonceCheck
		out[prefix+"email_optional"] = p.EmailOptional
		out[prefix+"additional_client_ids"] = nullable(p.AdditionalClientIDs)
	}
	return out
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// patchAuthConfig validates the fields it knows, stores them in Postgres, and answers with the new config.
// Unknown fields are ignored (the Supabase CLI sends the whole config); null means "leave unchanged".
func (s *Service) patchAuthConfig(w http.ResponseWriter, r *http.Request) error {
	var body map[string]json.RawMessage
	if err := apisettings.DecodeObject(r, &body); err != nil || body == nil {
		return &fieldError{Reason: "Request body must be a JSON object"}
	}
	changes := overrides{}
	for _, k := range slices.Sorted(maps.Keys(body)) {
		raw := body[k]
		if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			continue
		}
		v, known, err := validateField(k, raw)
		if err != nil {
			return err
		}
		if known {
			changes[k] = v
		}
	}
	return s.changeOverrides(w, r, func(ov overrides) error {
		for k, v := range changes {
			ov[k] = v
		}
		st, err := buildSettings(s.opts.Config, ov)
		if err != nil {
			return &fieldError{Reason: err.Error()}
		}
		for k := range changes {
			name, _, ok := splitProviderField(k)
			p := st.Providers[name]
			if !ok || !p.Enabled {
				continue
			}
			if !canSignIn(name, p) {
				return &fieldError{Field: "external_" + name + "_enabled", Reason: fmt.Sprintf(
					"%s cannot sign anyone in: pgreflect signs in with OpenID Connect providers only, Google or one whose issuer URL is given as external_%s_url (Keycloak, Azure, GitLab, any OpenID provider); plain OAuth 2.0 sign-in (GitHub, Discord and the like) is not implemented", name, name)}
			}
			if len(p.clientIDs()) == 0 {
				return &fieldError{Field: "external_" + name + "_client_id", Reason: "required when the provider is enabled"}
			}
		}
		return nil
	})
}

// changeOverrides applies change to the stored overrides under the store's row lock (an error changes
// nothing) and answers with the new effective configuration.
func (s *Service) changeOverrides(w http.ResponseWriter, r *http.Request, change func(overrides) error) error {
	err := s.store.UpdateSettings(r.Context(), func(current json.RawMessage) (json.RawMessage, error) {
		ov, err := decodeOverrides(current)
		if err != nil {
			return nil, err
		}
		if err := change(ov); err != nil {
			return nil, err
		}
		return json.Marshal(ov)
	})
	if err != nil {
		return err
	}
	st, err := s.settings(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.authConfigResponse(st))
	return nil
}

// validateField checks one PATCH field and returns its normalised JSON. known is false for fields this
// service does not configure.
func validateField(name string, raw json.RawMessage) (json.RawMessage, bool, error) {
	bad := func(reason string) (json.RawMessage, bool, error) {
		return nil, true, &fieldError{Field: name, Reason: reason}
	}
	asBool := func() (json.RawMessage, bool, error) {
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return bad("must be a boolean")
		}
		out, _ := json.Marshal(b)
		return out, true, nil
	}
	asString := func(check func(string) string) (json.RawMessage, bool, error) {
		var v string
		if json.Unmarshal(raw, &v) != nil {
			return bad("must be a string")
		}
		if check != nil {
			if reason := check(v); reason != "" {
				return bad(reason)
			}
		}
		out, _ := json.Marshal(v)
		return out, true, nil
	}
	switch name {
	case "site_url":
		return asString(func(v string) string {
			u, err := url.Parse(v)
			if strings.Contains(v, ",") || err != nil || u.Scheme == "" || u.Host == "" {
				return "must be an absolute URL without commas"
			}
			return ""
		})
	case "uri_allow_list":
		return asString(func(v string) string {
			for _, e := range splitList(v) {
				if _, err := compileAllowGlob(e); err != nil {
					return fmt.Sprintf("entry %q is not a valid pattern", e)
				}
			}
			return ""
		})
	case "jwt_exp", "security_refresh_token_reuse_interval":
		var n json.Number
		if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] == '"' || json.Unmarshal(t, &n) != nil {
			return bad("must be an integer")
		}
		i, err := n.Int64()
		limit := int64(maxJWTExpiry)
		if name != "jwt_exp" {
			limit = 1 << 31
		}
		if err != nil || i < 0 || i > limit {
			return bad(fmt.Sprintf("must be an integer between 0 and %d", limit))
		}
		out, _ := json.Marshal(i)
		return out, true, nil
	case "disable_signup", "refresh_token_rotation_enabled":
		return asBool()
	}
	if _, field, ok := splitProviderField(name); ok {
		switch field {
		case "enabled", "skip_nonce_check", "email_optional":
			return asBool()
		case "client_id", "additional_client_ids":
			return asString(func(v string) string {
				for _, id := range strings.Split(v, ",") {
					if strings.TrimSpace(id) != id || id == "" && v != "" {
						return "must be a comma-separated list of client IDs without spaces"
					}
				}
				return ""
			})
		case "secret":
			return asString(func(v string) string {
				if strings.TrimSpace(v) != v {
					return "must not start or end with white space"
				}
				return ""
			})
		case "url":
			// The provider's OpenID Connect issuer; "" removes it.
			return asString(func(v string) string {
				u, err := url.Parse(v)
				if v != "" && (err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" || u.RawQuery != "" || u.Fragment != "") {
					return "must be the provider's OpenID Connect issuer, an absolute http(s) URL without query or fragment"
				}
				return ""
			})
		}
	}
	return nil, false, nil
}
