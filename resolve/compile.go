package resolve

import (
	"bytes"
	"container/list"
	"context"
	"slices"
	"sort"
	"sync"

	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/sqlgen"
)

// compiled is a request made ready to run against one schema. It is the outcome of parsing, validation,
// planning and SQL generation, which depend on nothing but the schema, the document, the operation name and
// the variables, so it is kept and reused for the next identical request.
type compiled struct {
	// response is the whole answer when nothing needs to run: a request-level failure, or an answer made of
	// values known without the database (__typename, introspection).
	response []byte
	stmts    []statement
	// roots are the response's root fields in the order the response writes them (jsonb's key order); each
	// is a value rendered in advance or the result at index result.
	roots []compiledRoot
	// errors is the rendered "errors" list of field errors, or nil.
	errors []byte
	// reads are the relations a subscription reads (live queries only).
	reads Reads
	// stream reshapes the answer of a stream subscription.
	stream *stream
}

type compiledRoot struct {
	name   string // the response key
	key    []byte // the key rendered as a JSON string, with ": " after it
	result int    // index into the statements' results, or -1 for value
	// verbatim says that the result is written as it is, without the layout pass (statement.verbatim).
	verbatim bool
	value    []byte
	// tree is the value before it is written, for a request without statements (respondTrees)
	tree any
}

// planning is what the engine's settings decide of a compiled request: the limits that bound it, and whether
// its to-one records may be joined to the rows they belong to, which costs Postgres more to plan than a
// subquery per row and pays where a statement is prepared and its plan reused (StatementsPrepared); in the
// unnamed mode every execution is planned (bench/findings.md, "To-one records joined to the page").
type planning struct {
	limits      Limits
	joinRecords bool
	// jsonScalar writes values into JSON through JSON_SCALAR where the schema's server has it (sqlgen's
	// Server). The engine's requests always do; sqlgen's goldens are written without, so that they are the same
	// on every version of PostgreSQL.
	jsonScalar bool
	// introWorkers is how many goroutines write the types of an introspection answer (see typeListInParts);
	// 1 or less writes them on the request's own.
	introWorkers int
}

// jsonScalarSince is the server_version_num of the first PostgreSQL with JSON_SCALAR.
const jsonScalarSince = 170000

// request starts the planning of an operation of doc on schema.
func (p planning) request(schema *gqlschema.Schema, doc *ast.QueryDocument, op *ast.OperationDefinition,
	variables map[string]any) *request {
	server := sqlgen.Server{
		JSONScalar: p.jsonScalar && schema.Catalog != nil && schema.Catalog.ServerVersion >= jsonScalarSince,
	}
	return &request{schema: schema, doc: doc, op: op, variables: variables, limits: p.limits, joinRecords: p.joinRecords,
		server: server, introWorkers: p.introWorkers}
}

// compile turns a request into statements and the recipe of its response.
func compile(ctx context.Context, schema *gqlschema.Schema, p planning, req Request) *compiled {
	doc, op, variables, err := parse(req.Query, req.OperationName, req.Variables)
	if err != nil {
		return &compiled{response: errorsOnly(err)}
	}
	r := p.request(schema, doc, op, variables)
	if op.Operation == ast.Subscription {
		// A request answered once cannot subscribe: that takes a WebSocket or an event stream.
		return &compiled{response: errorsOnly(errSubscription())}
	}
	if op.Operation == ast.Mutation {
		if schema.Mutation == nil {
			return &compiled{response: dataNull(errNoMutationType())}
		}
		stmts, plans, err := r.planMutation()
		if err != nil {
			return &compiled{response: dataNull(err)}
		}
		return assemble(stmts, plans, nil)
	}
	roots, err := r.collect(op.SelectionSet, "Query")
	if err != nil {
		return &compiled{response: errorsOnly(err)}
	}
	if len(roots) == 0 {
		return &compiled{response: errorsOnly(errEmptySelection())}
	}
	var plans []*rootPlan
	var fieldErrors []error
	for _, sel := range roots {
		if ctx.Err() != nil {
			return &compiled{response: errorsOnly(ctx.Err())}
		}
		p, err := r.planQueryField(sel)
		if err != nil {
			fieldErrors = append(fieldErrors, err)
			continue
		}
		plans = append(plans, p)
	}
	if len(plans) == 0 {
		return &compiled{response: encodeResponse(nil, fieldErrors)}
	}
	return r.compiledFromPlans(plans, fieldErrors)
}

