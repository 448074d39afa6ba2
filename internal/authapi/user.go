package authapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/pgreflect/pgreflect/auth"
)

// authenticated is the user and session behind a request's access token.
type authenticated struct {
	user      *auth.User
	sessionID uuid.UUID
	aud       string
}

// requireUser authenticates a request by its Bearer access token as Supabase Auth does: the token must verify,
// name an existing user, and, when it carries a session, a session that still exists.
func (s *Service) requireUser(r *http.Request) (*authenticated, error) {
	token, ok := auth.BearerToken(r)
	if !ok {
		return nil, newError(http.StatusUnauthorized, codeNoAuthorization, "This endpoint requires a valid Bearer token")
	}
	claims, err := s.opts.Keys.Verify(token)
	if err != nil {
		return nil, newError(http.StatusForbidden, codeBadJWT, "invalid JWT: unable to parse or verify signature, "+
			strings.TrimPrefix(err.Error(), auth.ErrInvalidToken.Error()+": "))
	}
	sub, _ := claims["sub"].(string)
	if sub == "" {
		return nil, newError(http.StatusForbidden, codeBadJWT, "invalid claim: missing sub claim")
	}
	userID, err := uuid.Parse(sub)
	if err != nil {
		return nil, badRequest(codeBadJWT, "invalid claim: sub claim must be a UUID")
	}
	user, err := s.store.User(r.Context(), userID)
	if errors.Is(err, auth.ErrUserNotFound) {
		return nil, newError(http.StatusForbidden, codeUserNotFound, "User from sub claim in JWT does not exist")
	}
	if err != nil {
		return nil, err
	}
	a := &authenticated{user: user}
	a.aud, _ = claims["aud"].(string)
	if sid, _ := claims["session_id"].(string); sid != "" {
		sessionID, err := uuid.Parse(sid)
		if err != nil {
			return nil, newError(http.StatusForbidden, codeBadJWT, "invalid claim: session_id claim must be a UUID")
		}
		sess, err := s.store.Session(r.Context(), sessionID)
		if errors.Is(err, auth.ErrSessionNotFound) || err == nil && sess.UserID != user.ID {
			return nil, newError(http.StatusForbidden, codeSessionNotFound, "Session from session_id claim in JWT does not exist")
		}
		if err != nil {
			return nil, err
		}
		a.sessionID = sessionID
	}
	if user.BannedUntil != nil && user.BannedUntil.After(time.Now()) {
		return nil, newError(http.StatusForbidden, codeUserBanned, "User is banned")
	}
	return a, nil
}

// user returns the signed-in user (GET /user).
func (s *Service) user(w http.ResponseWriter, r *http.Request) error {
	a, err := s.requireUser(r)
	if err != nil {
		return err
	}
	if aud := r.Header.Get("X-JWT-AUD"); aud != "" && aud != a.aud {
		return badRequest(codeValidationFailed, "Token audience doesn't match request audience")
	}
	writeJSON(w, http.StatusOK, a.user)
	return nil
}

// logout ends sessions (POST /logout?scope=global|local|others).
func (s *Service) logout(w http.ResponseWriter, r *http.Request) error {
	a, err := s.requireUser(r)
	if err != nil {
		return err
	}
	scope := auth.LogoutGlobal
	if v := r.URL.Query().Get("scope"); v != "" {
		switch auth.LogoutScope(v) {
		case auth.LogoutGlobal, auth.LogoutLocal, auth.LogoutOthers:
			scope = auth.LogoutScope(v)
		default:
			return badRequest(codeValidationFailed, fmt.Sprintf("Unsupported logout scope %q", v))
		}
	}
	if err := s.store.Logout(r.Context(), a.user, a.sessionID, scope); err != nil {
		return err
	}
	s.opts.Metrics.AuthEvent("sign_out", "logout")
	w.WriteHeader(http.StatusNoContent)
	return nil
}
