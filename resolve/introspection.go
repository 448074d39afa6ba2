package resolve

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/sqlgen"
)

// Introspection (contract 1.19): __schema and __type answer from the generated type system the way pg_graphql
// does, quirks included, so that tools built against pg_graphql (GraphiQL, graphql-codegen, Apollo) see the
// same schema:
//   - types are sorted by name and include the introspection meta types;
//   - types of schemas without introspection are hidden, and so is every field whose type is hidden and every
//     function field of such a schema (the data fields keep working);
//   - Query.fields never lists __type or __schema;
//   - enumValues is [] for every non-enum type, interfaces is [] when there are none, isDeprecated is false;
//   - __typename inside a meta object answers what pg_graphql answers: the described type's, field's, input
//     value's or enum value's own name, "__schema" on __Schema and "__Directive" on __Directive;
//   - unknown fields get pg_graphql's messages, which differ per meta type.
//
// Deliberate differences, both so that graphql-js builds a valid client schema from every answer:
//   - arguments and input fields whose type is hidden are hidden too (pg_graphql still lists them, and the
//     filter of a hidden enum, pointing at types it does not list);
//   - __Type.specifiedByURL answers null where pg_graphql fails the whole field (it declares the field but has
//     no resolver for it); graphql-js asks for it with specifiedByUrl: true.
//   - __Type.isOneOf (GraphQL spec draft, graphql-js 16.9+, asked for with oneOf: true) is declared and answers
//     false for input objects and null for other types, where pg_graphql has no such field.

// introSchemaDescription is __Schema.description.
const introSchemaDescription = "Represents the GraphQL schema of the database"

// introspector resolves one __schema or __type root field, in one of two ways. The general path (out == nil)
// builds the answer as a tree of values that writeJSON writes. The fast path (out != nil) writes the same
// JSON text as it goes, without the tree: at 5,000 tables the tree was 148 MB for an answer of 87 MB.
type introspector struct {
	r *request
	// shapes memoises collect: a selection's sub-selections are the same on every object it is resolved for,
	// and the standard introspection query resolves the same few selections thousands of times.
	// A selection is always of one meta type (its field's, on its parent's type), so the pointer is the key:
	// hashing the type's name too took a tenth of the answer's time at 5,000 tables. The shape keeps the
	// type's name all the same, and one for another type is not taken.
	shapes map[*selection]*introShape
	// refs memoises typeValue on the general path, by selection and type reference (in SDL form)
	refs map[introRefKey]*introFields
	// out is where the fast path writes (or counts)
	out *introOut
	// mutation and subscription are the root types when introspection shows them (they have a visible field),
	// else nil.
	mutation, subscription *gqlschema.Type
	// workers is how many goroutines write a type list in parts: the request's introWorkers, and 1 in a part
	// (the parts of a list in a part would be sized by one goroutine's introspector and written by another's).
	workers int
	// partSizes are the sizes of the parts of each type list written in parts (typeListInParts), in the order
	// the lists were sized, which is the order the writing pass takes them in.
	partSizes [][]int
}

type introRefKey struct {
	sel *selection
	ref string
}

func newIntrospector(r *request) *introspector {
	in := &introspector{r: r, shapes: map[*selection]*introShape{}, refs: map[introRefKey]*introFields{}, workers: r.introWorkers}
	if m := r.schema.Mutation; m != nil && !m.Hidden && len(in.fields(m)) > 0 {
		in.mutation = m
	}
	if sub := r.schema.Subscription; sub != nil && len(in.fields(sub)) > 0 {
		in.subscription = sub
	}
	return in
}

// introspect resolves one introspection root field with resolve. It takes the fast path: a first pass only
// counts the answer's bytes, and the answer (an introAnswer) is written by a second pass straight into the
// response, which is allocated once at its size. When the first pass fails, the general path answers: it
// resolves fields in the document's order where the fast path goes in the answer's key order, so its error is
// the one the contract has always given (the first of the document's order, when there are several).
func (r *request) introspect(resolve func(in *introspector) (any, error)) (any, error) {
	in := newIntrospector(r)
	in.startWriting(nil)
	v, err := resolve(in)
	if err != nil {
		return resolve(newIntrospector(r))
	}
	if _, written := v.(introWritten); !written {
		return v, nil // nothing was written: null for a type introspection does not show
	}
	return &introAnswer{in: in, resolve: resolve, size: in.out.n}, nil
}

