// Package gqlschema builds the GraphQL type system that pg_graphql would generate for one catalog (one role,
// one search_path): names, types, arguments, descriptions and the links from every generated field back to the
// catalog objects it stands for, which the resolver plans SQL from.
package gqlschema

import (
	"github.com/pgreflect/pgreflect/reflect"
)

// Kind is a GraphQL type kind as introspection names it.
type Kind string

// The type kinds.
const (
	Scalar      Kind = "SCALAR"
	Object      Kind = "OBJECT"
	Interface   Kind = "INTERFACE"
	Enum        Kind = "ENUM"
	InputObject Kind = "INPUT_OBJECT"
	List        Kind = "LIST"
	NonNull     Kind = "NON_NULL"
)

// Schema is the generated type system.
type Schema struct {
	Types    map[string]*Type
	Query    *Type
	Mutation *Type // nil when it would have no fields
	// Subscription mirrors Query's collection, byPk and node fields of the tables with the subscriptions
	// feature; nil when no table has it.
	Subscription *Type
	// Introspection is on when any exposed schema enables it.
	Introspection bool
	Catalog       *reflect.Catalog
	// Tables are the exposed relations, by relation oid.
	Tables map[uint32]*Table
	// Version is the pg_graphql behaviour the schema follows.
	Version Version
	// Omitted are the relations, columns and functions of the catalog the schema leaves out, in the order the
	// builder met them.
	Omitted []Omission

	// visible are the introspectable schemas, by oid; types of other schemas are hidden from introspection.
	visible map[uint32]bool
}

// HidesSchema reports whether introspection hides the types and functions of that database schema (pg_graphql
// 1.6 shows only the schemas whose comment enables introspection, once any does).
func (s *Schema) HidesSchema(schemaOID uint32) bool {
	return len(s.visible) > 0 && !s.visible[schemaOID]
}

// TypeRole says what a generated type stands for.
type TypeRole int

// The type roles.
const (
	RoleBuiltin TypeRole = iota
	RoleQuery
	RoleMutation
	RoleSubscription
	RoleStreamCursor
	RoleNode
	RoleNodeInterface
	RoleConnection
	RoleEdge
	RolePageInfo
	RoleFilter
	RoleOrderBy
	RoleInsertInput
	RoleUpdateInput
	RoleInsertResponse
	RoleUpdateResponse
	RoleDeleteResponse
	RoleAggregate
	RoleAggregateResult
	RoleScalarFilter
	RoleEnum
	// RoleComposite is the object type of a composite-type column (the composite feature).
	RoleComposite
)

// Type is a named GraphQL type.
type Type struct {
	Kind          Kind
	Name          string
	Description   *string
	Fields        []*Field
	InputFields   []*InputValue
	EnumValues    []*EnumValue
	Interfaces    []string
	PossibleTypes []string

	Role  TypeRole
	Table *Table        // for types derived from a relation
	Enum  *reflect.Type // for enum types
	// Aggregate is "sum", "avg", "min" or "max" for aggregate result types.
	Aggregate string
	// Hidden types belong to a schema without introspection; they still work but introspection omits them.
	Hidden bool
}

// TypeRef is a possibly wrapped type reference.
type TypeRef struct {
	Kind   Kind // NonNull, List, or "" for a named type
	Name   string
	OfType *TypeRef
}

// Named is a reference to a named type.
func Named(name string) *TypeRef { return &TypeRef{Name: name} }

// NonNullOf wraps t in NON_NULL.
func NonNullOf(t *TypeRef) *TypeRef { return &TypeRef{Kind: NonNull, OfType: t} }

// ListOf wraps t in LIST.
func ListOf(t *TypeRef) *TypeRef { return &TypeRef{Kind: List, OfType: t} }

// NamedType is the innermost named type.
func (t *TypeRef) NamedType() string {
	for t.Kind != "" {
		t = t.OfType
	}
	return t.Name
}

// String renders the reference in SDL form, e.g. [Int!]!.
func (t *TypeRef) String() string {
	switch t.Kind {
	case NonNull:
		return t.OfType.String() + "!"
	case List:
		return "[" + t.OfType.String() + "]"
	}
	return t.Name
}

// FieldKind says how a field is resolved.
type FieldKind int