// compiledFromPlans makes the statement of the planned root fields (one statement with a column per field that
// needs SQL) and the recipe of the response.
func (r *request) compiledFromPlans(plans []*rootPlan, fieldErrors []error) *compiled {
	var sqlFields []sqlgen.RootField
	for _, p := range plans {
		if p.sql != nil {
			sqlFields = append(sqlFields, *p.sql)
		}
	}
	var stmts []statement
	if len(sqlFields) > 0 {
		q := sqlgen.Query(r.server, sqlFields)
		if err := r.limits.checkParameters(len(q.Args)); err != nil {
			return &compiled{response: dataNull(err)}
		}
		stmts = []statement{{sql: q.SQL, args: q.Args, row: true, verbatim: q.Verbatim}}
	}
	return assemble(stmts, plans, fieldErrors)
}

// assemble records how the response is written: root fields with SQL take the statements' results in order.
func assemble(stmts []statement, plans []*rootPlan, fieldErrors []error) *compiled {
	c := &compiled{stmts: stmts}
	var verbatim []bool // of each result, in order: the columns of each statement
	for _, s := range stmts {
		verbatim = append(verbatim, s.verbatim...)
	}
	next := 0
	for _, p := range plans {
		var key bytes.Buffer
		writeString(&key, p.key)
		key.WriteString(": ")
		root := compiledRoot{name: p.key, key: key.Bytes(), result: -1}
		switch {
		case p.sql != nil:
			root.result = next
			root.verbatim = next < len(verbatim) && verbatim[next]
			next++
		case len(stmts) == 0:
			root.tree = p.value
		default:
			v := bytes.NewBuffer(make([]byte, 0, jsonLen(p.value)))
			writeJSON(v, p.value)
			root.value = v.Bytes()
		}
		c.roots = append(c.roots, root)
	}
	// Keys are unique once fields are merged, so a stable sort gives jsonb's order.
	sort.SliceStable(c.roots, func(i, j int) bool { return sqlgen.JSONBKeyLess(c.roots[i].name, c.roots[j].name) })
	if len(fieldErrors) > 0 {
		var b bytes.Buffer
		list := make([]any, len(fieldErrors))
		for i, e := range fieldErrors {
			list[i] = map[string]any{"message": e.Error()}
		}
		writeJSON(&b, list)
		c.errors = b.Bytes()
	}
	if len(stmts) == 0 {
		c.response = c.respondTrees()
		// The answer is whole: the parts it was written from would only double what a kept entry holds (an
		// introspection answer is tens of megabytes).
		c.roots, c.errors = nil, nil
	}
	return c
}

// respondTrees is respond for a request without statements, each root's value written straight into the
// answer, which is allocated once at its size: written apart first, an introspection answer of 87 MB at 5,000
// tables was 87 MB more to allocate and copy. It is made with make, not Buffer.Grow: Grow clears what it
// allocates, in one call that the garbage collector cannot stop (it spun on the other core, waiting), and the
// first introspection answer at 5,000 tables took 0.3 s longer for it (1.15 s against 0.85).
func (c *compiled) respondTrees() []byte {
	size := 16 + len(c.errors)
	for _, r := range c.roots {
		size += len(r.key) + jsonLen(r.tree)
	}
	out := bytes.NewBuffer(make([]byte, 0, size))
	out.WriteString(`{"data": {`)
	for i, r := range c.roots {
		if i > 0 {
			out.WriteString(", ")
		}
		out.Write(r.key)
		writeJSON(out, r.tree)
	}
	out.WriteByte('}')
	if c.errors != nil {
		out.WriteString(`, "errors": `)
		out.Write(c.errors)
	}
	out.WriteByte('}')
	return out.Bytes()
}

