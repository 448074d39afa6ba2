package authapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/obs"
	"github.com/pgreflect/pgreflect/oidc"
)

// sessionResponse is Supabase Auth's AccessTokenResponse.
type sessionResponse struct {
	AccessToken          string     `json:"access_token"`
	TokenType            string     `json:"token_type"`
	ExpiresIn            int64      `json:"expires_in"`
	ExpiresAt            int64      `json:"expires_at"`
	RefreshToken         string     `json:"refresh_token"`
	User                 *auth.User `json:"user"`
	ProviderToken        string     `json:"provider_token,omitempty"`
	ProviderRefreshToken string     `json:"provider_refresh_token,omitempty"`
}

// accessToken signs the grant's access token; expiresIn is whole seconds from issue to expiry, as the JWT says.
func (s *Service) accessToken(st *settings, g *auth.Grant) (at auth.AccessToken, expiresIn int64, err error) {
	now := s.now()
	at, err = s.opts.Keys.SignAccessToken(g.User, g.Session, s.issuer(), time.Duration(st.JWTExpiry)*time.Second, now)
	return at, at.ExpiresAt.Unix() - now.Unix(), err
}

func (s *Service) sendSession(w http.ResponseWriter, st *settings, g *auth.Grant, pt auth.ProviderTokens) error {
	at, expiresIn, err := s.accessToken(st, g)
	if err != nil {
		return err
	}
	w.Header().Set("sb-auth-user-id", g.User.ID.String())
	w.Header().Set("sb-auth-session-id", g.Session.ID.String())
	writeJSON(w, http.StatusOK, sessionResponse{
		AccessToken: at.Token, TokenType: "bearer", ExpiresAt: at.ExpiresAt.Unix(),
		ExpiresIn: expiresIn, RefreshToken: g.RefreshToken,
		User: g.User, ProviderToken: pt.AccessToken, ProviderRefreshToken: pt.RefreshToken,
	})
	return nil
}

// readJSON decodes a JSON request body as Supabase Auth does (bad_json on failure).
func readJSON(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return newError(http.StatusRequestEntityTooLarge, codeRequestEntityTooLarge, "Request body too large")
		}
		return badRequest(codeBadJSON, "Could not read request body")
	}
	if err := json.Unmarshal(body, v); err != nil {
		return badRequest(codeBadJSON, "Could not parse request body as JSON: "+err.Error())
	}
	return nil
}

// token issues sessions (POST /token?grant_type=...) and counts the outcome.
func (s *Service) token(w http.ResponseWriter, r *http.Request) error {
	grant := r.URL.Query().Get("grant_type")
	err := s.tokenGrant(w, r, grant)
	event := "sign_in"
	switch {
	case err != nil:
		event = "failure"
	case grant == "refresh_token":
		event = "refresh"
	}
	switch grant {
	case "pkce", "id_token", "refresh_token", "password":
	default:
		grant = "other" // the label set stays bounded whatever clients send
	}
	s.opts.Metrics.AuthEvent(event, grant)
	return err
}

func (s *Service) tokenGrant(w http.ResponseWriter, r *http.Request, grant string) error {
	switch grant {
	case "pkce":
		return s.pkceGrant(w, r)
	case "id_token":
		return s.idTokenGrant(w, r)
	case "refresh_token":
		return s.refreshGrant(w, r)
	case "password":
		return newError(http.StatusUnprocessableEntity, codeEmailProviderDisabled, "Email logins are disabled")
	default:
		return badRequest(codeInvalidCredentials, "unsupported_grant_type")
	}
}

func (s *Service) pkceGrant(w http.ResponseWriter, r *http.Request) error {
	var params struct {
		AuthCode     string `json:"auth_code"`
		CodeVerifier string `json:"code_verifier"`
	}
	if err := readJSON(r, &params); err != nil {
		return err
	}
	if params.AuthCode == "" || params.CodeVerifier == "" {
		return badRequest(codeValidationFailed, "invalid request: both auth code and code verifier should be non-empty")
	}
	st, err := s.settings(r.Context())
	if err != nil {
		return err
	}
	grant, pt, err := s.store.ExchangeAuthCode(r.Context(), params.AuthCode, flowStateExpiry, func(method, challenge string) bool {
		return oidc.VerifyChallenge(method, challenge, params.CodeVerifier)
	})
	switch {
	case errors.Is(err, auth.ErrFlowStateNotFound):
		return newError(http.StatusNotFound, codeFlowStateNotFound, "invalid flow state, no valid flow state found")
	case errors.Is(err, auth.ErrFlowStateExpired):
		return newError(http.StatusUnprocessableEntity, codeFlowStateExpired, "invalid flow state, flow state has expired")
	case errors.Is(err, auth.ErrBadCodeVerifier):
		return badRequest(codeBadCodeVerifier, "code challenge does not match previously saved code verifier")
	case errors.Is(err, auth.ErrUserBanned):
		return badRequest(codeUserBanned, "User is banned")
	case err != nil:
		return err
	}
	return s.sendSession(w, st, grant, pt)
}

