package resolve

import (
	"cmp"
	"math"

	"github.com/vektah/gqlparser/v2/ast"
)

// Limits bound what one request may ask of the server. The anon key is public, so anyone can send a request:
// without them a 2 KB document whose fragments spread each other through relationships expands to millions of
// fields and takes gigabytes to plan. The document limits are checked on the parsed document, before any
// planning, at a cost proportional to the document's size rather than to its expansion.
//
// A zero field takes its default (DefaultLimits); a negative one switches that limit off.
type Limits struct {
	// MaxFields bounds the fields of the selection once every fragment is spread (counted as if fields of the
	// same name were not merged, so an upper bound of what planning visits). Default 10000. It also sets the
	// budget of the measurement itself (and so of planning, which walks the document the same way):
	// 100 × MaxFields fields and fragment visits.
	MaxFields int
	// MaxDepth bounds the nesting of the expanded selection: `{ a { b } }` is 2 deep. A relationship costs three
	// levels (collection, edges, node). Default 48.
	MaxDepth int
	// MaxAliases bounds the aliased fields of the expanded selection: aliases let a client ask for the same
	// expensive field many times over. Default 1000.
	MaxAliases int
	// MaxParameters bounds the bound parameters of one SQL statement. Postgres refuses more than 65535
	// (the count is a 16-bit field of the protocol), so a larger value is lowered to that. Default 65535.
	MaxParameters int
}

// postgresMaxParameters is the protocol's hard limit on the parameters of one statement.
const postgresMaxParameters = math.MaxUint16

// DefaultLimits are the limits of a zero Limits. They leave room for GraphiQL's introspection query (about 15
// levels, 150 fields) and for pages of nested relationships many times larger than real applications send.
func DefaultLimits() Limits {
	return Limits{MaxFields: 10000, MaxDepth: 48, MaxAliases: 1000, MaxParameters: postgresMaxParameters}
}

// withDefaults fills zero fields with their defaults.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	l.MaxFields = cmp.Or(l.MaxFields, d.MaxFields)
	l.MaxDepth = cmp.Or(l.MaxDepth, d.MaxDepth)
	l.MaxAliases = cmp.Or(l.MaxAliases, d.MaxAliases)
	if l.MaxParameters == 0 || l.MaxParameters > postgresMaxParameters || l.MaxParameters < 0 {
		// Beyond the protocol's limit the statement cannot be sent at all: the limit cannot be switched off.
		l.MaxParameters = postgresMaxParameters
	}
	return l
}

// checkDocument refuses an operation whose expanded selection exceeds the limits.
func (l Limits) checkDocument(doc *ast.QueryDocument, op *ast.OperationDefinition) error {
	l = l.withDefaults()
	m := &measurer{doc: doc, fields: map[*ast.Field]shape{}, fragments: map[string]*fragmentShape{}, budget: -1}
	if l.MaxFields > 0 {
		m.budget = saturatingMul(l.MaxFields, workPerField)
	}
	s := m.level(op.SelectionSet)
	switch {
	case m.budget == 0:
		return errTooComplex(saturatingMul(l.MaxFields, workPerField))
	case l.MaxFields > 0 && s.fields > l.MaxFields:
		return errTooManyFields(l.MaxFields)
	case l.MaxDepth > 0 && s.depth > l.MaxDepth:
		return errTooDeep(l.MaxDepth)
	case l.MaxAliases > 0 && s.aliases > l.MaxAliases:
		return errTooManyAliases(l.MaxAliases)
	}
	return nil
}

// checkParameters refuses a statement that binds more parameters than the limit, before it is sent: Postgres
// would refuse it anyway, with a protocol error that tells the client nothing.
func (l Limits) checkParameters(n int) error {
	l = l.withDefaults()
	if n > l.MaxParameters {
		return errTooManyParameters(n, l.MaxParameters)
	}
	return nil
}

