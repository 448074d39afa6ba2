// Package sqlgen turns a request plan into SQL text and bound parameters. It is pure and deterministic: the same
// plan always yields the same text (aliases are numbered, not random), which the golden tests rely on.
// Identifiers are always quoted and values are always parameters, passed as text and cast in SQL to the column's
// type, so Postgres does all parsing of dates, numbers, uuids and the like.
package sqlgen

// Relation names a table, view, materialized view or foreign table.
type Relation struct {
	Schema, Name string
}

// Output says how a value is rendered into JSON.
type Output int

// The output conversions: the first five mirror gqlschema.Output; the others are OutPlain for a column of a
// type the generator knows: one whose text is already its JSON (or a JSON string's content), written without
// to_json, or one whose JSON is a string.
const (
	OutPlain Output = iota
	OutText
	OutJSONText
	OutTextArray
	OutEnum
	// OutNumber is an integer (smallint, integer), OutBoolean a boolean, OutUUID a uuid.
	OutNumber
	OutBoolean
	OutUUID
	// OutString is a value whose JSON is a string (text, a date or time): written through to_json as OutPlain
	// is, and known to be spelled as pg_graphql spells it (see Statement.Verbatim).
	OutString
	// OutQuotedEnum is an enum none of whose labels, as the API answers them (EnumLabels' names where it maps
	// them), holds a character a JSON string escapes (PlainInJSONString): written between quotes as a uuid is.
	// to_json of a value of a type created by a user looks up, on every call, how to write the type and whether
	// a cast to json exists: a few thousand instructions a value, as much as the rest of a small page's row.
	OutQuotedEnum
)

// Server is what a statement may use of the PostgreSQL it is written for; the zero value is every supported
// version (14 and later).
type Server struct {
	// JSONScalar says that the server has JSON_SCALAR (PostgreSQL 17 and later), which writes a value into JSON
	// as to_json does, through the same code, but looks up how to write the value's type once a statement:
	// to_json does on every call, about half of what it costs a short text. Every value written through to_json
	// is then written through JSON_SCALAR.
	JSONScalar bool
}

// PlainInJSONString reports whether s is its own content in a JSON string: it holds no quote, backslash or
// control character, the characters JSON (and to_json) escape.
func PlainInJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c < 0x20 {
			return false
		}
	}
	return true
}

// Column is a column read into the response.
type Column struct {
	Name   string
	Output Output
	// EnumLabels maps SQL labels to GraphQL names for OutEnum.
	EnumLabels map[string]string
}

// Node is the selection of one record's fields.
type Node struct {
	Fields []NodeField
}

// NodeField is one selected field of a record; exactly one of the pointers (or Typename) is set.
type NodeField struct {
	Key        string
	Typename   string
	Column     *Column
	NodeID     *NodeID
	Record     *Record     // to-one relationship or computed field returning a row
	Connection *Connection // to-many relationship or computed field returning a set
	Scalar     *Call       // computed field returning a scalar
	Composite  *CompositeValue
}

// NodeID renders the globally unique id of a record.
type NodeID struct {
	Relation Relation
	PK       []string
}

// Join correlates a child relation with its parent: child.Child = parent.Parent.
type Join struct {
	Child, Parent string
}

// Source is where rows come from: a relation or a set-returning function.
type Source struct {
	Relation *Relation
	Call     *Call
}

// Call is a function call.
type Call struct {
	Function Relation // schema and function name
	Args     []Arg
	// RowArg passes the parent record (computed fields).
	RowArg bool
	Output Output
	// EnumLabels maps SQL labels to GraphQL names for OutEnum.
	EnumLabels map[string]string
}

// Arg is a named function argument bound as text and cast.
type Arg struct {
	Name  string
	Value *string // nil passes SQL NULL
	Cast  string
	// Array marks a list value; Values holds its elements.
	Array  bool
	Values []*string
}

// Record selects a single record: a to-one relationship, a by-primary-key lookup, a node lookup, or a function
// returning one row.
type Record struct {
	Source Source
	Join   []Join
	Filter Expr
	Node   *Node
	// SkipNullRow drops a row whose every column is NULL (functions returning a composite).
	SkipNullRow bool
	// Joinable lets the record be joined to the rows it belongs to (left join lateral) instead of read by a
	// subquery per row: set where Join ends at a unique key of Source's relation that Postgres enforces, so
	// that a row has at most one such record, and where the plan is worth its cost (a join costs more to plan).
	Joinable bool
}

// Connection selects a page of records and facts about the whole filtered set.
type Connection struct {
	Source Source
	Join   []Join
	Filter Expr
	// Order is the full order, primary key included.
	Order []Order
	// Cursor holds the cursor's values (nil for JSON null) when after/before is given.
	Cursor   []*string
	Backward bool // last/before
	// ExactPaging counts a row whose order value is NULL as past a cursor whose value is not NULL where NULLs
	// sort after it, so that neighbour pages skip nothing; pg_graphql never does (the exactPaging feature).
	ExactPaging bool
	Limit       int
	Offset      int
	Fields      []ConnectionField
	// Distinct keeps the first row of each group of equal values (the distinct feature); nil keeps all.
	Distinct *Distinct
}

// Order is one element of an ordering.
type Order struct {
	Column     string
	Cast       string // type of the column, for cursor values
	Desc       bool
	NullsFirst bool
	// NotNull marks a column that holds no NULLs: its ordering then says nothing of NULLs, which lets Postgres
	// read it from a plain index in either direction, and its cursor conditions need no NULL branches.
	NotNull bool
	// Related sorts by a value read from related rows (the relatedOrder feature) instead of Column.
	Related *RelatedValue
}

// ConnectionField is one selected field of a connection.
type ConnectionField struct {
	Key        string
	Typename   string
	Edges      *Edges
	PageInfo   []PageInfoField
	TotalCount bool
	Aggregate  []AggregateField
}

// Edges selects the page's edges.
type Edges struct {
	Fields []EdgeField
}

// EdgeField is one selected field of an edge.
type EdgeField struct {
	Key      string
	Typename string
	Cursor   bool
	Node     *Node
}

// PageInfoKind names a pageInfo field.
type PageInfoKind int

// The pageInfo fields.
const (
	PageTypename PageInfoKind = iota
	PageStartCursor
	PageEndCursor
	PageHasNext
	PageHasPrevious
)

// PageInfoField is one selected field of pageInfo.
type PageInfoField struct {
	Key      string
	Kind     PageInfoKind
	Typename string
}

// AggregateField is one selected field of an aggregate.
type AggregateField struct {
	Key      string
	Typename string
	Count    bool
	// Group is sum, avg, min or max, with its selected columns.
	Group   string
	Columns []AggregateColumn
}

// AggregateColumn is a column within an aggregate group.
type AggregateColumn struct {
	Key      string
	Typename string
	Column   string
	// Boolean columns have no min/max in Postgres: they use bool_and/bool_or.
	Boolean bool
}
