package authapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/pgreflect/pgreflect/internal/documents"
)

// The trusted documents over the management API, as `pgreflect documents push|list` handle them: the
// auth service's role needs select and insert on pgreflect.trusted_documents, which the setup grants to the
// owner of schema auth (docs/persisted-queries.md).

// getTrustedDocuments answers the trusted documents as one manifest of id to text.
func (s *Service) getTrustedDocuments(w http.ResponseWriter, r *http.Request) error {
	docs, err := documents.List(r.Context(), s.opts.Pool)
	if err != nil {
		return err
	}
	manifest := make(map[string]string, len(docs))
	for _, d := range docs {
		manifest[d.ID] = d.Text
	}
	writeJSON(w, http.StatusOK, manifest)
	return nil
}

// postTrustedDocuments adds the documents of a manifest in the body (Relay's, graphql-codegen's or Apollo's
// format), all or none, and answers how many came and how many were new.
func (s *Service) postTrustedDocuments(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return &fieldError{Reason: "Request body could not be read"}
	}
	docs, err := documents.Parse(body)
	if err != nil {
		return &fieldError{Reason: "Request body must be a manifest of trusted documents: " + err.Error()}
	}
	added, err := documents.Push(r.Context(), s.opts.Pool, docs)
	if errors.Is(err, documents.ErrIDReused) {
		return &fieldError{Reason: err.Error()}
	}
	if err != nil {
		return fmt.Errorf("push trusted documents: %w", err)
	}
	writeJSON(w, http.StatusCreated, map[string]int{"pushed": len(docs), "added": added})
	return nil
}