// startWriting readies the fast path to write into buf, or only to count when buf is nil.
func (in *introspector) startWriting(buf *bytes.Buffer) {
	in.out = &introOut{buf: buf}
}

// introAnswer is an introspection answer the fast path has sized but not written yet: writeJSON writes it
// where the response is being written, and jsonLen is its size.
type introAnswer struct {
	in      *introspector
	resolve func(in *introspector) (any, error)
	size    int
}

// writeTo writes the answer into buf. It cannot fail: the sizing pass made the same calls, on the same
// schema and selections, and none failed.
func (a *introAnswer) writeTo(buf *bytes.Buffer) {
	a.in.startWriting(buf)
	_, _ = a.resolve(a.in)
}

// introWritten is what the fast path's resolvers return for a value they have written themselves.
type introWritten struct{}

// introOut is the fast path's output: buf, or when buf is nil (the sizing pass) only the count of bytes n.
type introOut struct {
	buf *bytes.Buffer
	n   int
}

func (o *introOut) raw(s string) {
	if o.buf == nil {
		o.n += len(s)
		return
	}
	o.buf.WriteString(s)
}

func (o *introOut) value(v any) {
	if o.buf == nil {
		o.n += jsonLen(v)
		return
	}
	writeJSON(o.buf, v)
}

// resolveSchema resolves the __schema root field (the caller has checked that introspection is on).
func (r *request) resolveSchema(sel *selection) (any, error) {
	return r.introspect(func(in *introspector) (any, error) { return in.schemaValue(sel) })
}

func (in *introspector) schemaValue(sel *selection) (any, error) {
	r := in.r
	shape, err := in.collect(sel, "__Schema")
	if err != nil {
		return nil, err
	}
	return in.object(shape, errUnknownSchemaField, func(s *selection) (any, bool, error) {
		switch s.Name {
		case "description":
			return introSchemaDescription, true, nil
		case "types":
			v, err := in.typeList(s, in.typeNames())
			return v, true, err
		case "queryType":
			v, err := in.typeValue(s, gqlschema.Named(r.schema.Query.Name))
			return v, true, err
		case "mutationType":
			if in.mutation == nil {
				return nil, true, nil
			}
			v, err := in.typeValue(s, gqlschema.Named(in.mutation.Name))
			return v, true, err
		case "subscriptionType":
			if in.subscription == nil {
				return nil, true, nil
			}
			v, err := in.typeValue(s, gqlschema.Named(in.subscription.Name))
			return v, true, err
		case "directives":
			v, err := introList(in, s, "__Directive", errUnknownDirectiveField, metaDirectives, in.directiveField)
			return v, true, err
		case "__typename":
			return "__schema", true, nil // pg_graphql answers the root field's name here
		}
		return nil, false, nil
	})
}

// resolveType resolves the __type(name: String) root field: null for unknown and hidden types (the caller has
// checked that introspection is on).
func (r *request) resolveType(sel *selection) (any, error) {
	// pg_graphql's messages: a name that does not coerce to String is "not found", a missing or null one
	// fails its internal check.
	arg := sel.Args["name"]
	if arg == nil {
		return nil, errTypeNameMissing()
	}
	name, ok := arg.(string)
	if !ok {
		return nil, errTypeNameNotString()
	}
	return r.introspect(func(in *introspector) (any, error) { return in.typeValue(sel, gqlschema.Named(name)) })
}

// introShape is a selection's sub-selections for one meta type, with the order their keys take in the answer
// (jsonb's), worked out once: every object of the selection has the same keys.
type introShape struct {
	typeName string // the meta type's
	subs     []*selection
	keys     []string // in the answer's order
	slot     []int    // subs[i]'s place in keys
	// sub is the index in subs of each key's selection (children merges the fields of one key into one)
	sub []int
	// keyText is each key as the fast path writes it: the comma before it if any, the key, the colon
	keyText []string
}

