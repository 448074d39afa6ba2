package gqlschema

import (
	"testing"

	"github.com/pgreflect/pgreflect/reflect"
)

// TestBase checks pg_graphql's inflection: upper-case after every non-alphanumeric, drop underscores, never
// lower-case (contract 1.2).
func TestBase(t *testing.T) {
	for in, want := range map[string]string{
		"blog_post": "BlogPost", "account_BY_email": "AccountBYEmail", "_id": "Id", "id": "Id", "x__y": "XY",
		"typeVarchar_n": "TypeVarcharN", "a1b_2c": "A1b2c", "café_au_lait": "CaféAuLait", "_": "", "ALL_CAPS": "ALLCAPS",
		"with space": "With Space", "trailing_": "Trailing",
	} {
		if got := base(in, true); got != want {
			t.Errorf("base(%q) = %q, want %q", in, got, want)
		}
		if got := base(in, false); got != in {
			t.Errorf("base(%q) without inflection = %q", in, got)
		}
	}
	for in, want := range map[string]string{"BlogPost": "blogPost", "ÉtéX": "étéX", "": "", "a": "a", "ABC": "aBC", "_x": "_x"} {
		if got := lcfirst(in); got != want {
			t.Errorf("lcfirst(%q) = %q, want %q", in, got, want)
		}
	}
	for name, valid := range map[string]bool{"a": true, "_a1": true, "1a": false, "a-b": false, "": false, "Été": false,
		"_": true, "Z9_z": true, "9": false, "a\n": false, "a b": false, "a@": false, "[": false, "`": false, "{": false, "/": false, ":": false} {
		if IsValidName(name) != valid {
			t.Errorf("IsValidName(%q) = %v", name, !valid)
		}
	}
}

// TestValueTypeFilterAndOrder: which values get which filter input type and which are orderable (contract 1.6,
// 1.7).
func TestValueTypeFilterAndOrder(t *testing.T) {
	for _, c := range []struct {
		v         ValueType
		filter    string
		orderable bool
	}{
		{ValueType{Scalar: "Int"}, "IntFilter", true},
		{ValueType{Scalar: "JSON"}, "", false},
		{ValueType{Scalar: "Opaque"}, "OpaqueFilter", true},
		{ValueType{Scalar: "String", Array: true}, "StringListFilter", false},
		{ValueType{Scalar: "BigInt", Array: true}, "BigIntListFilter", false},
		{ValueType{Scalar: "JSON", Array: true}, "", false},
		{ValueType{Scalar: "Opaque", Array: true}, "", false},
	} {
		if got := c.v.Filter(); got != c.filter {
			t.Errorf("%+v: filter %q, want %q", c.v, got, c.filter)
		}
		if got := c.v.Orderable(); got != c.orderable {
			t.Errorf("%+v: orderable %v", c.v, got)
		}
	}
}

// TestAggregateTypes: the aggregate groups a column belongs to and its GraphQL type in each (contract 1.16).
func TestAggregateTypes(t *testing.T) {
	col := func(format string, oid uint32, array bool) *Column {
		scalar := ""
		if s, ok := scalarByOID[oid]; ok {
			scalar = s.name
		}
		c := &Column{Type: &ValueType{ElemOID: oid, Array: array, Scalar: scalar}}
		c.SQL = &reflect.Column{FormatType: format}
		return c
	}
	for _, c := range []struct {
		format         string
		oid            uint32
		array          bool
		sumAvg, minMax bool
		sum, min       string
	}{
		{"integer", 23, false, true, true, "BigInt", "Int"},
		{"smallint", 21, false, true, true, "BigInt", "Int"},
		{"bigint", 20, false, true, true, "BigInt", "BigInt"},
		{"numeric(10,2)", 1700, false, true, true, "BigFloat", "BigFloat"},
		{"double precision", 701, false, true, true, "BigFloat", "BigFloat"},
		{"money", 790, false, true, true, "BigFloat", "Opaque"},
		{"character varying(255)", 1043, false, false, true, "", "String"},
		{"timestamp with time zone", 1184, false, false, true, "", "Datetime"},
		{"timestamp(3) without time zone", 1114, false, false, true, "", "Datetime"},
		{"text", 25, false, false, true, "", "String"},
		{"character(2)", 1042, false, false, true, "", "String"},
		{"\"char\"", 18, false, false, true, "", "String"},
		{"name", 19, false, false, true, "", "String"},
		{"interval", 1186, false, false, false, "", ""},
		{"time with time zone", 1266, false, false, true, "", "Time"},
		{"date", 1082, false, false, true, "", "Date"},
		{"boolean", 16, false, false, true, "", "Boolean"},
		{"uuid", 2950, false, false, false, "", ""},
		{"jsonb", 3802, false, false, false, "", ""},
		{"integer[]", 23, true, false, false, "", ""},
	} {
		cl := col(c.format, c.oid, c.array)
		sumAvg, minMax := aggregatable(cl)
		if sumAvg != c.sumAvg || minMax != c.minMax {
			t.Errorf("%s: aggregatable = %v, %v", c.format, sumAvg, minMax)
		}
		if c.sumAvg {
			if got := aggregateType("sum", cl); got != c.sum {
				t.Errorf("%s: sum type %s, want %s", c.format, got, c.sum)
			}
			if got := aggregateType("avg", cl); got != "BigFloat" {
				t.Errorf("%s: avg type %s", c.format, got)
			}
		}
		if c.minMax {
			if got := aggregateType("min", cl); got != c.min {
				t.Errorf("%s: min type %s, want %s", c.format, got, c.min)
			}
		}
	}
}
