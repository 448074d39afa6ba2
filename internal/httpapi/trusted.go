package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/internal/documents"
	"github.com/pgreflect/pgreflect/internal/obs"
)

// TrustedMode is [graphql] trusted_documents: whether requests may name trusted documents, and whether
// they may send anything else.
type TrustedMode string

const (
	// TrustedOff: requests send documents (or Apollo's hashes); ids of trusted documents are refused.
	TrustedOff TrustedMode = "off"
	// TrustedAllow: requests may name a trusted document by its id or hash, or send any document.
	TrustedAllow TrustedMode = "allow"
	// TrustedOnly: anon and authenticated requests may run only trusted documents (by id, hash or text);
	// service_role may run any unless TrustedDocuments.ServiceRole says otherwise.
	TrustedOnly TrustedMode = "only"
)

// ParseTrustedMode reads a mode; "" is off.
func ParseTrustedMode(s string) (TrustedMode, error) {
	switch m := TrustedMode(s); m {
	case "", TrustedOff:
		return TrustedOff, nil
	case TrustedAllow, TrustedOnly:
		return m, nil
	}
	return "", fmt.Errorf("trusted documents: unknown mode %q: use off, allow or only", s)
}

// TrustedDocuments configure trusted documents.
type TrustedDocuments struct {
	Mode TrustedMode
	// ServiceRole subjects service_role to TrustedOnly as well.
	ServiceRole bool
}

// trustedTTL bounds how long an instance goes on running a trusted document removed from the table.
const trustedTTL = 30 * time.Second

// trustedDocuments reads table pgreflect.trusted_documents (through pgreflect.trusted_document, by id or
// hash), keeping what it found for trustedTTL.
type trustedDocuments struct {
	TrustedDocuments
	pool  *pgxpool.Pool
	wait  time.Duration // bounds a lookup, its wait for a connection included
	known *expirable.LRU[string, string]
}

// newTrustedDocuments checks that the database has the table when the mode needs it.
func newTrustedDocuments(ctx context.Context, pool *pgxpool.Pool, cfg TrustedDocuments, wait time.Duration) (*trustedDocuments, error) {
	if cfg.Mode == "" {
		cfg.Mode = TrustedOff
	}
	if cfg.Mode == TrustedOff {
		return &trustedDocuments{TrustedDocuments: cfg}, nil
	}
	var present bool
	if err := pool.QueryRow(ctx, `select to_regprocedure('pgreflect.trusted_document(text)') is not null`).Scan(&present); err != nil {
		return nil, fmt.Errorf("httpapi: look for the trusted documents: %w", err)
	}
	if !present {
		return nil, errors.New("httpapi: trusted documents are on but the database lacks pgreflect.trusted_document: run `pgreflect setup`")
	}
	return &trustedDocuments{TrustedDocuments: cfg, pool: pool, wait: wait,
		known: expirable.NewLRU[string, string](localPersistedEntries, nil, trustedTTL)}, nil
}

// lookup finds the trusted document with the id or SHA-256 key.
func (t *trustedDocuments) lookup(ctx context.Context, key string) (string, bool, error) {
	if doc, ok := t.known.Get(key); ok {
		return doc, true, nil
	}
	doc, found, err := queryDocument(ctx, t.pool, t.wait, `select pgreflect.trusted_document($1)`, key)
	if err != nil {
		return "", false, fmt.Errorf("read trusted document: %w", err)
	}
	if found && len(doc) <= localPersistedMaxBytes {
		t.known.Add(key, doc)
	}
	return doc, found, nil
}

// checkTrusted completes req from the trusted document it names, or refuses what the mode does not let role
// run (counting the refusals of "only"), or returns the database's error.
func (s *Server) checkTrusted(ctx context.Context, role string, req *wireRequest) (*refusal, error) {
	t := s.trusted
	id, hash := req.documentID(), req.persistedHash()
	if t.Mode == TrustedOff {
		if id != "" && req.Query == "" {
			return refuse(http.StatusBadRequest, msgTrustedOff), nil
		}
		return nil, nil
	}
	restricted := t.Mode == TrustedOnly && (role != "service_role" || t.ServiceRole)
	key := id
	switch {
	case req.Query != "":
		if !restricted {
			return nil, nil
		}
		key = documents.SHA256(req.Query) // the text itself may be trusted
	case key == "":
		key = hash
	}
	if key == "" {
		return nil, nil // nothing to look up: the next steps report the missing query
	}
	doc, found, err := t.lookup(ctx, key)
	if err != nil {
		return nil, err
	}
	switch {
	case found:
		if req.Query == "" {
			req.Query = doc
			req.Extensions = nil // the trusted document answers for the hash; nothing for Apollo's protocol to do
		}
		return nil, nil
	case id != "" && req.Query == "":
		return refuse(http.StatusBadRequest, fmt.Sprintf(msgUnknownDocumentID, id)), nil
	case restricted:
		s.opts.Metrics.Refused(obs.RefusedUntrustedDocument)
		return refuse(http.StatusForbidden, msgUntrustedDocument), nil
	}
	return nil, nil // an unknown hash in allow mode: Apollo's protocol may know it
}