// respond writes {"data": {...}, "errors": [...]} as encodeResponse would, from the statements' results.
func (c *compiled) respond(results [][]byte) []byte {
	size := 16 + len(c.errors)
	for _, r := range c.roots {
		size += len(r.key) + len(r.value)
		if r.result >= 0 && r.result < len(results) {
			size += len(results[r.result])
		}
	}
	out := make([]byte, 0, size)
	out = append(out, `{"data": {`...)
	for i, r := range c.roots {
		if i > 0 {
			out = append(out, ", "...)
		}
		out = append(out, r.key...)
		switch {
		case r.result < 0:
			out = append(out, r.value...)
		case r.result >= len(results) || results[r.result] == nil:
			out = append(out, "null"...)
		case r.verbatim:
			out = append(out, results[r.result]...)
		default:
			out = appendJSONB(out, results[r.result])
		}
	}
	out = append(out, '}')
	if c.errors != nil {
		out = append(out, `, "errors": `...)
		out = append(out, c.errors...)
	}
	return append(out, '}')
}

// compiledCache holds compiled requests, bounded by the bytes they hold (query, variables, SQL, rendered
// answers), least recently used first out: a client sending many large distinct queries cannot make it grow
// past its budget. Requests larger than maxCompiledKey are compiled every time, and so are entries larger than
// maxEntry, except answers that need no database (introspection), which large keeps.
type compiledCache struct {
	maxBytes int
	// maxEntry bounds one entry, so that one cannot take a large share of the budget.
	maxEntry int
	// large keeps the answers that need no database and exceed maxEntry, in a budget of their own: the
	// introspection answer of a schema of thousands of tables is tens of megabytes, costs seconds to build, and
	// stays valid for as long as the role's schema does (the cache is purged with the schemas). nil when
	// disabled.
	large *compiledCache

	mu      sync.Mutex
	bytes   int
	order   *list.List // of *compiledEntry, most recently used first
	entries map[compiledKey]*list.Element
}

type compiledEntry struct {
	key   compiledKey
	value *compiled
	size  int
}

// maxCompiledKey bounds the size of a request (query plus variables) the cache keeps.
const maxCompiledKey = 32 << 10

type compiledKey struct {
	// schema identifies the generation, role and search path: each has its own schema value.
	schema                      *gqlschema.Schema
	query, operation, variables string
	// live separates a subscription compiled as a live query from the same document sent as a request, which
	// is refused.
	live bool
	// cursor is a stream's position (Request.StreamCursor).
	cursor string
}

// newCompiledCache returns a cache of maxBytes for compiled requests and, when largeBytes is positive, one of
// largeBytes for answers too large for the first that need no database.
func newCompiledCache(maxBytes, largeBytes int) *compiledCache {
	c := newLRU(maxBytes, maxBytes/8)
	if maxBytes > 0 && largeBytes > 0 {
		c.large = newLRU(largeBytes, largeBytes)
	}
	return c
}

func newLRU(maxBytes, maxEntry int) *compiledCache {
	return &compiledCache{maxBytes: maxBytes, maxEntry: maxEntry, order: list.New(), entries: map[compiledKey]*list.Element{}}
}

// get returns the compiled request, compiling it on a miss. A compilation cut short by ctx is not kept.
func (c *compiledCache) get(ctx context.Context, schema *gqlschema.Schema, req Request, live bool, compileFn func() *compiled) *compiled {
	span := startCompile(ctx)
	defer span.End()
	if c.maxBytes <= 0 || len(req.Query)+len(req.Variables) > maxCompiledKey {
		noteCompileCache(span, false)
		return compileFn()
	}
	key := compiledKey{schema: schema, query: req.Query, operation: req.OperationName, variables: string(req.Variables), live: live,
		cursor: string(req.StreamCursor)}
	if v := c.lookup(key); v != nil {
		noteCompileCache(span, true)
		return v
	}
	if c.large != nil {
		if v := c.large.lookup(key); v != nil {
			noteCompileCache(span, true)
			return v
		}
	}
	noteCompileCache(span, false)
	v := compileFn()
	if ctx.Err() != nil {
		return v
	}
	size := v.size() + len(key.query) + len(key.operation) + len(key.variables)
	switch {
	case size <= c.maxEntry:
		c.put(key, v, size)
	case c.large != nil && v.stmts == nil && size <= c.large.maxEntry:
		c.large.put(key, v, size)
	}
	return v
}

