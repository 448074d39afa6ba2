package authapi

import (
	"net/http"
)

// settingsProviders are the provider names GET /settings always lists, as Supabase Auth does.
var settingsProviders = []string{"anonymous_users", "apple", "azure", "bitbucket", "discord", "facebook", "snapchat",
	"figma", "fly", "github", "gitlab", "google", "keycloak", "kakao", "linkedin", "linkedin_oidc", "notion",
	"spotify", "slack", "slack_oidc", "workos", "twitch", "twitter", "email", "phone", "zoom"}

// settingsHandler describes what sign-in methods are on (GET /settings).
func (s *Service) settingsHandler(w http.ResponseWriter, r *http.Request) error {
	st, err := s.settings(r.Context())
	if err != nil {
		return err
	}
	external := map[string]bool{}
	for _, name := range settingsProviders {
		external[name] = false
	}
	for name, p := range st.Providers {
		external[name] = p.Enabled && canSignIn(name, p)
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"external":                         external,
		"disable_signup":                   !st.EnableSignup,
		"mailer_autoconfirm":               false,
		"phone_autoconfirm":                false,
		"sms_provider":                     "",
		"saml_enabled":                     false,
		"saml_private_key_next_configured": false,
		"passkeys_enabled":                 false,
	})
	return nil
}

// health answers GET /health.
func (s *Service) health(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{
		"version":     "pgreflect",
		"name":        "GoTrue",
		"description": "GoTrue is a user registration and authentication API",
	})
	return nil
}

// jwks serves the public signing keys (GET /.well-known/jwks.json).
func (s *Service) jwks(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Cache-Control", "public, max-age=600")
	writeJSON(w, http.StatusOK, s.opts.Keys.JWKS())
	return nil
}
