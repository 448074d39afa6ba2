package resolve

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/pgreflect/pgreflect/gqlschema"
)

// The compiled-request cache stays within its byte budget however many distinct requests arrive, keeps the
// recently used ones, compiles a hit no more, and does not keep what a cancelled request compiled.
func TestCompiledCacheIsBoundedByBytes(t *testing.T) {
	const budget = 64 << 10
	c := newCompiledCache(budget, 0)
	schema := &gqlschema.Schema{}
	ctx := context.Background()
	compiles := 0
	compileOf := func(sqlBytes int) func() *compiled {
		return func() *compiled {
			compiles++
			return &compiled{stmts: []statement{{sql: strings.Repeat("x", sqlBytes)}}}
		}
	}
	hot := Request{Query: "{ hot }"}
	for i := 0; i < 1000; i++ {
		c.get(ctx, schema, Request{Query: "{ q" + strconv.Itoa(i) + " }"}, false, compileOf(2000))
		c.get(ctx, schema, hot, false, compileOf(100))
		if c.bytes > budget {
			t.Fatalf("after %d requests the cache holds %d bytes, budget %d", i+1, c.bytes, budget)
		}
	}
	if compiles != 1000+1 {
		t.Errorf("%d compilations for 1000 distinct requests and one repeated 1000 times, want 1001", compiles)
	}
	// An entry that would take more than an eighth of the budget is not kept.
	big := Request{Query: "{ big }"}
	c.get(ctx, schema, big, false, compileOf(budget/4))
	c.get(ctx, schema, big, false, compileOf(budget/4))
	if compiles != 1003 {
		t.Errorf("a large entry was kept")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	c.get(cancelled, schema, Request{Query: "{ cut }"}, false, compileOf(10))
	c.get(ctx, schema, Request{Query: "{ cut }"}, false, compileOf(10))
	if compiles != 1005 {
		t.Errorf("what a cancelled request compiled was kept")
	}
	c.purge()
	if c.bytes != 0 || len(c.entries) != 0 || c.order.Len() != 0 {
		t.Errorf("purge left %d bytes, %d entries", c.bytes, len(c.entries))
	}
}
