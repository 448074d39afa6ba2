package authapi

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/dberr"
	"github.com/pgreflect/pgreflect/internal/obs"
	"github.com/pgreflect/pgreflect/oidc"
)

// authorize starts a sign-in with an external provider (GET /authorize): it records a flow and redirects the
// browser to the provider with the flow's id as OAuth state.
func (s *Service) authorize(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	st, err := s.settings(ctx)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	name := strings.ToLower(q.Get("provider"))
	p, err := s.codeFlowProvider(st, name)
	if err != nil {
		return badRequest(codeValidationFailed, "Unsupported provider: "+err.Error())
	}
	challenge, method := q.Get("code_challenge"), q.Get("code_challenge_method")
	if (challenge == "") != (method == "") {
		return badRequest(codeValidationFailed, "PKCE flow requires code_challenge_method and code_challenge")
	}
	if challenge != "" {
		var ok bool
		if method, ok = oidc.ParseChallengeMethod(method); !ok {
			return badRequest(codeValidationFailed, "Invalid code_challenge_method")
		}
		if len(challenge) < 43 || len(challenge) > 128 {
			return badRequest(codeValidationFailed, "code challenge has to be between 43 and 128 characters")
		}
		if !oidc.ValidChallenge(challenge) {
			return badRequest(codeValidationFailed, "code challenge can only contain alphanumeric characters, hyphens, periods, underscores and tildes")
		}
	}
	if q.Get("invite_token") != "" {
		// Invitations are an email feature this service does not have, so no invite can match.
		return newError(http.StatusNotFound, codeUserNotFound, "User identified by token not found")
	}
	redirectTo := q.Get("redirect_to")
	if redirectTo == "" {
		redirectTo = r.Header.Get("redirect_to")
	}
	flow := &auth.FlowState{
		ID: uuid.New(), CodeChallengeMethod: method, CodeChallenge: challenge, ProviderType: name,
		Referrer: st.redirectTarget(redirectTo, r.Referer()), EmailOptional: p.EmailOptional,
	}
	pass := url.Values{}
	for k, v := range q {
		if !oidc.IsReservedParam(k) {
			pass[k] = v
		}
	}
	authURL, err := s.providers.AuthCodeURL(ctx, p, flow.ID.String(), oidc.Scopes(q.Get("scopes")), pass)
	if err != nil {
		// Supabase Auth answers a provider it cannot set up (its discovery failing included) with 400
		// validation_failed "Unsupported provider: <reason>"; the status and code stay, the reason (an address,
		// a network error) goes to the log under the request id the message names.
		id := obs.RequestID(ctx)
		obs.Logger(ctx, s.log).WarnContext(ctx, "provider unreachable", "provider", name, "error", err)
		s.opts.Metrics.AuthEvent("failure", "authorize")
		return badRequest(codeValidationFailed, fmt.Sprintf("Unsupported provider: provider unavailable (request id %s)", id))
	}
	if err := s.store.CreateFlowState(ctx, flow, flowStateExpiry); err != nil {
		return err
	}
	http.Redirect(w, r, authURL, http.StatusFound)
	return nil
}

// callbackError is an error the callback reports by redirect instead of JSON.
type callbackError struct {
	status      int
	code        string // error_code; empty for errors the provider reported
	oauthErr    string // the "error" value; derived from status when empty
	description string
}

// oauthErrorFor maps an HTTP status and error code to the OAuth "error" value of a redirect.
func oauthErrorFor(status int, code string) string {
	switch code {
	case codeSignupDisabled, codeUserBanned, codeProviderEmailNeedsVerification:
		return codeAccessDenied
	}
	switch status {
	case http.StatusBadRequest:
		return codeInvalidRequest
	case http.StatusUnauthorized:
		return "unauthorized_client"
	case http.StatusForbidden:
		return codeAccessDenied
	case http.StatusServiceUnavailable:
		return "temporarily_unavailable"
	}
	return codeServerError
}