// The field kinds.
const (
	FieldTypename FieldKind = iota
	FieldColumn
	FieldNodeID
	FieldToOne      // relationship to a single record
	FieldToMany     // relationship to a connection
	FieldComputed   // function taking the row
	FieldCollection // Query.<x>Collection
	FieldByPk
	FieldNode // Query.node
	FieldFunction
	FieldInsert
	FieldUpdate
	FieldDelete
	FieldEdges
	FieldPageInfo
	FieldTotalCount
	FieldAggregate
	FieldCursor
	FieldEdgeNode
	FieldHasNextPage
	FieldHasPreviousPage
	FieldStartCursor
	FieldEndCursor
	FieldAffectedCount
	FieldRecords
	FieldAggregateCount
	FieldAggregateGroup  // sum/avg/min/max
	FieldAggregateColumn // a column inside an aggregate group
	FieldSchema          // __schema
	FieldType            // __type
	// FieldStream is Subscription.<x>Stream: the rows after a cursor, in batches (the subscriptions feature).
	FieldStream
)

// Field is a field of an object or interface type.
type Field struct {
	Name        string
	Description *string
	Type        *TypeRef
	Args        []*InputValue

	Kind         FieldKind
	Column       *Column
	Relationship *Relationship
	Table        *Table // the table a root, relationship or mutation field is about
	Function     *Function
	Hidden       bool
}

// Arg returns the argument of that name, or nil.
func (f *Field) Arg(name string) *InputValue {
	for _, a := range f.Args {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// InputValue is an argument or an input object field.
type InputValue struct {
	Name         string
	Description  *string
	Type         *TypeRef
	DefaultValue *string

	// Column is set on the fields of filter, order-by and insert/update input types.
	Column *Column
	// Param is the SQL argument of a function argument.
	Param *Param
	// Relationship is set on the fields of an insert input that write related rows (nestedInsert) and on the
	// relationship fields of filter and order-by inputs (relatedFilter, relatedOrder).
	Relationship *Relationship
}

// EnumValue is a value of an enum type.
type EnumValue struct {
	Name        string
	Description *string
	// SQL is the Postgres label for enums reflected from the database.
	SQL string
}

// Table is an exposed relation with its GraphQL names.
type Table struct {
	Rel      *reflect.Relation
	TypeName string
	// Columns are the columns the role may select and GraphQL can show, in attnum order.
	Columns []*Column
	// AllColumns includes columns not selectable, for insert/update inputs.
	AllColumns []*Column
	PK         []*Column
	MaxRows    int
	Inflect    bool
	// Features are the extensions beyond pg_graphql on for this table; nil when none is.
	Features reflect.FeatureSet

	// refs are the references to the table's types that fields of many types share.
	refs tableRefs
}

// tableRefs are the references to a table's object, filter, order-by and connection types and the lists of
// them that fields use, made with the table: at 5,000 tables each was made anew by about ten fields of the
// table's own types and its neighbours'.
type tableRefs struct {
	node, filter, orderBy, connection *TypeRef
	// nodeNonNull is <X>!, records [<X>!]!, filters [<X>Filter!] and orders [<X>OrderBy!]
	nodeNonNull, records, filters, orders *TypeRef
}

func newTableRefs(typeName string) tableRefs {
	r := tableRefs{node: Named(typeName), filter: Named(typeName + "Filter"), orderBy: Named(typeName + "OrderBy"),
		connection: Named(typeName + "Connection")}
	r.nodeNonNull = NonNullOf(r.node)
	r.records = NonNullOf(ListOf(r.nodeNonNull))
	r.filters = ListOf(NonNullOf(r.filter))
	r.orders = ListOf(NonNullOf(r.orderBy))
	return r
}

// ColumnByName returns the exposed (selectable) column with that SQL name, or nil.
func (t *Table) ColumnByName(name string) *Column {
	for _, c := range t.Columns {
		if c.SQL.Name == name {
			return c
		}
	}
	return nil
}

// Column is a relation column with its GraphQL field name and type mapping.
type Column struct {
	SQL       *reflect.Column
	FieldName string
	Type      *ValueType
}

// Relationship is one direction of a foreign key.
type Relationship struct {
	FK *reflect.ForeignKey
	// From is the table the field is on, To the table it leads to.
	From, To *Table
	// FromColumns[i] = ToColumns[i] joins the two.
	FromColumns, ToColumns []string
}

// Function is a function exposed as a root field or computed field.
type Function struct {
	SQL    *reflect.Function
	Params []*Param
	Return *ValueType // nil when the function returns rows of Table
	// Table is set when the function returns a row or a set of rows of an exposed table.
	Table   *Table
	Returns FunctionReturn
}

// FunctionReturn is the shape of a function's result.
type FunctionReturn int

// The function result shapes.
const (
	ReturnsScalar FunctionReturn = iota
	ReturnsRow
	ReturnsConnection
)

// Param is a named function argument.
type Param struct {
	SQLName    string
	Type       *ValueType
	HasDefault bool
	// defaultValue is the GraphQL literal introspection shows, when pg_graphql can render the SQL default.
	defaultValue *string
}
