package resolve

import (
	"hash/maphash"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// Source is a database the engine answers from, with the engine of its schemas: the primary (Options.Pool),
// or a read replica (Options.Replicas), which has an engine of its own because its schema may lag the
// primary's for a while after a change.
type Source struct {
	// Pool connects to the source's database; nil for the primary of an engine built without a pool.
	Pool *pgxpool.Pool
	// Engine answers requests on Pool's connections.
	Engine *Engine
	// Replica numbers the read replicas from 1 in the order of Options.Replicas; 0 is the primary.
	Replica int
}

// Sources are the primary, then each read replica in the order of Options.Replicas: Route's Source.Replica
// indexes them.
func (e *Engine) Sources() []Source {
	out := make([]Source, 0, 1+len(e.replicas))
	out = append(out, Source{Pool: e.opts.Pool, Engine: e})
	for i, r := range e.replicas {
		out = append(out, Source{Pool: r.opts.Pool, Engine: r, Replica: i + 1})
	}
	return out
}

// Route says which operation req runs, as the parsed document says (the operation operationName names, else
// the only one), and the source to run it on: queries go to the read replicas in turn, everything else to the
// primary, since a replica cannot write. A document that does not parse, or names no operation of it, counts as a
// query: the source's engine answers what is wrong with it, without the database.
func (e *Engine) Route(req Request) (ast.Operation, Source) {
	op := e.operations.of(req)
	if op != ast.Query || len(e.replicas) == 0 {
		return op, Source{Pool: e.opts.Pool, Engine: e}
	}
	i := int((e.nextReplica.Add(1) - 1) % uint64(len(e.replicas)))
	return op, Source{Pool: e.replicas[i].opts.Pool, Engine: e.replicas[i], Replica: i + 1}
}

// operationKinds remembers the operation each recent (document, operation name) runs, so that routing a request
// parses its document once, not per request. The schema plays no part (the operation's keyword is syntax), so
// one entry serves every role and schema generation and needs no purge on a schema change.
type operationKinds struct {
	// seed is the engine's own: a client cannot make its document hash like another's to take its kind.
	seed  maphash.Seed
	kinds *lru.Cache[uint64, ast.Operation]
}

// rememberedOperationKinds bounds the documents whose kind is kept: 16 bytes each.
const rememberedOperationKinds = 8192

func newOperationKinds() *operationKinds {
	kinds, err := lru.New[uint64, ast.Operation](rememberedOperationKinds)
	if err != nil {
		panic(err) // the size is positive
	}
	return &operationKinds{seed: maphash.MakeSeed(), kinds: kinds}
}

// of is the kind of the operation req runs (see Route).
func (o *operationKinds) of(req Request) ast.Operation {
	var h maphash.Hash
	h.SetSeed(o.seed)
	h.WriteString(req.Query)
	h.WriteByte(0) // a byte that no document names
	h.WriteString(req.OperationName)
	key := h.Sum64()
	if op, ok := o.kinds.Get(key); ok {
		return op
	}
	op := parsedOperation(req)
	o.kinds.Add(key, op)
	return op
}

// parsedOperation parses req's document and picks its operation as compile does (selectOperation).
func parsedOperation(req Request) ast.Operation {
	doc, err := parser.ParseQuery(&ast.Source{Input: req.Query})
	if err != nil {
		return ast.Query
	}
	op, err := selectOperation(doc, req.OperationName)
	if err != nil {
		return ast.Query
	}
	return op.Operation
}