func (c *compiledCache) lookup(key compiledKey) *compiled {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil
	}
	c.order.MoveToFront(el)
	return el.Value.(*compiledEntry).value
}

func (c *compiledCache) put(key compiledKey, v *compiled, size int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; ok {
		return // compiled concurrently by another request
	}
	c.entries[key] = c.order.PushFront(&compiledEntry{key: key, value: v, size: size})
	c.bytes += size
	for c.bytes > c.maxBytes {
		oldest := c.order.Back()
		e := oldest.Value.(*compiledEntry)
		c.order.Remove(oldest)
		delete(c.entries, e.key)
		c.bytes -= e.size
	}
}

// compileTracer names the compile spans' instrumentation scope.
const compileTracer = "github.com/pgreflect/pgreflect/resolve"

// startCompile starts the span of a request's compilation, graphql.compile, as a child of the request's span
// when that one records (a traced request or refresh), with the provider that made it: the engine needs no
// tracing configuration of its own. Otherwise it returns a span that does nothing, so that tracing off costs
// this check.
func startCompile(ctx context.Context) trace.Span {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return trace.SpanFromContext(context.Background()) // no-op; never the parent, which the caller ends
	}
	_, span := parent.TracerProvider().Tracer(compileTracer).Start(ctx, "graphql.compile")
	return span
}

// noteCompileCache records on the compile span whether the compiled form came from the cache (a miss is the
// parse, validation and planning that a hit skips, and the span's duration is theirs).
func noteCompileCache(span trace.Span, cached bool) {
	if span.IsRecording() {
		span.SetAttributes(attribute.Bool("pgreflect.compile_cached", cached))
	}
}

// purge empties the cache and its cache of large answers.
func (c *compiledCache) purge() {
	if c.large != nil {
		c.large.purge()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order.Init()
	clear(c.entries)
	c.bytes = 0
}

// keepOnly empties the cache, and its cache of large answers, but for the requests compiled for schemas: those a
// new schema generation takes up.
func (c *compiledCache) keepOnly(schemas []*gqlschema.Schema) {
	keep := make(map[*gqlschema.Schema]bool, len(schemas))
	for _, s := range schemas {
		keep[s] = true
	}
	c.drop(func(s *gqlschema.Schema) bool { return !keep[s] })
}

// forget drops the requests compiled for schemas, which are stale.
func (c *compiledCache) forget(schemas []*gqlschema.Schema) {
	if len(schemas) == 0 {
		return
	}
	c.drop(func(s *gqlschema.Schema) bool { return slices.Contains(schemas, s) })
}

// drop removes the entries, here and in the cache of large answers, whose schema stale says is.
func (c *compiledCache) drop(stale func(*gqlschema.Schema) bool) {
	if c.large != nil {
		c.large.drop(stale)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.order.Front(); el != nil; {
		next := el.Next()
		if e := el.Value.(*compiledEntry); stale(e.key.schema) {
			c.order.Remove(el)
			delete(c.entries, e.key)
			c.bytes -= e.size
		}
		el = next
	}
}

// size approximates the bytes a compiled request holds.
func (c *compiled) size() int {
	n := 256 + len(c.response) + len(c.errors)
	for _, s := range c.stmts {
		n += len(s.sql) + 16*len(s.args)
		for _, a := range s.args {
			switch a := a.(type) {
			case string:
				n += len(a)
			case []*string:
				for _, v := range a {
					n += 16
					if v != nil {
						n += len(*v)
					}
				}
			}
		}
	}
	for _, r := range c.roots {
		n += 64 + len(r.key) + len(r.value)
	}
	return n
}