// callback completes a sign-in when the provider sends the browser back (GET or POST /callback).
func (s *Service) callback(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	st, err := s.settings(ctx)
	if err != nil {
		return err
	}
	if err := r.ParseForm(); err != nil {
		return badRequest(codeValidationFailed, "Could not parse request form")
	}
	// State problems are reported to the site URL: the flow, and with it the app's redirect, is unknown.
	stateError := func(code, desc string) error {
		s.redirectError(w, r, st.SiteURL, callbackError{status: http.StatusBadRequest, code: code, description: desc}, http.StatusSeeOther)
		return nil
	}
	state := r.FormValue("state")
	if state == "" {
		return stateError(codeBadOAuthCallback, "OAuth state parameter missing")
	}
	flowID, err := uuid.Parse(state)
	if err != nil || len(state) != 36 {
		return stateError(codeBadOAuthState, "OAuth state parameter is invalid")
	}
	flow, err := s.store.FlowState(ctx, flowID)
	if errors.Is(err, auth.ErrFlowStateNotFound) {
		return stateError(codeBadOAuthState, "OAuth state not found or expired")
	}
	if err != nil {
		return err
	}
	if s.now().Sub(flow.CreatedAt) > flowStateExpiry {
		return stateError(codeBadOAuthState, "OAuth state has expired")
	}
	if flow.UserID != uuid.Nil {
		return stateError(codeFlowStateAlreadyUsed, "State has already been used")
	}
	target := flow.Referrer
	if target == "" {
		target = st.SiteURL
	}
	fail := func(ce callbackError) error {
		s.opts.Metrics.AuthEvent("failure", "callback")
		s.redirectError(w, r, target, ce, http.StatusFound)
		return nil
	}
	if e := r.FormValue("error"); e != "" {
		return fail(callbackError{oauthErr: e, description: r.FormValue("error_description")})
	}
	code := r.FormValue("code")
	if code == "" {
		return fail(callbackError{status: http.StatusBadRequest, code: codeBadOAuthCallback,
			description: "OAuth callback with missing authorization code missing"})
	}
	p, err := s.codeFlowProvider(st, flow.ProviderType)
	if err != nil {
		return fail(callbackError{status: http.StatusBadRequest, code: codeValidationFailed, description: "Unsupported provider: " + err.Error()})
	}
	res, err := s.providers.Exchange(ctx, p, code)
	if err != nil {
		obs.Logger(ctx, s.log).WarnContext(ctx, "provider callback failed", "provider", flow.ProviderType, "error", err)
		switch {
		case errors.Is(err, oidc.ErrExchange):
			prefix := code
			if len(prefix) > 4 {
				prefix = prefix[:4]
			}
			return fail(callbackError{status: http.StatusInternalServerError, description: "Unable to exchange external code: " + prefix})
		case errors.Is(err, oidc.ErrNoEmail):
			return fail(callbackError{status: http.StatusInternalServerError, description: "Error getting user email from external provider"})
		default:
			return fail(callbackError{status: http.StatusInternalServerError, description: "Error getting user profile from external provider"})
		}
	}
	policy := auth.SignInPolicy{EnableSignup: st.EnableSignup}
	if flow.IsPKCE() {
		authCode, err := s.store.IssueAuthCode(ctx, flow.ID, res.Identity, policy,
			auth.ProviderTokens{AccessToken: res.AccessToken, RefreshToken: res.RefreshToken})
		if err != nil {
			return fail(s.signInCallbackError(r, flow.ProviderType, err))
		}
		s.opts.Metrics.AuthEvent("sign_in", "callback_pkce")
		http.Redirect(w, r, withQuery(target, url.Values{"code": {authCode}}), http.StatusFound)
		return nil
	}
	grant, err := s.store.SignIn(ctx, res.Identity, policy, flow.ID)
	if err != nil {
		return fail(s.signInCallbackError(r, flow.ProviderType, err))
	}
	at, expiresIn, err := s.accessToken(st, grant)
	if err != nil {
		return err
	}
	frag := url.Values{
		"access_token":   {at.Token},
		"expires_at":     {strconv.FormatInt(at.ExpiresAt.Unix(), 10)},
		"expires_in":     {strconv.FormatInt(expiresIn, 10)},
		"provider_token": {res.AccessToken},
		"refresh_token":  {grant.RefreshToken},
		"sb":             {""},
		"token_type":     {"bearer"},
	}
	if res.RefreshToken != "" {
		frag.Set("provider_refresh_token", res.RefreshToken)
	}
	s.opts.Metrics.AuthEvent("sign_in", "implicit")
	http.Redirect(w, r, withFragment(target, frag), http.StatusFound)
	return nil
}

