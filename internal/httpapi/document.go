package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
)

// refusal is why the document a request names or sends may not run: an HTTP status and the GraphQL errors, the
// same over every transport (a POST or GET answers them as its body, an event stream's request too, and a
// WebSocket operation as its error message).
type refusal struct {
	status int
	errors json.RawMessage // the "errors" list
	// uncacheable marks a refusal that may not hold a moment later (the document stored meanwhile).
	uncacheable bool
}

// refuse is a refusal with one error of message.
func refuse(status int, message string) *refusal {
	return &refusal{status: status, errors: errorList(message)}
}

// body is the refusal as a response: {"errors":[...]}.
func (r *refusal) body() []byte { return errorsAnswer(r.errors) }

// errorsBody is the answer of one error of message.
func errorsBody(message string) []byte { return errorsAnswer(errorList(message)) }

// errorsAnswer is an answer of errors alone: {"errors":[...]}.
func errorsAnswer(errors json.RawMessage) []byte {
	return append(append([]byte(`{"errors":`), errors...), '}')
}

// errorList is a GraphQL errors list of one message.
func errorList(message string) json.RawMessage {
	b, _ := json.Marshal([]map[string]string{{"message": message}})
	return b
}

// completeDocument completes req from what it names instead of sending its text (a trusted document's id or
// hash, then a persisted query's hash), stores a persisted query it registers, and refuses what the trusted
// documents mode does not let role run. It returns a refusal for the client, or the database's error.
func (s *Server) completeDocument(ctx context.Context, role string, req *wireRequest) (*refusal, error) {
	if refused, err := s.checkTrusted(ctx, role, req); refused != nil || err != nil {
		return refused, err
	}
	return s.persisted.resolve(ctx, req)
}

// resolveDocument is completeDocument for a request over HTTP; when it refuses, it has answered r.
func (s *Server) resolveDocument(w http.ResponseWriter, r *http.Request, role string, req *wireRequest) bool {
	refused, err := s.completeDocument(r.Context(), role, req)
	switch {
	case err != nil:
		s.writeInternal(w, r, http.StatusServiceUnavailable, unavailableMessage, "graphql: trusted document or persisted query", err)
		return false
	case refused != nil:
		if refused.uncacheable {
			// Apollo Server sends the same: the document may be stored a moment later.
			w.Header().Set("Cache-Control", "private, no-cache, must-revalidate")
		}
		writeJSON(w, refused.status, refused.body())
		return false
	}
	return true
}
