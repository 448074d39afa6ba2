package schemadiff_test

import (
	"strings"
	"testing"

	"github.com/pgreflect/pgreflect/internal/schemadiff"
	"github.com/pgreflect/pgreflect/internal/sdl"
)

const baseSDL = `
interface Node { id: ID! }
type Query { items(first: Int = 30, filter: ItemFilter): [Item!] node(id: ID!): Node }
type Item implements Node { id: ID! name: String tags: [String] }
input ItemFilter { name: String size: Int! }
enum Color { RED GREEN }
scalar Cursor
`

// graphql-inspector's rules on schemas without a database: each edit gives one change of the expected level
// at the expected coordinate.
func TestRules(t *testing.T) {
	cases := []struct {
		name, from, to string
		level          schemadiff.Level
		path           string
	}{
		{"type removed", "enum Color { RED GREEN }", "", schemadiff.Breaking, "Color"},
		{"type added", "scalar Cursor", "scalar Cursor scalar Opaque", schemadiff.Safe, "Opaque"},
		{"kind changed", "scalar Cursor", "enum Cursor { A }", schemadiff.Breaking, "Cursor"},
		{"interface removed", "type Item implements Node {", "type Item {", schemadiff.Breaking, "Item"},
		{"list element made non-null", "tags: [String]", "tags: [String!]", schemadiff.Safe, "Item.tags"},
		{"list made non-null element nullable", "[Item!]", "[Item]", schemadiff.Breaking, "Query.items"},
		{"field type changed", "name: String tags", "name: Int tags", schemadiff.Breaking, "Item.name"},
		{"required argument added", "node(id: ID!)", "node(id: ID!, kind: String!)", schemadiff.Breaking, "Query.node(kind:)"},
		{"optional argument added", "node(id: ID!)", "node(id: ID!, kind: String)", schemadiff.Safe, "Query.node(kind:)"},
		{"argument removed", "items(first: Int = 30, filter: ItemFilter)", "items(first: Int = 30)", schemadiff.Breaking, "Query.items(filter:)"},
		{"argument made required", "filter: ItemFilter)", "filter: ItemFilter!)", schemadiff.Breaking, "Query.items(filter:)"},
		{"argument made optional", "node(id: ID!)", "node(id: ID)", schemadiff.Safe, "Query.node(id:)"},
		{"argument default changed", "first: Int = 30", "first: Int = 10", schemadiff.Dangerous, "Query.items(first:)"},
		{"input field made optional", "size: Int!", "size: Int", schemadiff.Safe, "ItemFilter.size"},
		{"required input field added", "size: Int! }", "size: Int! color: Color! }", schemadiff.Breaking, "ItemFilter.color"},
		{"optional input field added", "size: Int! }", "size: Int! color: Color }", schemadiff.Safe, "ItemFilter.color"},
		{"enum value removed", "RED GREEN", "RED", schemadiff.Breaking, "Color.GREEN"},
		{"enum value added", "RED GREEN", "RED GREEN BLUE", schemadiff.Dangerous, "Color.BLUE"},
		{"description changed", "scalar Cursor", `"An opaque cursor" scalar Cursor`, schemadiff.Safe, "Cursor"},
	}
	old, err := sdl.Parse("old", []byte(baseSDL))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(baseSDL, tc.from) {
				t.Fatalf("%q not in the schema", tc.from)
			}
			edited := strings.Replace(baseSDL, tc.from, tc.to, 1)
			new, err := sdl.Parse("new", []byte(edited))
			if err != nil {
				t.Fatal(err)
			}
			changes := schemadiff.Compare(schemadiff.Side{Schema: old}, schemadiff.Side{Schema: new})
			if len(changes) != 1 || changes[0].Level != tc.level || changes[0].Path != tc.path {
				t.Errorf("got %+v, want one %s change at %s", changes, tc.level, tc.path)
			}
		})
	}
	if changes := schemadiff.Compare(schemadiff.Side{Schema: old}, schemadiff.Side{Schema: old}); len(changes) != 0 {
		t.Errorf("a schema against itself: %+v", changes)
	}
}