// signInCallbackError maps the store's sign-in refusals to callback redirect errors; anything else (a failing
// trigger on auth.users, a lost connection) is logged and reported as Supabase Auth reports it.
func (s *Service) signInCallbackError(r *http.Request, provider string, err error) callbackError {
	if ce, ok := signInRefusal(provider, err); ok {
		return ce
	}
	obs.Logger(r.Context(), s.log).ErrorContext(r.Context(), "sign-in failed", "error", err)
	if dberr.Unavailable(err) {
		return callbackError{status: http.StatusServiceUnavailable, description: "Database unavailable (request id " + obs.RequestID(r.Context()) + ")"}
	}
	return callbackError{status: http.StatusInternalServerError, description: "Database error saving new user"}
}

func signInRefusal(provider string, err error) (callbackError, bool) {
	switch {
	case errors.Is(err, auth.ErrSignupDisabled):
		return callbackError{status: http.StatusUnprocessableEntity, code: codeSignupDisabled, description: "Signups not allowed for this instance"}, true
	case errors.Is(err, auth.ErrEmailNeedsVerification):
		return callbackError{status: http.StatusUnprocessableEntity, code: codeProviderEmailNeedsVerification,
			description: unverifiedEmailMessage(provider)}, true
	case errors.Is(err, auth.ErrUserBanned):
		return callbackError{status: http.StatusForbidden, code: codeUserBanned, description: "User is banned"}, true
	case errors.Is(err, auth.ErrFlowStateAlreadyUsed):
		return callbackError{status: http.StatusBadRequest, code: codeFlowStateAlreadyUsed, description: "State has already been used"}, true
	case errors.Is(err, auth.ErrFlowStateNotFound):
		return callbackError{status: http.StatusBadRequest, code: codeBadOAuthState, description: "OAuth state not found or expired"}, true
	case errors.Is(err, auth.ErrMultipleAccounts):
		return callbackError{status: http.StatusInternalServerError, description: "Multiple accounts with the same email address in the same linking domain detected: default"}, true
	}
	return callbackError{}, false
}

// redirectError sends the browser to target with the error in the query and again in the fragment with the sb
// marker (Supabase Auth's redirectErrors; auth-js reads either).
func (s *Service) redirectError(w http.ResponseWriter, r *http.Request, target string, ce callbackError, status int) {
	vals := url.Values{}
	e := ce.oauthErr
	if e == "" {
		e = oauthErrorFor(ce.status, ce.code)
	}
	vals.Set("error", e)
	if ce.code != "" {
		vals.Set("error_code", ce.code)
	}
	vals.Set("error_description", ce.description)
	loc := withQuery(target, vals)
	vals.Set("sb", "")
	http.Redirect(w, r, withFragment(loc, vals), status)
}

// withQuery merges values into a URL's query (replacing keys it already has).
func withQuery(target string, vals url.Values) string {
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	q := u.Query()
	for k, v := range vals {
		q[k] = v
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// withFragment replaces a URL's fragment by the encoded values (keys sorted).
func withFragment(target string, vals url.Values) string {
	base, _, _ := strings.Cut(target, "#")
	return base + "#" + vals.Encode()
}

// unverifiedEmailMessage is Supabase Auth's message when no confirmation email could be sent.
func unverifiedEmailMessage(provider string) string {
	return fmt.Sprintf("Unverified email with %s. Verify the email with %s in order to sign in", provider, provider)
}
