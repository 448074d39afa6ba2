package gqlschema

// interned keeps one of each reference to a type that no table names (the scalars, the enums, PageInfo and
// the like), of each value type and of each fixed description a build makes, for every field to share: a
// schema of 5,000 tables made 300,000 references, 130,000 NON_NULL wrappers of them, a value type per column and
// a description per argument of every collection and mutation, each an allocation the schema then kept. A
// table's references to its own types are the table's (tableRefs): kept here, 5,000 tables' names made the maps
// too large for the cache, and a lookup cost what an allocation does. Nothing changes a reference, a value type
// or a description once it is made.
type interned struct {
	names    map[string]*TypeRef
	nonNulls map[*TypeRef]*TypeRef
	lists    map[*TypeRef]*TypeRef
	texts    map[string]*string
	// valueTypes are valueType's answers, nil where a type has none
	valueTypes map[valueTypeKey]*ValueType
	// filters are the filter inputs of value types (filterOf)
	filters map[*ValueType]*TypeRef
}

func newInterned() interned {
	return interned{names: map[string]*TypeRef{}, nonNulls: map[*TypeRef]*TypeRef{}, lists: map[*TypeRef]*TypeRef{},
		texts: map[string]*string{}, valueTypes: map[valueTypeKey]*ValueType{},
		filters: map[*ValueType]*TypeRef{}}
}

// memo is m's value for k, made the first time k is asked for.
func memo[K comparable, V any](m map[K]V, k K, make func() V) V {
	v, ok := m[k]
	if !ok {
		v = make()
		m[k] = v
	}
	return v
}

func (in *interned) named(name string) *TypeRef {
	return memo(in.names, name, func() *TypeRef { return Named(name) })
}

func (in *interned) nonNull(t *TypeRef) *TypeRef {
	return memo(in.nonNulls, t, func() *TypeRef { return NonNullOf(t) })
}

func (in *interned) listOf(t *TypeRef) *TypeRef {
	return memo(in.lists, t, func() *TypeRef { return ListOf(t) })
}

// filterOf is a reference to the filter input of a value type, nil when it cannot be filtered. Columns of one
// type share their value type (valueType), and its filter's name was made anew for each.
func (in *interned) filterOf(v *ValueType) *TypeRef {
	return memo(in.filters, v, func() *TypeRef {
		if f := v.Filter(); f != "" {
			return in.named(f)
		}
		return nil
	})
}

// text is a description that does not depend on the table (one made with a table's name is str's).
func (in *interned) text(s string) *string {
	return memo(in.texts, s, func() *string { return str(s) })
}

// slab gives out pointers to values of one allocation, made when the first is asked for, for as many as are
// known to come at most (a table's columns), and makes another when they run out. A schema of 5,000 tables made
// a field or an input value of each column five times over: 250,000 allocations, each a header and a scan for
// the collector. Nothing is allocated where none is asked for (a role that may not write has no insert input).
type slab[T any] struct {
	free []T
	next int // the size of the next allocation: the count expected, then a few more where it was wrong
}

func newSlab[T any](n int) slab[T] { return slab[T]{next: max(n, 1)} }

func (s *slab[T]) add(v T) *T {
	if len(s.free) == 0 {
		s.free = make([]T, s.next)
		s.next = 8
	}
	p := &s.free[0]
	*p = v
	s.free = s.free[1:]
	return p
}