func newIntroShape(typeName string, subs []*selection) *introShape {
	sh := &introShape{typeName: typeName, subs: subs, slot: make([]int, len(subs))}
	for _, s := range subs {
		if !slices.Contains(sh.keys, s.Key) {
			sh.keys = append(sh.keys, s.Key)
		}
	}
	slices.SortFunc(sh.keys, func(a, b string) int {
		if sqlgen.JSONBKeyLess(a, b) {
			return -1
		}
		return 1 // keys are distinct
	})
	sh.sub = make([]int, len(sh.keys))
	for i, s := range subs {
		sh.slot[i] = slices.Index(sh.keys, s.Key)
		sh.sub[sh.slot[i]] = i
	}
	sh.keyText = make([]string, len(sh.keys))
	for i, k := range sh.keys {
		var text bytes.Buffer
		if i > 0 {
			text.WriteString(", ")
		}
		writeString(&text, k)
		text.WriteString(": ")
		sh.keyText[i] = text.String()
	}
	return sh
}

// introFields is a meta object: its fields' values in the order of its keys, the answer's. writeJSON writes it
// without what a map would cost on each of the answer's hundreds of thousands of objects at 5,000 tables (a
// map, and a sort of its keys, each). Names and texts are values as *string (nil for null), which cost
// nothing to put in an interface, where a string cost an allocation each (80 MB at 5,000 tables).
type introFields struct {
	keys   []string
	values []any
}

// object resolves one meta object from its selected fields: a tree's *introFields, or written on the fast
// path. field answers one of them and reports false for a field the meta type does not have, which fails the
// whole root field with pg_graphql's message for that meta type (unknown, given the field's name).
func (in *introspector) object(shape *introShape, unknown func(field string) error, field func(s *selection) (any, bool, error)) (any, error) {
	if in.out == nil {
		out := &introFields{keys: shape.keys, values: make([]any, len(shape.keys))}
		for i, s := range shape.subs {
			v, ok, err := field(s)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, unknown(s.Name)
			}
			out.values[shape.slot[i]] = v
		}
		return out, nil
	}
	o := in.out
	o.raw("{")
	for i, text := range shape.keyText {
		o.raw(text)
		s := shape.subs[shape.sub[i]]
		v, ok, err := field(s)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, unknown(s.Name)
		}
		if _, written := v.(introWritten); !written {
			o.value(v)
		}
	}
	o.raw("}")
	return introWritten{}, nil
}

// introList resolves sel as a list of meta objects of the named meta type, one per item.
func introList[T any](in *introspector, sel *selection, typeName string, unknown func(field string) error, items []T,
	field func(s *selection, item T) (any, bool, error)) (any, error) {
	shape, err := in.collect(sel, typeName)
	if err != nil {
		return nil, err
	}
	if in.out != nil {
		in.out.raw("[")
		if err := introItems(in, shape, unknown, items, field, false); err != nil {
			return nil, err
		}
		in.out.raw("]")
		return introWritten{}, nil
	}
	list := make([]any, 0, len(items))
	for _, item := range items {
		obj, err := in.object(shape, unknown, func(s *selection) (any, bool, error) { return field(s, item) })
		if err != nil {
			return nil, err
		}
		list = append(list, obj)
	}
	return list, nil
}

// introItems writes (or sizes) the objects of a list on the fast path, separated by commas, with one before
// the first too when comma is set (a part of a list after its first).
func introItems[T any](in *introspector, shape *introShape, unknown func(field string) error, items []T,
	field func(s *selection, item T) (any, bool, error), comma bool) error {
	for i, item := range items {
		if i > 0 || comma {
			in.out.raw(", ")
		}
		if _, err := in.object(shape, unknown, func(s *selection) (any, bool, error) { return field(s, item) }); err != nil {
			return err
		}
	}
	return nil
}

// collect returns the sub-selections of sel for an object of the named meta type.
func (in *introspector) collect(sel *selection, typeName string) (*introShape, error) {
	if shape, ok := in.shapes[sel]; ok && shape.typeName == typeName {
		return shape, nil
	}
	subs, err := in.r.children(sel, typeName)
	if err != nil {
		return nil, err
	}
	shape := newIntroShape(typeName, subs)
	in.shapes[sel] = shape
	return shape, nil
}

// named returns the type introspection shows under that name, or nil when there is none or it is hidden.
func (in *introspector) named(name string) *gqlschema.Type {
	// Only meta types start with "__" (the spec reserves it): the others skip a map lookup, a tenth of the
	// answer's time at 5,000 tables.
	if strings.HasPrefix(name, "__") {
		if t := metaTypes[name]; t != nil {
			return t
		}
	}
	t := in.r.schema.Types[name]
	switch {
	case t == nil || t.Hidden:
		return nil
	case t == in.r.schema.Mutation:
		return in.mutation
	case t == in.r.schema.Subscription:
		return in.subscription
	}
	return t
}

