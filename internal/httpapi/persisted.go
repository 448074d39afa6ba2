package httpapi

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/internal/dberr"
	"github.com/pgreflect/pgreflect/internal/obs"
	"github.com/pgreflect/pgreflect/resolve"
)

// wireRequest is a GraphQL request as it comes over HTTP: the engine's request and the extensions object,
// where Apollo's automatic persisted queries put the document's hash.
type wireRequest struct {
	resolve.Request
	Extensions json.RawMessage `json:"extensions,omitempty"`
	// DocumentID (the GraphQL-over-HTTP draft's name) or DocID (Relay's) names a trusted document instead of
	// sending its text.
	DocumentID string `json:"documentId,omitempty"`
	DocID      string `json:"doc_id,omitempty"`
}

// documentID is the trusted document the request names, "" when none.
func (r *wireRequest) documentID() string { return cmp.Or(r.DocumentID, r.DocID) }

// persistedHash is the hash of Apollo's protocol the request carries, "" when none (or unreadable, which
// persistedQueries.resolve reports).
func (r *wireRequest) persistedHash() string {
	if len(r.Extensions) == 0 {
		return "" // before ext, which the decoding moves to the heap
	}
	var ext apqExtension
	if json.Unmarshal(r.Extensions, &ext) != nil || ext.PersistedQuery == nil {
		return ""
	}
	return ext.PersistedQuery.SHA256Hash
}

// persistedQueryVersion is the only version of Apollo's protocol.
const persistedQueryVersion = 1

// Bounds of each instance's copy of the stored documents: the database is the shared store, the copy saves
// it a round trip for the documents in use. Larger documents are not copied, so that the copy stays within
// localPersistedEntries x localPersistedMaxBytes (32 MiB).
const (
	localPersistedEntries  = 512
	localPersistedMaxBytes = 64 << 10
)

// persistedQueries are Apollo's automatic persisted queries: documents by the hex SHA-256 of their text, kept
// in table pgreflect.persisted_queries (dbsetup) so that every instance knows what one was sent, at most max of
// them, the least recently used evicted first.
type persistedQueries struct {
	pool *pgxpool.Pool
	// wait bounds a lookup or a store, its wait for a connection included: a database that does not answer
	// must not hold the request longer.
	wait  time.Duration
	max   int
	local *lru.Cache[string, string]
	log   *slog.Logger
	// missing is set once the database turns out to lack the functions (set up by an older pgreflect): the
	// server then says it does not support persisted queries, and clients send documents, until the next schema
	// change (`pgreflect setup` adding them is one).
	missing atomic.Bool
}

// schemaChanged has the next request ask the database again for the functions it lacked; nil: off.
func (p *persistedQueries) schemaChanged() {
	if p != nil {
		p.missing.Store(false)
	}
}

// newPersistedQueries returns the store of at most max documents, or nil when max is 0 (off).
func newPersistedQueries(pool *pgxpool.Pool, max int, wait time.Duration, log *slog.Logger) *persistedQueries {
	if max <= 0 {
		return nil
	}
	local, err := lru.New[string, string](localPersistedEntries)
	if err != nil {
		panic(err) // a positive size
	}
	return &persistedQueries{pool: pool, wait: wait, max: max, local: local, log: log}
}

// apqExtension is the part of a request's extensions the protocol uses.
type apqExtension struct {
	PersistedQuery *struct {
		Version    int    `json:"version"`
		SHA256Hash string `json:"sha256Hash"`
	} `json:"persistedQuery"`
}

// apqRefusal is an answer of the protocol in Apollo Server's shape, message first:
// {"errors":[{"message":"PersistedQueryNotFound","extensions":{"code":"PERSISTED_QUERY_NOT_FOUND"}}]}.
func apqRefusal(status int, message, code string) *refusal {
	type extensions struct {
		Code string `json:"code"`
	}
	type graphQLError struct {
		Message    string     `json:"message"`
		Extensions extensions `json:"extensions"`
	}
	b, _ := json.Marshal([]graphQLError{{message, extensions{code}}})
	return &refusal{status: status, errors: b,
		uncacheable: code == codePersistedQueryNotFound || code == codePersistedQueryNotSupport}
}

