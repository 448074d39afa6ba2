package gqlschema

import (
	"github.com/pgreflect/pgreflect/reflect"
)

// Output says how SQL renders a value into the response JSON.
type Output int

// The output conversions.
const (
	OutPlain     Output = iota // to_jsonb of the value
	OutText                    // ::text (bigint, numeric: JSON strings)
	OutJSONText                // #>> '{}' (json, jsonb: a string holding the JSON text)
	OutTextArray               // ::text[] (arrays of bigint, numeric, json)
	OutEnum                    // CASE mapping of labels to GraphQL names
)

// ValueType maps a Postgres type to GraphQL.
type ValueType struct {
	// GraphQL is the nullable GraphQL type, e.g. Int or [Int].
	GraphQL *TypeRef
	// Scalar is the named GraphQL type (the element's for arrays).
	Scalar string
	Array  bool
	// Enum is the enum's catalog type when Scalar is a reflected enum (element's for arrays).
	Enum   *reflect.Type
	Output Output
	// Cast is the SQL type input values are cast to (format_type of the column, regtype of an argument).
	Cast string
	// MaxLength is the declared length of varchar(n)/char(n), 0 if none.
	MaxLength int
	// ElemOID is the oid of the (element) type.
	ElemOID uint32
	// Composite is the object type of a composite-type value (the composite feature); compositeFilter names
	// its filter input, empty when no field can be filtered.
	Composite       *Type
	compositeFilter string
}

// Filter returns the filter input type name for the value, or "" when it cannot be filtered.
func (v *ValueType) Filter() string {
	if v.Composite != nil {
		return v.compositeFilter
	}
	if v.Array {
		if v.Enum != nil || v.Scalar == "Opaque" || v.Scalar == "JSON" || v.Scalar == "ID" {
			return ""
		}
		return v.Scalar + "ListFilter"
	}
	if v.Scalar == "JSON" {
		return ""
	}
	return v.Scalar + "Filter"
}

// Orderable reports whether the value may appear in an order-by input.
func (v *ValueType) Orderable() bool { return !v.Array && v.Scalar != "JSON" && v.Composite == nil }

// builtinScalars are the scalars always present, with pg_graphql's descriptions.
var builtinScalars = []struct{ name, description string }{
	{"BigFloat", "A high precision floating point value represented as a string"},
	{"BigInt", "An arbitrary size integer represented as a string"},
	{"Boolean", "A value that is true or false"},
	{"Cursor", "An opaque string using for tracking a position in results during pagination"},
	{"Date", "A date without time information"},
	{"Datetime", "A date and time"},
	{"Float", "A scalar floating point value up to 32 bits"},
	{"ID", "A globally unique identifier for a given record"},
	{"Int", "A scalar integer up to 32 bits"},
	{"JSON", "A Javascript Object Notation value serialized as a string"},
	{"Opaque", "Any type not handled by the type system"},
	{"String", "A string"},
	{"Time", "A time without date information"},
	{"UUID", "A universally unique identifier"},
}

// scalarByOID is the fixed part of the type map (section 1.9 of the contract).
var scalarByOID = map[uint32]struct {
	name   string
	output Output
}{
	16: {"Boolean", OutPlain}, 21: {"Int", OutPlain}, 23: {"Int", OutPlain}, 20: {"BigInt", OutText},
	700: {"Float", OutPlain}, 701: {"Float", OutPlain}, 1700: {"BigFloat", OutText}, 25: {"String", OutPlain},
	1043: {"String", OutPlain}, 1042: {"String", OutPlain}, 18: {"String", OutPlain},
	114: {"JSON", OutJSONText}, 3802: {"JSON", OutJSONText}, 1082: {"Date", OutPlain}, 1083: {"Time", OutPlain},
	1114: {"Datetime", OutPlain}, 1184: {"Datetime", OutPlain}, 2950: {"UUID", OutPlain},
}

// valueType maps a type oid; ok is false for types GraphQL does not show (composites and table row types).
// formatType is the SQL cast target for input values. Columns and arguments of one type, modifier and cast share
// one value type: nothing changes it once made.
func (b *builder) valueType(oid uint32, typmod int, formatType string) (*ValueType, bool) {
	v := memo(b.valueTypes, valueTypeKey{oid, typmod, formatType}, func() *ValueType {
		return b.newValueType(oid, typmod, formatType)
	})
	return v, v != nil
}

