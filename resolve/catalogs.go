package resolve

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/pgreflect/pgreflect/reflect"
)

// catalogReads keeps the catalog read that every role of a search path shares, and brings it up to date after
// a change: after a change of some relations only (reflect.RelationsInvalidator) the next read asks for those
// relations and merges them into the last read (reflect.Shared.Update), after any other change it reads the
// whole catalog again. A read that finds what the last one found is the last one again, serial and all: the
// schemas built from it stay good (DDL in a schema the API does not show, a partition, a new empty schema).
type catalogReads struct {
	cache *reflect.Cache[*catalogRead]
	// replaced, when set, is told of a search path whose read changed: what was built from the one before is
	// stale.
	replaced func(searchPath []string)

	mu sync.Mutex
	// reads counts the reads made, to number them (catalogRead.serial).
	reads uint64
	// latest is the last read of each search path (by its key); changed are the relations changed since, and
	// whole the search paths whose next read reads everything (after a change not of relations only).
	latest  map[string]*catalogRead
	changed map[string]map[uint32]bool
	whole   map[string]bool
}

// catalogRead is one read of a search path's catalog. Its serial tells it from every other read: a schema is
// built from one read, and a request that took its read before a change may build after the change, when the
// next request has taken the new read. Keyed by the serial, the stale build cannot stand for the new one.
type catalogRead struct {
	*reflect.Shared
	serial uint64
}

// sharedCatalogs bounds the catalog reads kept: one per search path, and servers use one or two.
const sharedCatalogs = 4

func newCatalogReads(replaced func(searchPath []string)) *catalogReads {
	return &catalogReads{cache: reflect.NewCache[*catalogRead](sharedCatalogs), replaced: replaced,
		latest: map[string]*catalogRead{}, changed: map[string]map[uint32]bool{}, whole: map[string]bool{}}
}

// get returns the catalog of searchPath for this schema generation; read runs the catalog query for the given
// relations (nil: all of them; empty: none, and the functions, types and schemas that every read reads) and
// types (nil: none but those the relations and functions use).
func (c *catalogReads) get(ctx context.Context, searchPath []string, read func(ctx context.Context, relations, types []uint32) (*reflect.Answer, error)) (*catalogRead, error) {
	return c.cache.Get(ctx, "", searchPath, func(ctx context.Context) (*catalogRead, error) {
		key := strings.Join(searchPath, ",")
		c.mu.Lock()
		generation := c.cache.Generation()
		last := c.latest[key]
		changed, partly := c.changed[key]
		partly = partly && last != nil && !c.whole[key]
		relations := make([]uint32, 0, len(changed)) // not nil: nil reads every relation
		for oid := range changed {
			relations = append(relations, oid)
		}
		c.mu.Unlock()

		var shared *reflect.Shared
		if partly {
			relations = last.ToRead(relations)
			answer, err := read(ctx, relations, last.TypeOIDs())
			if err != nil {
				return nil, err
			}
			if shared, err = last.Update(answer, relations); err != nil && !errors.Is(err, reflect.ErrWholeReadNeeded) {
				return nil, err
			}
		}
		if shared == nil {
			answer, err := read(ctx, nil, nil)
			if err != nil {
				return nil, err
			}
			if shared, err = reflect.Parse(answer); err != nil {
				return nil, err
			}
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		got := last
		if last == nil || !last.Equal(shared) {
			c.reads++
			got = &catalogRead{Shared: shared, serial: c.reads}
			if last != nil && c.replaced != nil {
				c.replaced(searchPath)
			}
		}
		// A change announced meanwhile may not be in this read: the next read starts from the last again.
		if c.cache.Generation() == generation {
			c.latest[key] = got
			delete(c.changed, key)
			delete(c.whole, key)
		}
		return got, nil
	})
}

// invalidate retires every read: the next one reads the whole catalog. The generation advances under mu, with
// the reads marked: a read that finished in between would otherwise see its generation unchanged and keep
// itself as the latest, with the change forgotten, for the next change of relations to build on.
func (c *catalogReads) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key := range c.latest {
		c.whole[key] = true
	}
	clear(c.changed)
	c.cache.Invalidate()
}

// invalidateRelations retires every read, to be brought up to date by reading relations only (the generation
// advances under mu, as in invalidate).
func (c *catalogReads) invalidateRelations(relations []uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key := range c.latest {
		if c.changed[key] == nil {
			c.changed[key] = map[uint32]bool{}
		}
		for _, oid := range relations {
			c.changed[key][oid] = true
		}
	}
	c.cache.Invalidate()
}