func (in *introspector) shows(ref *gqlschema.TypeRef) bool { return in.named(ref.NamedType()) != nil }

// typeNames lists every type introspection shows, sorted by name (bytewise, as pg_graphql sorts).
func (in *introspector) typeNames() []string {
	names := make([]string, 0, len(in.r.schema.Types)+len(metaTypes))
	for name := range metaTypes {
		names = append(names, name)
	}
	for name := range in.r.schema.Types {
		if metaTypes[name] == nil && in.named(name) != nil {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// fields are the fields introspection lists for an object or interface type.
func (in *introspector) fields(t *gqlschema.Type) []*gqlschema.Field {
	var out []*gqlschema.Field
	for _, f := range t.Fields {
		if f.Hidden || f.Name == "__type" || f.Name == "__schema" || !in.shows(f.Type) || in.hiddenFunction(f) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// hiddenFunction reports whether f is a function field of a schema introspection hides.
func (in *introspector) hiddenFunction(f *gqlschema.Field) bool {
	if f.Function == nil || f.Function.SQL.Schema == nil {
		return false
	}
	return in.r.schema.HidesSchema(f.Function.SQL.Schema.OID)
}

// typeList resolves sel as the list of the named types introspection shows.
func (in *introspector) typeList(sel *selection, names []string) (any, error) {
	types := make([]*gqlschema.Type, 0, len(names))
	for _, name := range names {
		if t := in.named(name); t != nil {
			types = append(types, t)
		}
	}
	if in.out != nil {
		if parts := introParts(types, in.workers); len(parts) > 1 {
			return in.typeListInParts(sel, parts)
		}
	}
	return introList(in, sel, "__Type", errUnknownTypeField, types, in.typeItem)
}

func (in *introspector) typeItem(s *selection, t *gqlschema.Type) (any, bool, error) {
	return in.typeField(s, t, nil)
}

// introPartTypes is the fewest types a part of a type list written in parts has: below it, starting a part
// costs more than writing it.
const introPartTypes = 16

// introParts splits the types of a list into parts for workers goroutines: a few parts each, so that one
// that draws the large types (Query, Mutation) does not leave the others waiting. One part means no split.
func introParts(types []*gqlschema.Type, workers int) [][]*gqlschema.Type {
	if workers < 2 {
		return nil
	}
	n := min(4*workers, len(types)/introPartTypes)
	parts := make([][]*gqlschema.Type, 0, n)
	for i := range n {
		parts = append(parts, types[i*len(types)/n:(i+1)*len(types)/n])
	}
	return parts
}

// typeListInParts is the fast path of a type list (__schema.types, tens of thousands of types at 5,000
// tables) written by several goroutines at once. The sizing pass sizes each part apart; the writing pass
// writes each part into its own place in the answer, which is allocated at its size before either starts.
// The first answer at 5,000 tables takes 0.5 s on two cores, where one goroutine took 0.85 s.
func (in *introspector) typeListInParts(sel *selection, parts [][]*gqlschema.Type) (any, error) {
	o := in.out
	if o.buf == nil {
		sizes := make([]int, len(parts))
		err := in.inParts(len(parts), func(w *introspector, p int) error {
			w.out = &introOut{}
			err := w.typeItems(sel, parts[p], p > 0)
			sizes[p] = w.out.n
			return err
		})
		if err != nil {
			return nil, err
		}
		in.partSizes = append(in.partSizes, sizes)
		o.n += listSize(sizes)
		return introWritten{}, nil
	}
	sizes := in.partSizes[0]
	in.partSizes = in.partSizes[1:]
	total := listSize(sizes)
	o.buf.Grow(total) // nothing to do where the answer was allocated at its size
	list := o.buf.AvailableBuffer()[:total]
	list[0], list[total-1] = '[', ']'
	starts := make([]int, len(parts))
	for p, at := 0, 1; p < len(parts); p++ {
		starts[p] = at
		at += sizes[p]
	}
	err := in.inParts(len(parts), func(w *introspector, p int) error {
		part := list[starts[p] : starts[p] : starts[p]+sizes[p]]
		w.out = &introOut{buf: bytes.NewBuffer(part)}
		if err := w.typeItems(sel, parts[p], p > 0); err != nil {
			return err
		}
		// A part that outgrew its size was written elsewhere (the buffer grew): the answer would be wrong.
		if written := w.out.buf.Bytes(); len(written) != sizes[p] || len(written) > 0 && &written[0] != &part[:1][0] {
			return fmt.Errorf("introspection: part %d of the types wrote %d bytes, sized %d", p, len(written), sizes[p])
		}
		return nil
	})
	if err != nil {
		panic(err) // the sizing pass made the same calls, and none failed: this is a bug, not a request's failure
	}
	o.buf.Write(list) // in place: this only moves the buffer's end past the list
	return introWritten{}, nil
}

// listSize is the size of a list written in parts of these sizes: the parts and its brackets.
func listSize(sizes []int) int {
	n := len("[]")
	for _, size := range sizes {
		n += size
	}
	return n
}

// typeItems writes (or sizes) types as items of sel's list.
func (in *introspector) typeItems(sel *selection, types []*gqlschema.Type, comma bool) error {
	shape, err := in.collect(sel, "__Type")
	if err != nil {
		return err
	}
	return introItems(in, shape, errUnknownTypeField, types, in.typeItem, comma)
}

// inParts calls do for each of n parts, on at most in.workers goroutines, each with an introspector of its
// own (an introspector memoises, and is not safe for concurrent use). It returns the first part's error in
// their order, and panics again, on the caller's goroutine, with a worker's panic.
func (in *introspector) inParts(n int, do func(w *introspector, p int) error) error {
	errs := make([]error, n)
	var next atomic.Int64
	var mu sync.Mutex
	var panicked any
	var wg sync.WaitGroup
	for range min(in.workers, n) {
		wg.Go(func() {
			defer func() {
				if v := recover(); v != nil {
					mu.Lock()
					if panicked == nil {
						panicked = v
					}
					mu.Unlock()
				}
			}()
			w := &introspector{r: in.r, shapes: map[*selection]*introShape{}, mutation: in.mutation, subscription: in.subscription,
				workers: 1}
			for p := int(next.Add(1)) - 1; p < n; p = int(next.Add(1)) - 1 {
				errs[p] = do(w, p)
			}
		})
	}
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// typeValue resolves a __Type selection for ref, a named type or a LIST / NON_NULL wrapper; null for a
// named type introspection does not show.
func (in *introspector) typeValue(sel *selection, ref *gqlschema.TypeRef) (any, error) {
	var t *gqlschema.Type // nil for a wrapper
	if ref.Kind == "" {
		if t = in.named(ref.Name); t == nil {
			return nil, nil
		}
	}
	shape, err := in.collect(sel, "__Type")
	if err != nil {
		return nil, err
	}
	field := func(s *selection) (any, bool, error) { return in.typeField(s, t, ref) }
	if in.out != nil {
		// Written each time: what a memo of written text saved (copying instead of resolving a small object)
		// its map cost again in hashing its keys, and its entries were 40 MB at 5,000 tables.
		return in.object(shape, errUnknownTypeField, field)
	}
	// The same reference under the same selection answers the same: the thousands of fields of type String!
	// share one object (the tree is never changed).
	key := introRefKey{sel, ref.String()}
	if v, ok := in.refs[key]; ok {
		return v, nil
	}
	v, err := in.object(shape, errUnknownTypeField, field)
	if err != nil {
		return nil, err
	}
	in.refs[key] = v.(*introFields)
	return v, nil
}

// typeField answers one field of __Type for t, a named type introspection shows, or when t is nil for ref, a
// LIST or NON_NULL wrapper (the named type is looked up once per object, not once per field).
func (in *introspector) typeField(s *selection, t *gqlschema.Type, ref *gqlschema.TypeRef) (any, bool, error) {
	var v any
	var err error
	switch s.Name {
	case "kind":
		if t != nil {
			v = (*string)(&t.Kind)
		} else {
			v = (*string)(&ref.Kind)
		}
	case "name":
		if t != nil {
			v = &t.Name
		}
	case "description":
		if t != nil {
			v = t.Description
		}
	case "fields":
		if t != nil && (t.Kind == gqlschema.Object || t.Kind == gqlschema.Interface) {
			v, err = introList(in, s, "__Field", errUnknownMetaFieldField, in.fields(t), in.fieldField)
		}
	case "interfaces":
		// pg_graphql answers [] rather than null, for every kind (GraphiQL breaks on null)
		var names []string
		if t != nil {
			names = t.Interfaces
		}
		v, err = in.typeList(s, names)
	case "possibleTypes":
		if t != nil && t.Kind == gqlschema.Interface {
			v, err = in.typeList(s, t.PossibleTypes)
		}
	case "enumValues":
		// [] rather than null for every kind but ENUM, as pg_graphql answers
		var values []*gqlschema.EnumValue
		if t != nil && t.Kind == gqlschema.Enum {
			values = t.EnumValues
		}
		v, err = introList(in, s, "__EnumValue", errUnknownEnumValueField, values, introEnumValueField)
	case "inputFields":
		if t != nil && t.Kind == gqlschema.InputObject {
			v, err = in.inputValueList(s, t.InputFields)
		}
	case "ofType":
		if t == nil {
			v, err = in.typeValue(s, ref.OfType)
		}
	case "specifiedByURL":
		v = nil
	case "isOneOf":
		// false for every input object (none is @oneOf), null for other kinds, as graphql-js 16.9+ answers
		if t != nil && t.Kind == gqlschema.InputObject {
			v = false
		}
	case "__typename":
		if t != nil {
			v = &t.Name // pg_graphql answers the described type's name
		}
	default:
		return nil, false, nil
	}
	return v, true, err
}

func (in *introspector) fieldField(s *selection, f *gqlschema.Field) (any, bool, error) {
	switch s.Name {
	case "name":
		return &f.Name, true, nil
	case "description":
		return f.Description, true, nil
	case "args":
		v, err := in.inputValueList(s, f.Args)
		return v, true, err
	case "type":
		v, err := in.typeValue(s, f.Type)
		return v, true, err
	case "isDeprecated":
		return false, true, nil
	case "deprecationReason":
		return nil, true, nil
	case "__typename":
		return &f.Name, true, nil // pg_graphql answers the field's own name
	}
	return nil, false, nil
}

// inputValueList resolves arguments or input fields, leaving out those whose type is hidden.
func (in *introspector) inputValueList(sel *selection, ivs []*gqlschema.InputValue) (any, error) {
	var shown []*gqlschema.InputValue
	for _, iv := range ivs {
		if in.shows(iv.Type) {
			shown = append(shown, iv)
		}
	}
	return introList(in, sel, "__InputValue", errUnknownInputValueField, shown, in.inputValueField)
}

func (in *introspector) inputValueField(s *selection, iv *gqlschema.InputValue) (any, bool, error) {
	switch s.Name {
	case "name":
		return &iv.Name, true, nil
	case "description":
		return iv.Description, true, nil
	case "type":
		v, err := in.typeValue(s, iv.Type)
		return v, true, err
	case "defaultValue":
		return iv.DefaultValue, true, nil
	case "isDeprecated":
		return false, true, nil
	case "deprecationReason":
		return nil, true, nil
	case "__typename":
		return &iv.Name, true, nil // pg_graphql answers the input value's own name
	}
	return nil, false, nil
}

func introEnumValueField(s *selection, ev *gqlschema.EnumValue) (any, bool, error) {
	switch s.Name {
	case "name":
		return &ev.Name, true, nil
	case "description":
		return ev.Description, true, nil
	case "isDeprecated":
		return false, true, nil
	case "deprecationReason":
		return nil, true, nil
	case "__typename":
		return &ev.Name, true, nil // pg_graphql answers the value's own name
	}
	return nil, false, nil
}

func (in *introspector) directiveField(s *selection, d metaDirective) (any, bool, error) {
	switch s.Name {
	case "name":
		return d.name, true, nil
	case "description":
		return d.description, true, nil
	case "locations":
		locations := make([]any, len(d.locations))
		for i, l := range d.locations {
			locations[i] = l
		}
		return locations, true, nil
	case "args":
		v, err := in.inputValueList(s, d.args)
		return v, true, err
	case "isRepeatable":
		return false, true, nil
	case "__typename":
		return "__Directive", true, nil
	}
	return nil, false, nil
}

// The introspection meta types, as pg_graphql defines them (descriptions verbatim, including the literal
// backslash-n sequences of its __Type and __Directive descriptions; fields sorted by name). They are listed
// in __schema.types and answer __type like any other type. Built once, never modified.
var metaTypes = func() map[string]*gqlschema.Type {
	named, nonNull, list := gqlschema.Named, gqlschema.NonNullOf, gqlschema.ListOf
	text := func(s string) *string { return &s }
	field := func(name string, ref *gqlschema.TypeRef, description string, args ...*gqlschema.InputValue) *gqlschema.Field {
		f := &gqlschema.Field{Name: name, Type: ref, Args: args}
		if description != "" {
			f.Description = text(description)
		}
		return f
	}
	includeDeprecated := func() *gqlschema.InputValue {
		return &gqlschema.InputValue{Name: "includeDeprecated", Type: named("Boolean"), DefaultValue: text("false")}
	}
	listOf := func(name string) *gqlschema.TypeRef { return list(nonNull(named(name))) }
	str, boolean := named("String"), nonNull(named("Boolean"))
	enum := func(name, description string, values ...[2]string) *gqlschema.Type {
		t := &gqlschema.Type{Kind: gqlschema.Enum, Name: name, Description: text(description)}
		for _, v := range values {
			ev := &gqlschema.EnumValue{Name: v[0]}
			if v[1] != "" {
				ev.Description = text(v[1])
			}
			t.EnumValues = append(t.EnumValues, ev)
		}
		return t
	}
	types := []*gqlschema.Type{
		{Kind: gqlschema.Object, Name: "__Schema",
			Description: text("A GraphQL Schema defines the capabilities of a GraphQL server. It exposes all available types and directives on the server, as well as the entry points for query, mutation, and subscription operations."),
			Fields: []*gqlschema.Field{
				field("description", str, ""),
				field("directives", nonNull(listOf("__Directive")), "A list of all directives supported by this server.", includeDeprecated()),
				field("mutationType", named("__Type"), "If this server supports mutation, the type that mutation operations will be rooted at."),
				field("queryType", nonNull(named("__Type")), "The type that query operations will be rooted at."),
				field("subscriptionType", named("__Type"), "If this server support subscription, the type that subscription operations will be rooted at."),
				field("types", nonNull(listOf("__Type")), "A list of all types supported by this server."),
			}},
		{Kind: gqlschema.Object, Name: "__Type",
			Description: text("The fundamental unit of any GraphQL Schema is the type. There are many kinds of types in GraphQL as represented by the `__TypeKind` enum.\\n\\nDepending on the kind of a type, certain fields describe information about that type. Scalar types provide no information beyond a name, description and optional `specifiedByURL`, while Enum types provide their values. Object and Interface types provide the fields they describe. Abstract types, Union and Interface, provide the Object types possible at runtime. List and NonNull types compose other types "),
			Fields: []*gqlschema.Field{
				field("description", str, ""),
				field("enumValues", listOf("__EnumValue"), "", includeDeprecated()),
				field("fields", listOf("__Field"), "", includeDeprecated()),
				field("inputFields", listOf("__InputValue"), "", includeDeprecated()),
				field("interfaces", listOf("__Type"), ""),
				field("isOneOf", named("Boolean"), ""),
				field("kind", nonNull(named("__TypeKind")), ""),
				field("name", str, ""),
				field("ofType", named("__Type"), ""),
				field("possibleTypes", listOf("__Type"), ""),
				field("specifiedByURL", str, ""),
			}},
		{Kind: gqlschema.Object, Name: "__Field",
			Description: text("Object and Interface types are described by a list of Fields, each of which has a name, potentially a list of arguments, and a return type."),
			Fields: []*gqlschema.Field{
				field("args", nonNull(listOf("__InputValue")), "", includeDeprecated()),
				field("deprecationReason", str, ""),
				field("description", str, ""),
				field("isDeprecated", boolean, ""),
				field("name", nonNull(named("String")), ""),
				field("type", nonNull(named("__Type")), ""),
			}},
		{Kind: gqlschema.Object, Name: "__InputValue",
			Description: text("Arguments provided to Fields or Directives and the input fields of an InputObject are represented as Input Values which describe their type and optionally a default value."),
			Fields: []*gqlschema.Field{
				field("defaultValue", str, "A GraphQL-formatted string representing the default value for this input value."),
				field("deprecationReason", str, ""),
				field("description", str, ""),
				field("isDeprecated", boolean, ""),
				field("name", nonNull(named("String")), ""),
				field("type", nonNull(named("__Type")), ""),
			}},
		{Kind: gqlschema.Object, Name: "__EnumValue",
			Description: text("One possible value for a given Enum. Enum values are unique values, not a placeholder for a string or numeric value. However an Enum value is returned in a JSON response as a string."),
			Fields: []*gqlschema.Field{
				field("deprecationReason", str, ""),
				field("description", str, ""),
				field("isDeprecated", boolean, ""),
				field("name", nonNull(named("String")), ""),
			}},
		{Kind: gqlschema.Object, Name: "__Directive",
			Description: text("A Directive provides a way to describe alternate runtime execution and type validation behavior in a GraphQL document.\\n\\nIn some cases, you need to provide options to alter GraphQL execution behavior in ways field arguments will not suffice, such as conditionally including or skipping a field. Directives provide this by describing additional information to the executor."),
			Fields: []*gqlschema.Field{
				field("args", nonNull(listOf("__InputValue")), "", includeDeprecated()),
				field("description", str, ""),
				field("isRepeatable", boolean, ""),
				field("locations", nonNull(listOf("__DirectiveLocation")), ""),
				field("name", nonNull(named("String")), ""),
			}},
		enum("__TypeKind", "An enum describing what kind of type a given `__Type` is.",
			[2]string{"SCALAR"}, [2]string{"OBJECT"}, [2]string{"INTERFACE"}, [2]string{"UNION"}, [2]string{"ENUM"},
			[2]string{"INPUT_OBJECT"}, [2]string{"LIST"}, [2]string{"NON_NULL"}),
		enum("__DirectiveLocation", "A Directive can be adjacent to many parts of the GraphQL language, a __DirectiveLocation describes one such possible adjacencies.",
			[2]string{"QUERY", "Location adjacent to a query operation."},
			[2]string{"MUTATION", "Location adjacent to a mutation operation."},
			[2]string{"SUBSCRIPTION", "Location adjacent to a subscription operation."},
			[2]string{"FIELD", "Location adjacent to a field."},
			[2]string{"FRAGMENT_DEFINITION", "Location adjacent to a fragment definition."},
			[2]string{"FRAGMENT_SPREAD", "Location adjacent to a fragment spread."},
			[2]string{"INLINE_FRAGMENT", "Location adjacent to an inline fragment."},
			[2]string{"VARIABLE_DEFINITION", "Location adjacent to a variable definition."},
			[2]string{"SCHEMA", "Location adjacent to a schema definition."},
			[2]string{"SCALAR", "Location adjacent to a scalar definition."},
			[2]string{"OBJECT", "Location adjacent to an object type definition."},
			[2]string{"FIELD_DEFINITION", "Location adjacent to a field definition."},
			[2]string{"ARGUMENT_DEFINITION", "Location adjacent to an argument definition."},
			[2]string{"INTERFACE", "Location adjacent to an interface definition."},
			[2]string{"UNION", "Location adjacent to a union definition."},
			[2]string{"ENUM", "Location adjacent to an enum definition."},
			[2]string{"ENUM_VALUE", "Location adjacent to an enum value definition."},
			[2]string{"INPUT_OBJECT", "Location adjacent to an input object type definition."},
			[2]string{"INPUT_FIELD_DEFINITION", "Location adjacent to an input object field definition."}),
	}
	out := make(map[string]*gqlschema.Type, len(types))
	for _, t := range types {
		out[t.Name] = t
	}
	return out
}()

// metaDirective is a directive __schema.directives lists.
type metaDirective struct {
	name, description string
	locations         []string
	args              []*gqlschema.InputValue
}

// metaDirectives are the directives pg_graphql executes and lists: @include and @skip (contract 1.19).
var metaDirectives = func() []metaDirective {
	ifArg := func(description string) []*gqlschema.InputValue {
		return []*gqlschema.InputValue{{Name: "if", Description: &description,
			Type: gqlschema.NonNullOf(gqlschema.Named("Boolean"))}}
	}
	locations := []string{"FIELD", "FRAGMENT_SPREAD", "INLINE_FRAGMENT"}
	return []metaDirective{
		{name: "include", description: "This field or fragment will be included only when the `if` argument is true.",
			locations: locations, args: ifArg("Included when true")},
		{name: "skip", description: "This field or fragment will be skipped when the `if` argument is true.",
			locations: locations, args: ifArg("Skipped when true")},
	}
}()