// shape measures an expanded selection. Counts saturate instead of overflowing: twenty fragments that each
// spread the previous one twice already count a million fields, sixty would wrap an int.
type shape struct {
	fields, aliases, depth int
}

// workPerField is the measuring (and planning) work allowed per field of MaxFields. Every level visits each
// fragment it reaches, so a document of many fields over a long chain of spreads costs fields × fragments:
// a 1 MiB body could ask for hundreds of millions of steps while staying under the field limit.
const workPerField = 100

func saturatingMul(a, b int) int {
	if a != 0 && b > math.MaxInt/a {
		return math.MaxInt
	}
	return a * b
}

func saturatingAdd(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

func (s *shape) add(o shape) {
	s.fields = saturatingAdd(s.fields, o.fields)
	s.aliases = saturatingAdd(s.aliases, o.aliases)
	s.depth = max(s.depth, o.depth)
}

// fragmentShape is what a fragment's selection set holds directly (its fields with everything below them), and
// the fragments it spreads at its own level (directly or through inline fragments).
type fragmentShape struct {
	own     shape
	spreads []string
}

// measurer measures the expansion of a document without building it. Planning spreads a fragment once per
// level however often it is spread there (collectInto's visited set), so a level is its own fields plus the
// fields of every fragment reachable from it through spreads, each fragment counted once. Each field's
// sub-selection and each fragment is measured once (memoised), so the cost is the document's size times its
// fragments at worst, whatever the expansion. Fragment cycles were refused by parse.
type measurer struct {
	doc       *ast.QueryDocument
	fields    map[*ast.Field]shape
	fragments map[string]*fragmentShape
	// budget counts down the steps left (fields measured, fragments visited); 0 means it ran out and the
	// measurement stopped, negative means no budget.
	budget int
}

// step spends one unit of the budget and reports whether the measurement may go on.
func (m *measurer) step() bool {
	switch {
	case m.budget < 0:
		return true
	case m.budget == 0:
		return false
	}
	m.budget--
	return m.budget > 0
}

// level measures a selection set as planning sees it: its own fields plus every fragment reachable at its level.
func (m *measurer) level(set ast.SelectionSet) shape {
	var own fragmentShape
	m.direct(set, &own)
	s := own.own
	seen := map[string]bool{}
	stack := own.spreads
	for len(stack) > 0 && m.step() {
		name := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[name] {
			continue
		}
		seen[name] = true
		f := m.fragment(name)
		if f == nil {
			continue
		}
		s.add(f.own)
		stack = append(stack, f.spreads...)
	}
	return s
}

// direct adds the fields of set (and of its inline fragments) to out and records the fragments it spreads.
func (m *measurer) direct(set ast.SelectionSet, out *fragmentShape) {
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			out.own.add(m.field(sel))
		case *ast.InlineFragment:
			m.direct(sel.SelectionSet, out)
		case *ast.FragmentSpread:
			out.spreads = append(out.spreads, sel.Name)
		}
	}
}

// field measures one field with its expanded sub-selection.
func (m *measurer) field(f *ast.Field) shape {
	if s, ok := m.fields[f]; ok {
		return s
	}
	if !m.step() {
		return shape{}
	}
	sub := m.level(f.SelectionSet)
	s := shape{fields: saturatingAdd(sub.fields, 1), aliases: sub.aliases, depth: sub.depth + 1}
	if f.Alias != "" && f.Alias != f.Name {
		s.aliases = saturatingAdd(s.aliases, 1)
	}
	m.fields[f] = s
	return s
}

func (m *measurer) fragment(name string) *fragmentShape {
	if f, ok := m.fragments[name]; ok {
		return f
	}
	def := m.doc.Fragments.ForName(name)
	if def == nil {
		m.fragments[name] = nil
		return nil
	}
	f := &fragmentShape{}
	m.direct(def.SelectionSet, f)
	m.fragments[name] = f
	return f
}