// resolve completes req when it names a persisted query: a hash alone takes the stored document, a hash with
// its document stores it. It returns the protocol's refusal for the client, or an error when the database
// failed. p may be nil (off).
func (p *persistedQueries) resolve(ctx context.Context, req *wireRequest) (*refusal, error) {
	if len(req.Extensions) == 0 || string(req.Extensions) == "null" {
		return nil, nil
	}
	var ext apqExtension
	if err := json.Unmarshal(req.Extensions, &ext); err != nil {
		return apqRefusal(http.StatusBadRequest, msgExtensionsNotObject, codeBadRequest), nil
	}
	pq := ext.PersistedQuery
	if pq == nil {
		return nil, nil
	}
	if p == nil || p.missing.Load() {
		return apqRefusal(http.StatusOK, msgPersistedQueryNotSupported, codePersistedQueryNotSupport), nil
	}
	if pq.Version != persistedQueryVersion {
		return apqRefusal(http.StatusBadRequest, msgPersistedQueryVersion, codeBadRequest), nil
	}
	hash := pq.SHA256Hash
	if req.Query != "" {
		sum := sha256.Sum256([]byte(req.Query))
		if hex.EncodeToString(sum[:]) != hash {
			return apqRefusal(http.StatusBadRequest, msgPersistedQueryHashMismatch, codeBadRequest), nil
		}
		if !dberr.StorableText(req.Query) {
			return nil, nil // not a document: its parse error follows, and nothing is stored
		}
		if err := p.store(ctx, hash, req.Query); err != nil {
			return p.failed(err)
		}
		obs.SetPersisted(ctx, obs.PersistedRegistered)
		return nil, nil
	}
	doc, found, err := p.lookup(ctx, hash)
	if err != nil {
		return p.failed(err)
	}
	if !found {
		obs.SetPersisted(ctx, obs.PersistedMiss)
		return apqRefusal(http.StatusOK, msgPersistedQueryNotFound, codePersistedQueryNotFound), nil
	}
	obs.SetPersisted(ctx, obs.PersistedHit)
	req.Query = doc
	return nil, nil
}

// failed turns a database error into PersistedQueryNotSupported when the database lacks the store, and
// passes any other through.
func (p *persistedQueries) failed(err error) (*refusal, error) {
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == "42883" { // undefined_function
		if !p.missing.Swap(true) {
			p.log.Warn("persisted queries are off: the database lacks pgreflect.persisted_query; run `pgreflect setup` to add it "+
				"(they are back once it has)",
				slog.Any("error", err))
		}
		return apqRefusal(http.StatusOK, msgPersistedQueryNotSupported, codePersistedQueryNotSupport), nil
	}
	return nil, err
}

// isSHA256Hex reports whether hash is how the protocol spells a SHA-256: 64 lowercase hex digits.
func isSHA256Hex(hash string) bool {
	if len(hash) != sha256.Size*2 {
		return false
	}
	return strings.IndexFunc(hash, func(c rune) bool { return !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') }) < 0
}

// lookup finds the document of hash: in this instance's copy, else in the database.
func (p *persistedQueries) lookup(ctx context.Context, hash string) (string, bool, error) {
	if !isSHA256Hex(hash) {
		return "", false, nil // no document has such a hash
	}
	if doc, ok := p.local.Get(hash); ok {
		return doc, true, nil
	}
	doc, found, err := queryDocument(ctx, p.pool, p.wait, `select pgreflect.persisted_query($1)`, hash)
	if err != nil {
		return "", false, fmt.Errorf("read persisted query: %w", err)
	}
	if found {
		p.remember(hash, doc)
	}
	return doc, found, nil
}

// queryDocument runs a lookup of schema pgreflect that answers a document's text or null, within wait.
func queryDocument(ctx context.Context, pool *pgxpool.Pool, wait time.Duration, sql, key string) (string, bool, error) {
	if !dberr.StorableText(key) {
		return "", false, nil // no document is stored under it
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var doc *string
	if err := pool.QueryRow(ctx, sql, key).Scan(&doc); err != nil || doc == nil {
		return "", false, err
	}
	return *doc, true, nil
}

// store keeps doc under hash (already checked to be its SHA-256) for every instance.
func (p *persistedQueries) store(ctx context.Context, hash, doc string) error {
	if _, ok := p.local.Get(hash); ok {
		return nil // stored by this instance already
	}
	ctx, cancel := context.WithTimeout(ctx, p.wait)
	defer cancel()
	if _, err := p.pool.Exec(ctx, `select pgreflect.persist_query($1, $2, $3)`, hash, doc, p.max); err != nil {
		return fmt.Errorf("store persisted query: %w", err)
	}
	p.remember(hash, doc)
	return nil
}

func (p *persistedQueries) remember(hash, doc string) {
	if len(doc) <= localPersistedMaxBytes {
		p.local.Add(hash, doc)
	}
}
