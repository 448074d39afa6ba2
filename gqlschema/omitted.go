package gqlschema

import "github.com/pgreflect/pgreflect/reflect"

// OmitReason says why the schema leaves a catalog object out. The builder records each decision where it takes
// it, so that `pgreflect lint` and the console explain the schema from the code that made it rather than from
// a second copy of its rules.
type OmitReason int

// The reasons a relation, column or function is left out.
const (
	// OmitNotSelectable: the role may select no column of the relation (a matter of grants, not a mistake).
	OmitNotSelectable OmitReason = iota + 1
	// OmitInvalidName: the relation's, column's or function's GraphQL name is not a GraphQL name.
	OmitInvalidName
	// OmitNameTaken: another relation (or a built-in or enum type) already has the relation's type name; By
	// names the one that has it.
	OmitNameTaken
	// OmitNoPrimaryKey: a table without a primary key, or a view without primary_key_columns, that no computed
	// field returns.
	OmitNoPrimaryKey
	// OmitPrimaryKeyType: a primary key column of a type GraphQL cannot show.
	OmitPrimaryKeyType
	// OmitNoExecute: the role may not execute the function.
	OmitNoExecute
	// OmitVariadic: a VARIADIC function.
	OmitVariadic
	// OmitOverloaded: several functions of that name (pg_graphql shows none of them at the root).
	OmitOverloaded
	// OmitArgument: an argument without a name, or of a type a root field cannot take.
	OmitArgument
	// OmitReturnType: a result no field can show (record, trigger, a set of scalars, an enum or array at the
	// root, a type without a GraphQL mapping, rows of a relation that is not exposed).
	OmitReturnType
	// OmitArgumentClash: a function returning a connection whose argument is named like a collection argument.
	OmitArgumentClash
	// OmitFieldNameTaken: a root function whose field name a collection or byPk field already has.
	OmitFieldNameTaken
	// OmitTableNotSelectable: a computed field of a table the role may not select.
	OmitTableNotSelectable
	// OmitTrigger: a trigger or event trigger function, which is never part of an API.
	OmitTrigger
)

// String is the reason in a few words, for the console's Access page.
func (r OmitReason) String() string {
	switch r {
	case OmitNotSelectable:
		return "no column the role may select"
	case OmitInvalidName:
		return "its name is not a GraphQL name"
	case OmitNameTaken:
		return "another type has its name"
	case OmitNoPrimaryKey:
		return "no primary key (nor primary_key_columns)"
	case OmitPrimaryKeyType:
		return "a primary key column has no GraphQL type"
	case OmitNoExecute:
		return "no EXECUTE"
	case OmitVariadic:
		return "VARIADIC"
	case OmitOverloaded:
		return "overloaded"
	case OmitArgument:
		return "an argument without a name or of a type a field cannot take"
	case OmitReturnType:
		return "a result with no GraphQL shape"
	case OmitArgumentClash:
		return "an argument named like a connection's"
	case OmitFieldNameTaken:
		return "a collection or byPk field has its name"
	case OmitTableNotSelectable:
		return "a computed field of a table the role may not select"
	case OmitTrigger:
		return "a trigger function"
	}
	return "left out"
}

// Omission is a relation, column or function of the catalog that the schema leaves out, and why.
type Omission struct {
	Reason   OmitReason
	Relation *reflect.Relation // a left-out relation, or the relation of a left-out column
	Column   *reflect.Column
	Function *reflect.Function
	// Name is the GraphQL name the object would have had.
	Name string
	// By is what already has the name, for OmitNameTaken: the relation, or nil for a type of another kind.
	By *reflect.Relation
	// Argument is the index (in Function.ArgTypes) of the argument that rules the function out, for
	// OmitArgument.
	Argument int
}

func (b *builder) omit(o Omission) { b.s.Omitted = append(b.s.Omitted, o) }
