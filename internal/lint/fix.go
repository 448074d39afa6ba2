package lint

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/reflect"
	"github.com/pgreflect/pgreflect/sqlgen"
)

// relationKind is the word SQL uses for a relation of that relkind (in COMMENT ON and in findings).
func relationKind(r *reflect.Relation) string {
	switch r.Kind {
	case "v":
		return "view"
	case "m":
		return "materialized view"
	case "f":
		return "foreign table"
	}
	return "table"
}

func relationName(r *reflect.Relation) string { return r.Schema.Name + "." + r.Name }

func relationObject(r *reflect.Relation) string { return relationKind(r) + " " + relationName(r) }

func relationSQL(r *reflect.Relation) string {
	return sqlgen.Ident(r.Schema.Name) + "." + sqlgen.Ident(r.Name)
}

func columnObject(r *reflect.Relation, c *reflect.Column) string {
	return "column " + relationName(r) + "." + c.Name
}

// functionObject names a function with its argument types, as COMMENT ON FUNCTION needs them.
func functionObject(cat *reflect.Catalog, f *reflect.Function) string {
	return "function " + f.Schema.Name + "." + f.Name + "(" + strings.Join(argTypes(cat, f, false), ", ") + ")"
}

func functionSQL(cat *reflect.Catalog, f *reflect.Function) string {
	return sqlgen.Ident(f.Schema.Name) + "." + sqlgen.Ident(f.Name) + "(" + strings.Join(argTypes(cat, f, true), ", ") + ")"
}

// argTypes names the types of a function's input arguments; pg_catalog's by their plain name.
func argTypes(cat *reflect.Catalog, f *reflect.Function, quoted bool) []string {
	out := make([]string, len(f.ArgTypes))
	for i, oid := range f.ArgTypes {
		t := cat.Types[oid]
		switch {
		case t == nil:
			out[i] = fmt.Sprint(oid) // not read by the catalog query; the oid still tells which type
		case t.SchemaName == "pg_catalog":
			out[i] = t.Name
		case quoted:
			out[i] = sqlgen.Ident(t.SchemaName) + "." + sqlgen.Ident(t.Name)
		default:
			out[i] = t.SchemaName + "." + t.Name
		}
	}
	return out
}

func typeObject(t *reflect.Type) string { return "type " + t.SchemaName + "." + t.Name }

// commentOn is the COMMENT statement that gives an object the directive existing (the object's directives as
// the model read them) with the keys of set replaced. A comment replaces the whole previous one, so the
// directive keeps every key the object had.
func commentOn(target string, existing any, set map[string]any) string {
	keys := map[string]any{}
	if b, err := json.Marshal(existing); err == nil {
		_ = json.Unmarshal(b, &keys) // a directive struct always round-trips
	}
	for k, v := range keys {
		if empty(v) {
			delete(keys, k)
		}
	}
	for k, v := range set {
		keys[k] = v
	}
	doc, _ := json.Marshal(keys) // strings, lists and maps of strings: cannot fail
	return "comment on " + target + " is '@graphql(" + strings.ReplaceAll(string(doc), "'", "''") + ")';"
}

// empty reports whether a directive key was left unset (the model decodes an absent key to its zero value).
func empty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

// relationComment is the comment statement that gives a relation the directive keys of set.
func relationComment(r *reflect.Relation, set map[string]any) string {
	return commentOn(relationKind(r)+" "+relationSQL(r), r.Directives, set)
}

func columnComment(r *reflect.Relation, c *reflect.Column, name string) string {
	return commentOn("column "+relationSQL(r)+"."+sqlgen.Ident(c.Name), c.Directives, map[string]any{"name": name})
}

func functionComment(cat *reflect.Catalog, f *reflect.Function, name string) string {
	return commentOn("function "+functionSQL(cat, f), f.Directives, map[string]any{"name": name})
}

// graphQLName makes a GraphQL name of s: characters GraphQL does not allow become underscores, a leading digit
// gets one before it, and no name begins with the reserved "__".
func graphQLName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := b.String()
	if name == "" {
		return "EMPTY"
	}
	if name[0] >= '0' && name[0] <= '9' {
		name = "_" + name
	}
	for strings.HasPrefix(name, "__") && len(name) > 2 {
		name = name[1:]
	}
	if !gqlschema.IsValidName(name) || strings.HasPrefix(name, "__") {
		return "_EMPTY"
	}
	return name
}

// unique returns name, or name with the first number from 2 that makes it unused.
func unique(name string, used map[string]bool) string {
	out := name
	for n := 2; used[out]; n++ {
		out = fmt.Sprintf("%s%d", name, n)
	}
	used[out] = true
	return out
}
