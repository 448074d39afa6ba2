package authapi

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"regexp"

	"github.com/pgreflect/pgreflect/internal/dberr"
	"github.com/pgreflect/pgreflect/internal/obs"
)

// apiError is Supabase Auth's HTTPError: a status, an error code and a message.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func newError(status int, code, msg string) *apiError {
	return &apiError{Status: status, Code: code, Message: msg}
}

func badRequest(code, msg string) *apiError { return newError(http.StatusBadRequest, code, msg) }

// oauthError is Supabase Auth's OAuthError: always HTTP 400 with {"error","error_description"}.
type oauthError struct {
	Err         string
	Description string
}

func (e *oauthError) Error() string { return e.Err + ": " + e.Description }

// apiVersionHeader selects the error shape.
const apiVersionHeader = "X-Supabase-Api-Version"

// apiVersion20240101 is the first API version with the {"code","message"} error shape.
const apiVersion20240101 = "2024-01-01"

var apiVersionPattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// newErrorShape reports whether the request asks for the 2024-01-01 error shape: a valid date at or after it.
func newErrorShape(r *http.Request) bool {
	v := r.Header.Get(apiVersionHeader)
	return apiVersionPattern.MatchString(v) && v >= apiVersion20240101
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if v != nil {
		_ = json.NewEncoder(w).Encode(v)
	}
}

// msgUnstorableText answers a value Postgres refused to store as text: the client's, with a NUL byte or bytes
// that are not UTF-8.
const msgUnstorableText = "Unable to process the request: a value holds a NUL byte or is not valid UTF-8"

// writeError answers with err in the shape the request's API version selects. Anything that is not one of
// our error types is logged and becomes a 500 without internals.
func (s *Service) writeError(w http.ResponseWriter, r *http.Request, err error) {
	switch e := err.(type) {
	case *oauthError:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": e.Err, "error_description": e.Description})
		return
	case *apiError:
		s.writeAPIError(w, r, e)
		return
	}
	if dberr.RefusedText(err) {
		s.writeAPIError(w, r, badRequest(codeValidationFailed, msgUnstorableText))
		return
	}
	obs.Logger(r.Context(), s.log).ErrorContext(r.Context(), "auth request failed", slog.String("path", r.URL.Path), slog.Any("error", err))
	if dberr.Unavailable(err) {
		// The one answer while the database is away: Supabase Auth has no code of its own for it.
		s.writeAPIError(w, r, newError(http.StatusServiceUnavailable, codeUnexpectedFailure, "Database unavailable"))
		return
	}
	s.writeAPIError(w, r, newError(http.StatusInternalServerError, codeUnexpectedFailure, "Internal Server Error"))
}

func (s *Service) writeAPIError(w http.ResponseWriter, r *http.Request, e *apiError) {
	code := e.Code
	if code != "" {
		w.Header().Set("x-sb-error-code", code)
	}
	if newErrorShape(r) {
		if code == "" {
			code = codeUnknown
			if e.Status == http.StatusInternalServerError {
				code = codeUnexpectedFailure
			}
		}
		w.Header().Set(apiVersionHeader, apiVersion20240101)
		body := map[string]any{"code": code, "message": e.Message}
		if e.Status >= 500 {
			// Not in Supabase Auth's 2024-01-01 shape, which auth-js reads field by field: the id the log has.
			body["error_id"] = obs.RequestID(r.Context())
		}
		writeJSON(w, e.Status, body)
		return
	}
	body := map[string]any{"code": e.Status, "error_code": code, "msg": e.Message}
	if e.Status >= 500 {
		// Supabase Auth's error_id: the request id of a server error, under which the reason is logged.
		body["error_id"] = obs.RequestID(r.Context())
	}
	writeJSON(w, e.Status, body)
}
