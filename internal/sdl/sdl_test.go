package sdl_test

import (
	"strings"
	"testing"

	"github.com/pgreflect/pgreflect/internal/sdl"
)

const introspection = `{"data": {"__schema": {"queryType": {"name": "Query"}, "mutationType": null, "subscriptionType": null,
  "types": [
    {"kind": "OBJECT", "name": "Query", "description": "The root", "fields": [
      {"name": "items", "description": null, "isDeprecated": false, "deprecationReason": null,
       "type": {"kind": "NON_NULL", "name": null, "ofType": {"kind": "LIST", "name": null, "ofType": {"kind": "NON_NULL", "name": null, "ofType": {"kind": "OBJECT", "name": "Item", "ofType": null}}}},
       "args": [
         {"name": "first", "description": null, "type": {"kind": "SCALAR", "name": "Int", "ofType": null}, "defaultValue": "30"},
         {"name": "order", "description": null, "type": {"kind": "ENUM", "name": "Order", "ofType": null}, "defaultValue": "ASC"},
         {"name": "names", "description": null, "type": {"kind": "LIST", "name": null, "ofType": {"kind": "SCALAR", "name": "String", "ofType": null}}, "defaultValue": "[\"a\", \"b\"]"}
       ]}],
     "inputFields": null, "interfaces": [], "enumValues": null, "possibleTypes": null},
    {"kind": "OBJECT", "name": "Item", "description": null, "fields": [
      {"name": "id", "description": "The key", "args": [], "type": {"kind": "NON_NULL", "name": null, "ofType": {"kind": "SCALAR", "name": "Int", "ofType": null}}, "isDeprecated": false, "deprecationReason": null},
      {"name": "old", "description": null, "args": [], "type": {"kind": "SCALAR", "name": "String", "ofType": null}, "isDeprecated": true, "deprecationReason": "use id"}],
     "inputFields": null, "interfaces": [], "enumValues": null, "possibleTypes": null},
    {"kind": "ENUM", "name": "Order", "description": null, "fields": null, "inputFields": null, "interfaces": null,
     "enumValues": [{"name": "ASC", "description": null, "isDeprecated": false, "deprecationReason": null}, {"name": "DESC", "description": null, "isDeprecated": false, "deprecationReason": null}], "possibleTypes": null},
    {"kind": "SCALAR", "name": "Int", "description": "Built in", "fields": null, "inputFields": null, "interfaces": null, "enumValues": null, "possibleTypes": null},
    {"kind": "SCALAR", "name": "String", "description": null, "fields": null, "inputFields": null, "interfaces": null, "enumValues": null, "possibleTypes": null},
    {"kind": "OBJECT", "name": "__Type", "description": null, "fields": [], "inputFields": null, "interfaces": [], "enumValues": null, "possibleTypes": null}
  ]}}}`

const wantSDL = `type Item {
  """
  The key
  """
  id: Int!
  old: String @deprecated(reason: "use id")
}
enum Order {
  ASC
  DESC
}
"""
The root
"""
type Query {
  items(first: Int = 30, order: Order = ASC, names: [String] = ["a","b"]): [Item!]!
}
`

// An introspection result prints as SDL: types sorted, built-in scalars and meta types left out, defaults,
// descriptions and deprecations kept; and the SDL reads back to the same text.
func TestIntrospectionToSDL(t *testing.T) {
	schema, err := sdl.Load("schema.json", []byte(introspection))
	if err != nil {
		t.Fatal(err)
	}
	got := string(sdl.Print(schema))
	if got != wantSDL {
		t.Fatalf("got:\n%s\nwant:\n%s", got, wantSDL)
	}
	again, err := sdl.Load("schema.graphql", []byte(got))
	if err != nil {
		t.Fatal(err)
	}
	if printed := string(sdl.Print(again)); printed != got {
		t.Errorf("SDL read back prints differently:\n%s", printed)
	}
}

func TestLoadRejects(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"no schema", `{"data": {}}`, "no __schema"},
		{"unknown kind", strings.Replace(introspection, `"kind": "ENUM", "name": "Order", "description"`, `"kind": "THING", "name": "Order", "description"`, 1), `unknown kind "THING"`},
		{"bad default", strings.Replace(introspection, `"defaultValue": "30"`, `"defaultValue": "{"`, 1), "is not a GraphQL literal"},
		{"missing root", strings.Replace(introspection, `{"name": "Query"}`, `{"name": "Root"}`, 1), "root type Root"},
		{"invalid SDL", `type Query { x: Missing }`, "Missing"},
	} {
		if _, err := sdl.Load(tc.name, []byte(tc.src)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}
