package lint

import (
	"fmt"
	"strings"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/reflect"
	"github.com/pgreflect/pgreflect/sqlgen"
)

// omissions turns what the schema left out (gqlschema's record) into findings. What grants decide (a relation
// or function the role may not use) is no mistake and is left to the console's Access page; trigger
// functions never belong to an API.
func omissions(s *gqlschema.Schema) []Finding {
	var out []Finding
	overloads := map[string]int{}
	for _, f := range s.Catalog.Functions {
		overloads[f.Name]++
	}
	for _, o := range s.Omitted {
		var f Finding
		switch {
		case o.Function != nil:
			f = functionLeftOut(s, o, overloads[o.Function.Name])
		case o.Column != nil:
			f = Finding{Level: Warning, Rule: RuleInvalidName, Object: columnObject(o.Relation, o.Column),
				Reason: fmt.Sprintf("%q is not a GraphQL name: the column is left out of the API", o.Name),
				Fix:    columnComment(o.Relation, o.Column, graphQLName(o.Name))}
		case o.Relation != nil:
			f = relationLeftOut(s, o)
		}
		if f.Rule != "" {
			out = append(out, f)
		}
	}
	return out
}

func relationLeftOut(s *gqlschema.Schema, o gqlschema.Omission) Finding {
	r := o.Relation
	object := relationObject(r)
	switch o.Reason {
	case gqlschema.OmitInvalidName:
		return Finding{Level: Warning, Rule: RuleInvalidName, Object: object,
			Reason: fmt.Sprintf("%q is not a GraphQL name: the %s is left out of the API", o.Name, relationKind(r)),
			Fix:    relationComment(r, map[string]any{"name": graphQLName(o.Name)})}
	case gqlschema.OmitNameTaken:
		taker := fmt.Sprintf("a built-in or enum type is named %s", o.Name)
		if o.By != nil {
			taker = fmt.Sprintf("%s, earlier on the search path, has the type name %s", relationObject(o.By), o.Name)
			if o.By.Schema == r.Schema {
				taker = fmt.Sprintf("%s has the type name %s", relationObject(o.By), o.Name)
			}
		}
		name := r.Schema.Name + "_" + o.Name
		if r.Schema.Directives.InflectNames {
			name = gqlschema.InflectedField(r.Schema.Name)
			name = strings.ToUpper(name[:1]) + name[1:] + o.Name
		}
		return Finding{Level: Warning, Rule: RuleShadowed, Object: object,
			Reason: fmt.Sprintf("%s: %s has no type, collection or mutation, and nothing else says so (the server "+
				"logs it at load)", taker, relationName(r)),
			Fix: relationComment(r, map[string]any{"name": graphQLName(name)})}
	case gqlschema.OmitNoPrimaryKey:
		cols := keyGuess(r)
		if r.Kind == "v" || r.Kind == "m" || r.Kind == "f" {
			return Finding{Level: Warning, Rule: RuleNoPrimaryKey, Object: object,
				Reason: fmt.Sprintf("a %s has no primary key, and without a primary_key_columns directive the API leaves "+
					"it out (nodeId and cursors need a key); name the columns that identify a row", relationKind(r)),
				Fix: relationComment(r, map[string]any{"primary_key_columns": cols})}
		}
		quoted := make([]string, len(cols))
		for i, c := range cols {
			quoted[i] = sqlgen.Ident(c)
		}
		return Finding{Level: Warning, Rule: RuleNoPrimaryKey, Object: object,
			Reason: "a table without a primary key is left out of the API (nodeId and cursors need a key)",
			Fix:    fmt.Sprintf("alter table %s add primary key (%s);", relationSQL(r), strings.Join(quoted, ", "))}
	case gqlschema.OmitPrimaryKeyType:
		return Finding{Level: Warning, Rule: RuleNoPrimaryKey, Object: object,
			Reason: fmt.Sprintf("a column of its primary key (%s) is of a type GraphQL cannot show, and nodeId and "+
				"cursors need the whole key: the API leaves the %s out", strings.Join(r.PrimaryKey, ", "), relationKind(r))}
	}
	return Finding{}
}

// keyGuess names the columns most likely to identify a row: a unique index on columns that are not null, else
// a column named id, else the first column.
func keyGuess(r *reflect.Relation) []string {
	for _, ix := range r.UniqueIndexes {
		notNull := len(ix) > 0
		for _, name := range ix {
			c := r.Column(name)
			notNull = notNull && c != nil && c.NotNull
		}
		if notNull {
			return ix
		}
	}
	if r.Column("id") != nil || len(r.Columns) == 0 {
		return []string{"id"}
	}
	return []string{r.Columns[0].Name}
}

func functionLeftOut(s *gqlschema.Schema, o gqlschema.Omission, overloads int) Finding {
	fn := o.Function
	f := Finding{Level: Warning, Rule: RuleFunctionLeftOut, Object: functionObject(s.Catalog, fn)}
	switch o.Reason {
	case gqlschema.OmitInvalidName:
		f.Rule = RuleInvalidName
		f.Reason = fmt.Sprintf("%q is not a GraphQL name: the function is left out of the API", o.Name)
		f.Fix = functionComment(s.Catalog, fn, graphQLName(o.Name))
	case gqlschema.OmitVariadic:
		f.Reason = "a VARIADIC function is left out of the API; declare its last argument as a plain array"
	case gqlschema.OmitOverloaded:
		f.Reason = fmt.Sprintf("%d functions are named %s, and pg_graphql shows none of them at the root; a name "+
			"directive does not help (overloads are counted by their SQL name): give each its own name", overloads, fn.Name)
	case gqlschema.OmitArgument:
		f.Reason = argumentReason(s.Catalog, fn, o.Argument)
	case gqlschema.OmitReturnType:
		f.Reason = "its result has no GraphQL shape (record, a set of scalars, an enum or an array of enums at the root, " +
			"a type without a mapping, or rows of a relation the API does not show): the function is left out"
	case gqlschema.OmitArgumentClash:
		f.Reason = "it returns a connection, and an argument is named like one of the connection's (first, last, before, " +
			"after, offset, filter, orderBy): the function is left out; rename the argument"
	case gqlschema.OmitFieldNameTaken:
		f.Reason = fmt.Sprintf("its field name %s is a collection's or a byPk field's: the function is left out", o.Name)
		f.Fix = functionComment(s.Catalog, fn, o.Name+"Fn")
	default:
		return Finding{} // grants and triggers: not a mistake
	}
	return f
}

// argumentReason says which argument rules a root function out.
func argumentReason(cat *reflect.Catalog, fn *reflect.Function, i int) string {
	names := gqlschema.InputArgNames(fn)
	if i >= len(names) || names[i] == "" {
		return fmt.Sprintf("argument %d has no name, and a root field's arguments are named after the function's: "+
			"the function is left out of the API", i+1)
	}
	return fmt.Sprintf("argument %s is of type %s, which a root field cannot take (an enum, a composite, a "+
		"pseudo-type or an array of such; the composite feature admits enums): the function is left out of the API",
		names[i], argTypes(cat, fn, false)[i])
}
