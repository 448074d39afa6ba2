package authapi

// The error codes of the auth API, in one place as supabase/auth keeps them (internal/api/errorcodes.go): the
// error_code (or code) of an answer, and the error of an OAuth redirect. Clients branch on them, so they are
// the contract's texts (auth-api.md); a test keeps string literals out of the call sites.
const (
	codeBadCodeVerifier                = "bad_code_verifier"
	codeBadJSON                        = "bad_json"
	codeBadJWT                         = "bad_jwt"
	codeBadOAuthCallback               = "bad_oauth_callback"
	codeBadOAuthState                  = "bad_oauth_state"
	codeEmailProviderDisabled          = "email_provider_disabled"
	codeFlowStateAlreadyUsed           = "flow_state_already_used"
	codeFlowStateExpired               = "flow_state_expired"
	codeFlowStateNotFound              = "flow_state_not_found"
	codeInvalidCredentials             = "invalid_credentials"
	codeManualLinkingDisabled          = "manual_linking_disabled"
	codeNoAuthorization                = "no_authorization"
	codeNotAdmin                       = "not_admin"
	codeNotFound                       = "not_found"
	codeOverRequestRateLimit           = "over_request_rate_limit"
	codeProviderDisabled               = "provider_disabled"
	codeProviderEmailNeedsVerification = "provider_email_needs_verification"
	codeRefreshTokenAlreadyUsed        = "refresh_token_already_used"
	codeRefreshTokenNotFound           = "refresh_token_not_found"
	codeRequestEntityTooLarge          = "request_entity_too_large"
	codeSessionNotFound                = "session_not_found"
	codeSignupDisabled                 = "signup_disabled"
	codeUnknown                        = "unknown"
	codeUnexpectedFailure              = "unexpected_failure"
	codeUserBanned                     = "user_banned"
	codeUserNotFound                   = "user_not_found"
	codeValidationFailed               = "validation_failed"
)

// The error codes of OAuth 2.0 redirects (RFC 6749, 4.1.2.1), which the callback forwards to the app.
const (
	codeAccessDenied   = "access_denied"
	codeInvalidRequest = "invalid_request"
	codeServerError    = "server_error"
)