func (s *Service) idTokenGrant(w http.ResponseWriter, r *http.Request) error {
	var params struct {
		IDToken      string `json:"id_token"`
		AccessToken  string `json:"access_token"`
		Nonce        string `json:"nonce"`
		Provider     string `json:"provider"`
		ClientID     string `json:"client_id"`
		Issuer       string `json:"issuer"`
		LinkIdentity bool   `json:"link_identity"`
	}
	if err := readJSON(r, &params); err != nil {
		return err
	}
	if params.IDToken == "" {
		return &oauthError{Err: "invalid request", Description: "id_token required"}
	}
	if params.Provider == "" && (params.ClientID == "" || params.Issuer == "") {
		return &oauthError{Err: "invalid request", Description: "provider or client_id and issuer required"}
	}
	if params.LinkIdentity {
		return newError(http.StatusUnprocessableEntity, codeManualLinkingDisabled, "Manual linking is disabled")
	}
	st, err := s.settings(r.Context())
	if err != nil {
		return err
	}
	name, ps, issuer := idTokenProvider(st, strings.ToLower(params.Provider), params.Issuer)
	if name == "" {
		return badRequest(codeValidationFailed, fmt.Sprintf("Custom OIDC provider %q not allowed", params.Provider))
	}
	if !ps.Enabled {
		return badRequest(codeProviderDisabled, fmt.Sprintf("Provider (issuer %q) is not enabled", issuer))
	}
	ext, err := s.providers.VerifyIDToken(r.Context(), s.oidcProvider(name, issuer, ps), params.IDToken, params.AccessToken, params.Nonce)
	if err != nil {
		var ite *oidc.IDTokenError
		if errors.As(err, &ite) {
			obs.Logger(r.Context(), s.log).InfoContext(r.Context(), "id_token rejected", "provider", name, "error", err)
			return &oauthError{Err: ite.Code, Description: ite.Description}
		}
		return err
	}
	grant, err := s.store.SignIn(r.Context(), ext, auth.SignInPolicy{EnableSignup: st.EnableSignup}, uuid.Nil)
	switch {
	case errors.Is(err, auth.ErrSignupDisabled):
		return newError(http.StatusUnprocessableEntity, codeSignupDisabled, "Signups not allowed for this instance")
	case errors.Is(err, auth.ErrEmailNeedsVerification):
		return newError(http.StatusUnprocessableEntity, codeProviderEmailNeedsVerification, unverifiedEmailMessage(name))
	case errors.Is(err, auth.ErrUserBanned):
		return newError(http.StatusForbidden, codeUserBanned, "User is banned")
	case errors.Is(err, auth.ErrMultipleAccounts):
		return newError(http.StatusInternalServerError, codeUnexpectedFailure, "Multiple accounts with the same email address in the same linking domain detected: default")
	case err != nil:
		return err
	}
	return s.sendSession(w, st, grant, auth.ProviderTokens{})
}

// idTokenProvider resolves the provider of an ID-token grant: by name, or by the issuer of a configured
// provider. It returns an empty name when neither matches a provider with a known issuer.
func idTokenProvider(st *settings, name, issuer string) (string, providerSettings, string) {
	if name != "" {
		p := st.Providers[name]
		if iss := providerIssuer(name, p); iss != "" {
			return name, p, iss
		}
		return "", providerSettings{}, ""
	}
	if issuer == oidc.GoogleIssuer {
		return "google", st.Providers["google"], providerIssuer("google", st.Providers["google"])
	}
	// Several providers may share an issuer (one disabled, one enabled): an enabled one wins, then the name.
	match := ""
	for _, n := range slices.Sorted(maps.Keys(st.Providers)) {
		p := st.Providers[n]
		if providerIssuer(n, p) == issuer && (match == "" || p.Enabled && !st.Providers[match].Enabled) {
			match = n
		}
	}
	if match == "" {
		return "", providerSettings{}, ""
	}
	return match, st.Providers[match], issuer
}

func (s *Service) refreshGrant(w http.ResponseWriter, r *http.Request) error {
	var params struct {
		RefreshToken string `json:"refresh_token"`
	}
	if err := readJSON(r, &params); err != nil {
		return err
	}
	if !auth.ValidRefreshTokenFormat(params.RefreshToken) {
		return badRequest(codeValidationFailed, "Refresh token is not valid")
	}
	st, err := s.settings(r.Context())
	if err != nil {
		return err
	}
	grant, err := s.store.Refresh(r.Context(), params.RefreshToken, auth.RefreshPolicy{
		Rotation: st.Rotation, ReuseInterval: time.Duration(st.ReuseInterval) * time.Second,
	})
	switch {
	case errors.Is(err, auth.ErrRefreshTokenNotFound):
		return badRequest(codeRefreshTokenNotFound, "Invalid Refresh Token: Refresh Token Not Found")
	case errors.Is(err, auth.ErrRefreshTokenAlreadyUsed):
		return badRequest(codeRefreshTokenAlreadyUsed, "Invalid Refresh Token: Already Used")
	case errors.Is(err, auth.ErrSessionNotFound):
		return badRequest(codeSessionNotFound, "Invalid Refresh Token: No Valid Session Found")
	case errors.Is(err, auth.ErrUserBanned):
		return badRequest(codeUserBanned, "Invalid Refresh Token: User Banned")
	case err != nil:
		return err
	}
	return s.sendSession(w, st, grant, auth.ProviderTokens{})
}
