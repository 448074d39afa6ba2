package reflect

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Cache keeps values derived from the catalog (the catalog itself, or a schema built from it) by
// (generation, role, search_path). The generation advances on every schema
// change announcement, which retires every older entry at once. It is bounded and safe for concurrent use;
// concurrent misses on one key load the catalog once.
type Cache[V any] struct {
	max int

	mu         sync.Mutex
	generation uint64
	entries    map[cacheKey]*cacheEntry[V]
	// carried are the values of the generation before, which Renew kept for a Get of the same key (by key
	// without its generation).
	carried map[cacheKey]*cacheEntry[V]
	tick    uint64
}

type cacheKey struct {
	generation uint64
	role       string
	searchPath string
	snapshot   string
}

type cacheEntry[V any] struct {
	ready    chan struct{}
	value    V
	err      error
	lastUsed uint64
}

// NewCache returns a cache holding at most max values (one per role and search_path in practice).
func NewCache[V any](max int) *Cache[V] {
	if max < 1 {
		max = 1
	}
	return &Cache[V]{max: max, entries: map[cacheKey]*cacheEntry[V]{}, carried: map[cacheKey]*cacheEntry[V]{}}
}

// Invalidator is anything Watch can invalidate.
type Invalidator interface{ Invalidate() }

// PrivilegesInvalidator is an Invalidator that can also forget only what depends on the roles' privileges,
// keeping the catalog read every role shares: what a GRANT or REVOKE changes.
type PrivilegesInvalidator interface {
	Invalidator
	InvalidatePrivileges()
}

// InvalidatePrivileges calls c's InvalidatePrivileges, or Invalidate when c has none.
func InvalidatePrivileges(c Invalidator) {
	if p, ok := c.(PrivilegesInvalidator); ok {
		p.InvalidatePrivileges()
		return
	}
	c.Invalidate()
}

// RelationsInvalidator is an Invalidator that can also forget only what it holds of some relations (oids),
// keeping the rest of the catalog read: what DDL and COMMENT on tables, views and their columns change.
type RelationsInvalidator interface {
	Invalidator
	InvalidateRelations(relations []uint32)
}

// InvalidateRelations calls c's InvalidateRelations, or Invalidate when c has none.
func InvalidateRelations(c Invalidator, relations []uint32) {
	if r, ok := c.(RelationsInvalidator); ok {
		r.InvalidateRelations(relations)
		return
	}
	c.Invalidate()
}

// PublicationsInvalidator is an Invalidator that also follows publications, which are no part of the catalog
// (the change feed of live queries decodes one): it is told when one changed.
type PublicationsInvalidator interface {
	Invalidator
	PublicationsChanged()
}

// PublicationsChanged calls c's PublicationsChanged. An Invalidator without it holds nothing a publication
// changes.
func PublicationsChanged(c Invalidator) {
	if p, ok := c.(PublicationsInvalidator); ok {
		p.PublicationsChanged()
	}
}

// How an announcement (dbsetup's event trigger: the version, then what changed) says what changed: privileges
// only, the relations listed (oids, comma-separated; none when only functions or a schema's comment changed),
// or a publication (not a schema change: the version it carries is the one before). Any other announcement is
// of any change.
const (
	privilegesOnly   = " privileges"
	relationsPrefix  = " relations "
	publicationsOnly = " publications"
	// partitionsPrefix lists relations as relationsPrefix does, among them partition trees from their roots,
	// which a server brings up to date with the partitions its last read had of them (Shared.ToRead, as it
	// does for every list): a server that knows no partition trees reads everything instead.
	partitionsPrefix = " partitions "
	// indexesPrefix lists dropped indexes, which a server finds the relations of in its last read
	// (Shared.ToRead): one that knows them not reads everything instead.
	indexesPrefix = " indexes "
)

// announce passes an announcement's payload on to cache.
func announce(cache Invalidator, payload string) {
	if strings.HasSuffix(payload, publicationsOnly) {
		PublicationsChanged(cache)
		return
	}
	if strings.HasSuffix(payload, privilegesOnly) {
		InvalidatePrivileges(cache)
		return
	}
	var list string
	ok := false
	for _, prefix := range []string{relationsPrefix, partitionsPrefix, indexesPrefix} {
		if _, list, ok = strings.Cut(payload, prefix); ok {
			break
		}
	}
	if ok {
		relations := []uint32{} // none: functions or a schema comment changed, which every read reads whole
		for field := range strings.SplitSeq(list, ",") {
			if list == "" {
				break
			}
			oid, err := strconv.ParseUint(field, 10, 32)
			if err != nil {
				cache.Invalidate() // not ours to read: reload everything rather than miss a change
				return
			}
			relations = append(relations, uint32(oid))
		}
		InvalidateRelations(cache, relations)
		return
	}
	cache.Invalidate()
}

// Invalidate retires every cached catalog; the next request of each role loads afresh.
func (c *Cache[V]) Invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.generation++
	clear(c.entries)
	clear(c.carried)
}

// Renew starts a new generation as Invalidate does, but carries the values loaded in the generation it ends over
// to it, and returns them: the next Get of such a value's key takes it up instead of loading. It is for values
// whose keys name all they are made from (a schema built from one catalog read and one answer of privileges,
// keyed by both), which a change may leave as they were. What the generation before carried and no Get took up
// is dropped.
func (c *Cache[V]) Renew() (carried []V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.carried)
	for key, e := range c.entries {
		select {
		case <-e.ready:
			if e.err == nil {
				key.generation = 0
				c.carried[key] = e
				carried = append(carried, e.value)
			}
		default: // still loading, for the generation it ends
		}
	}
	c.generation++
	clear(c.entries)
	return carried
}

