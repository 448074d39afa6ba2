package httpapi

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/obs"
)

// readRequest reads the request of a GET (from the URL) or a POST (from the body); when it cannot, it has
// answered r.
func (s *Server) readRequest(w http.ResponseWriter, r *http.Request) (wireRequest, bool) {
	if r.Method == http.MethodGet {
		return requestFromURL(r.URL.Query()), true
	}
	var req wireRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			s.opts.Metrics.Refused(obs.RefusedBodyTooLarge)
			writeGraphQLError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf(msgBodyTooLarge, s.opts.MaxBodyBytes))
		case errors.Is(err, os.ErrDeadlineExceeded):
			// The server's read timeout cut a body that came too slowly.
			s.opts.Metrics.Refused(obs.RefusedReadTimeout)
			writeGraphQLError(w, http.StatusRequestTimeout, msgBodyTooSlow)
		default:
			writeGraphQLError(w, http.StatusBadRequest, msgBodyUnreadable)
		}
		return req, false
	}
	if err := decodeRequest(body, &req); err != nil {
		writeGraphQLError(w, http.StatusBadRequest, msgBodyNotRequest)
		return req, false
	}
	return req, true
}

// requestFromURL is a request in the GraphQL-over-HTTP spelling of a GET: query and operationName as text,
// variables and extensions as JSON text (which the engine and the persisted queries check).
func requestFromURL(q url.Values) wireRequest {
	var req wireRequest
	req.Query, req.OperationName = q.Get("query"), q.Get("operationName")
	if v := q.Get("variables"); v != "" {
		req.Variables = json.RawMessage(v)
	}
	if v := q.Get("extensions"); v != "" {
		req.Extensions = json.RawMessage(v)
	}
	req.DocumentID, req.DocID = q.Get("documentId"), q.Get("doc_id")
	return req
}

// writeAnswer sends the engine's answer. A POST's as it is; a GET's with what caches need: an ETag (and 304
// to a client that has that answer already), Vary on the credentials and on Origin (whose presence decides
// the exposed headers: route), and Cache-Control: the configured one
// for a successful anonymous answer, "private, no-store" for every answer that depends on who asks.
func (s *Server) writeAnswer(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.Method != http.MethodGet {
		writeJSON(w, http.StatusOK, body)
		return
	}
	h := w.Header()
	h.Add("Vary", "Authorization, apikey, Origin")
	switch {
	case !s.anonymous(r):
		h.Set("Cache-Control", "private, no-store")
	case s.opts.GETCacheControl != "" && !hasErrors(body):
		h.Set("Cache-Control", s.opts.GETCacheControl)
	}
	etag := etagOf(body)
	h.Set("ETag", etag)
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// anonymous reports whether r carries the anon key and nothing else: only then is its answer everybody's.
// supabase-js sends the anon key as the bearer token too until a user signs in.
func (s *Server) anonymous(r *http.Request) bool {
	if s.opts.AnonKey == "" || auth.APIKeyFromRequest(r) != s.opts.AnonKey {
		return false
	}
	authorization := r.Header.Get("Authorization")
	if authorization == "" {
		return true
	}
	bearer, ok := auth.ParseBearer(authorization)
	return ok && bearer == s.opts.AnonKey
}

// hasErrors reports whether an answer carries errors, which no cache should keep (a statement timeout, say,
// would be replayed for max-age).
func hasErrors(body []byte) bool {
	var answer struct {
		Errors json.RawMessage `json:"errors"`
	}
	return json.Unmarshal(body, &answer) != nil || len(answer.Errors) > 0 && string(answer.Errors) != "null"
}

// etagOf is a strong validator of body: 128 bits of its SHA-256.
func etagOf(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`
}

// etagMatches reports whether an If-None-Match header names etag (weakly compared, as RFC 9110 asks for
// If-None-Match), or is "*".
func etagMatches(header, etag string) bool {
	for candidate := range strings.SplitSeq(header, ",") {
		candidate = strings.TrimSpace(candidate)
		if candidate == "*" || strings.TrimPrefix(candidate, "W/") == etag {
			return true
		}
	}
	return false
}