type valueTypeKey struct {
	oid        uint32
	typmod     int
	formatType string
}

// newValueType is valueType's answer, nil for a type GraphQL does not show.
func (b *builder) newValueType(oid uint32, typmod int, formatType string) *ValueType {
	t := b.cat.Types[oid]
	if t != nil && t.Category == "A" && t.Elem != 0 {
		elem, ok := b.scalarOf(t.Elem, typmod) // varchar(n)[] keeps the element length limit
		if !ok {
			return nil
		}
		v := *elem
		v.Array = true
		v.GraphQL = b.listOf(b.named(elem.Scalar))
		v.Cast = formatType
		if elem.Output == OutText || elem.Output == OutJSONText {
			v.Output = OutTextArray
		} else if elem.Enum != nil {
			// arrays of enums render labels; mappings apply to scalar enum columns only
			v.Output = OutPlain
		}
		return &v
	}
	v, ok := b.scalarOf(oid, typmod)
	if !ok {
		return nil
	}
	v.Cast = formatType
	return v
}

func (b *builder) scalarOf(oid uint32, typmod int) (*ValueType, bool) {
	if s, ok := scalarByOID[oid]; ok {
		v := &ValueType{Scalar: s.name, Output: s.output, GraphQL: b.named(s.name), ElemOID: oid}
		if (oid == 1043 || oid == 1042) && typmod > 4 {
			v.MaxLength = typmod - 4
		}
		return v, true
	}
	t := b.cat.Types[oid]
	if t == nil {
		return &ValueType{Scalar: "Opaque", GraphQL: b.named("Opaque"), ElemOID: oid}, true
	}
	switch {
	case t.Name == "citext":
		return &ValueType{Scalar: "String", GraphQL: b.named("String"), ElemOID: oid}, true
	case t.Kind == "e":
		if name, ok := b.enumNames[oid]; ok {
			return &ValueType{Scalar: name, Enum: t, Output: OutEnum, GraphQL: b.named(name), ElemOID: oid}, true
		}
		return &ValueType{Scalar: "Opaque", GraphQL: b.named("Opaque"), ElemOID: oid}, true
	case t.Kind == "c":
		return nil, false
	}
	return &ValueType{Scalar: "Opaque", GraphQL: b.named("Opaque"), ElemOID: oid}, true
}

// byPkTypes are the format_type texts whose primary keys get a <x>ByPk field (see the contract, 1.3).
var byPkTypes = map[string]bool{
	"int": true, "int4": true, "integer": true, "bigint": true, "int8": true, "smallint": true, "int2": true,
	"text": true, "varchar": true, "char": true, "bpchar": true, "citext": true, "uuid": true,
}

// aggregatable reports the aggregate groups a column may appear in: sum/avg and min/max. It goes by type oid
// (pg_graphql goes by type name: int2 int4 int8 float4 float8 numeric money; text varchar char bpchar name citext;
// date time timetz timestamp timestamptz; bool), so typmods such as timestamp(3) do not matter.
func aggregatable(c *Column) (sumAvg, minMax bool) {
	if c.Type.Array {
		return false, false
	}
	switch c.Type.ElemOID {
	case 20, 21, 23, 700, 701, 1700, 790:
		return true, true
	case 19, 1082, 1083, 1266, 1114, 1184, 16:
		return false, true
	}
	// text, varchar, bpchar, "char" and citext are the String scalars.
	return false, c.Type.Scalar == "String"
}

// aggregateType is the GraphQL type of a column inside an aggregate group.
func aggregateType(group string, c *Column) string {
	oid := c.Type.ElemOID
	switch group {
	case "sum":
		if oid == 20 || oid == 21 || oid == 23 {
			return "BigInt"
		}
		return "BigFloat"
	case "avg":
		return "BigFloat"
	}
	switch oid {
	case 21, 23:
		return "Int"
	case 20:
		return "BigInt"
	case 700, 701, 1700:
		return "BigFloat"
	case 16:
		return "Boolean"
	case 1082:
		return "Date"
	case 1083, 1266:
		return "Time"
	case 1114, 1184:
		return "Datetime"
	case 790:
		return "Opaque"
	}
	return "String"
}