// Drop drops the value Renew carried over for role and searchPath, if no Get took it up, and returns it: once
// nothing will take it up, it need not wait for the next Renew.
func (c *Cache[V]) Drop(role string, searchPath []string) (dropped []V) {
	key := cacheKey{role: role, searchPath: strings.Join(searchPath, ",")}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.carried[key]; ok {
		delete(c.carried, key)
		dropped = append(dropped, e.value)
	}
	return dropped
}

// Retire drops the values Renew carried over for searchPath that no Get took up, and returns them: once a
// change is known to have made them stale, they need not wait for the next Renew.
func (c *Cache[V]) Retire(searchPath []string) (dropped []V) {
	path := strings.Join(searchPath, ",")
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, e := range c.carried {
		if key.searchPath == path {
			dropped = append(dropped, e.value)
			delete(c.carried, key)
		}
	}
	return dropped
}

// Generation is the number of invalidations so far.
func (c *Cache[V]) Generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.generation
}

// Get returns the value for role and search path, calling load on a miss. A failed load is not cached. A load
// shared with another caller that failed because that caller's context was cancelled (its client went away)
// is run again for this one.
func (c *Cache[V]) Get(ctx context.Context, role string, searchPath []string, load func(context.Context) (V, error)) (V, error) {
	return c.GetInSnapshot(ctx, "", role, searchPath, load)
}

// GetInSnapshot is Get for a value read in the database snapshot snapshot (pg_current_snapshot()'s text), which
// a transaction of repeatable read or serializable keeps to its end: two reads in equal snapshots see the same
// committed catalog, whatever changed since.
func (c *Cache[V]) GetInSnapshot(ctx context.Context, snapshot, role string, searchPath []string, load func(context.Context) (V, error)) (V, error) {
	for {
		v, theirs, err := c.get(ctx, cacheKey{role: role, searchPath: strings.Join(searchPath, ","), snapshot: snapshot}, load)
		// Only a cancellation: a load cut by its deadline met a server that did not answer, which the
		// waiters should hear about at once rather than wait as long again.
		if theirs && ctx.Err() == nil && errors.Is(err, context.Canceled) {
			continue
		}
		return v, err
	}
}

// get is one try of Get for key, whose generation it sets; theirs reports whether the load ran for another
// caller.
func (c *Cache[V]) get(ctx context.Context, key cacheKey, load func(context.Context) (V, error)) (V, bool, error) {
	c.mu.Lock()
	key.generation = c.generation
	c.tick++
	e, ok := c.entries[key]
	if !ok {
		carriedKey := key
		carriedKey.generation = 0
		if e, ok = c.carried[carriedKey]; ok {
			delete(c.carried, carriedKey)
			c.evictLocked()
			c.entries[key] = e
		}
	}
	if ok {
		e.lastUsed = c.tick
		c.mu.Unlock()
		select {
		case <-e.ready:
			return e.value, true, e.err
		case <-ctx.Done():
			var zero V
			return zero, false, ctx.Err()
		}
	}
	e = &cacheEntry[V]{ready: make(chan struct{}), lastUsed: c.tick}
	c.evictLocked()
	c.entries[key] = e
	c.mu.Unlock()

	e.value, e.err = load(ctx)
	close(e.ready)
	if e.err != nil {
		c.mu.Lock()
		if c.entries[key] == e {
			delete(c.entries, key)
		}
		c.mu.Unlock()
	}
	return e.value, false, e.err
}

func (c *Cache[V]) evictLocked() {
	for len(c.entries) >= c.max {
		var oldest cacheKey
		var oldestTick uint64 = ^uint64(0)
		for k, e := range c.entries {
			if e.lastUsed < oldestTick {
				oldest, oldestTick = k, e.lastUsed
			}
		}
		delete(c.entries, oldest)
	}
}

// Watch invalidates cache whenever a schema change is announced on channel, until ctx ends; a change of
// privileges only (GRANT, REVOKE) or of some relations only invalidates only that, when cache can
// (PrivilegesInvalidator, RelationsInvalidator). It holds one
// dedicated connection that LISTENs; when the connection is lost it reconnects and invalidates, since
// announcements may have been missed meanwhile. ready, if not nil, is closed once the first LISTEN is active;
// logf receives connection failures.
func Watch(ctx context.Context, connect func(context.Context) (*pgx.Conn, error), channel string, cache Invalidator,
	ready chan<- struct{}, logf func(format string, args ...any)) {
	const firstBackoff = 100 * time.Millisecond
	backoff := firstBackoff
	for {
		listened, err := listen(ctx, connect, channel, cache, &ready)
		if ctx.Err() != nil {
			return
		}
		// A connection that listened was a recovery: the next loss is a new outage, not one that goes on.
		if listened {
			backoff = firstBackoff
		}
		logf("schema watch: %v (retrying in %s)", err, backoff)
		cache.Invalidate()
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		if backoff < 5*time.Second {
			backoff *= 2
		}
	}
}

// listen LISTENs on one connection and announces what arrives until the connection fails; listened reports
// whether the LISTEN took effect.
func listen(ctx context.Context, connect func(context.Context) (*pgx.Conn, error), channel string, cache Invalidator, ready *chan<- struct{}) (listened bool, err error) {
	conn, err := connect(ctx)
	if err != nil {
		return false, fmt.Errorf("connect for schema watch: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "listen "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return false, fmt.Errorf("listen: %w", err)
	}
	// Changes made before LISTEN took effect would otherwise go unnoticed.
	cache.Invalidate()
	if *ready != nil {
		close(*ready)
		*ready = nil
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return true, nil
			}
			return true, fmt.Errorf("wait for schema change: %w", err)
		}
		announce(cache, n.Payload)
	}
}
