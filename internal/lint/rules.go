package lint

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/reflect"
	"github.com/pgreflect/pgreflect/sqlgen"
)

// reserved reports whether a GraphQL name is taken for introspection (__schema, __Type...): graphql-js's
// schema validation rejects a schema that defines one.
func reserved(name string) bool { return strings.HasPrefix(name, "__") }

// sortedTypes are the schema's types by name, for findings in a stable order.
func sortedTypes(s *gqlschema.Schema) []*gqlschema.Type {
	names := slices.Sorted(maps.Keys(s.Types))
	out := make([]*gqlschema.Type, len(names))
	for i, n := range names {
		out[i] = s.Types[n]
	}
	return out
}

func quotedList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// enumLabels: an enum value must be a GraphQL name. pg_graphql shows a label as it is, and pgreflect keeps that,
// but graphql-js (GraphiQL, Apollo, graphql-codegen) then rejects the whole introspection answer; a mappings
// directive names the values without changing the labels.
func enumLabels(s *gqlschema.Schema) []Finding {
	var out []Finding
	for _, t := range sortedTypes(s) {
		if t.Role != gqlschema.RoleEnum || t.Enum == nil {
			continue
		}
		used := map[string]bool{}
		var bad []*gqlschema.EnumValue
		for _, v := range t.EnumValues {
			if !gqlschema.IsValidName(v.Name) || reserved(v.Name) {
				bad = append(bad, v)
			} else {
				used[v.Name] = true
			}
		}
		if len(bad) == 0 {
			continue
		}
		mappings := maps.Clone(t.Enum.Directives.Mappings)
		if mappings == nil {
			mappings = map[string]string{}
		}
		labels := make([]string, len(bad))
		for i, v := range bad {
			labels[i] = v.Name
			mappings[v.SQL] = unique(graphQLName(v.SQL), used)
		}
		out = append(out, Finding{Level: Error, Rule: RuleEnumLabel, Object: typeObject(t.Enum),
			Reason: fmt.Sprintf("enum %s has values that are not GraphQL names: %s. graphql-js (GraphiQL, Apollo, "+
				"graphql-codegen) rejects the whole introspection answer. pg_graphql shows the labels as they are "+
				"and so does pgreflect; a mappings directive gives them GraphQL names, the database keeps its labels",
				t.Name, quotedList(labels)),
			Fix: commentOn("type "+sqlgen.Ident(t.Enum.SchemaName)+"."+sqlgen.Ident(t.Enum.Name), t.Enum.Directives,
				map[string]any{"mappings": mappings})})
	}
	return out
}

// clash is a type with several fields of one name; the API answers the last (resolve's findField, as
// pg_graphql), introspection lists them all.
type clash struct {
	typ    *gqlschema.Type
	name   string
	fields []*gqlschema.Field
	keep   *gqlschema.Field
}

// duplicateFields: two fields of one type with one name, most often two foreign keys to the same table without
// inflection (pagila's film.language_id and film.original_language_id both give film.language). The fix
// renames every field but the one whose name comes from its own column; the foreign keys' fixes are made after
// every clash is known, since one comment on a constraint carries both of its names.
func duplicateFields(s *gqlschema.Schema) []Finding {
	var clashes []clash
	renamed := map[*gqlschema.Field]string{}
	fkNames := map[*reflect.ForeignKey]*reflect.NameDirectives{}
	for _, t := range sortedTypes(s) {
		if t.Role != gqlschema.RoleNode || t.Table == nil {
			continue
		}
		byName := map[string][]*gqlschema.Field{}
		used := map[string]bool{}
		var order []string
		for _, f := range t.Fields {
			if len(byName[f.Name]) == 0 {
				order = append(order, f.Name)
			}
			byName[f.Name] = append(byName[f.Name], f)
			used[f.Name] = true
		}
		for _, name := range order {
			fields := byName[name]
			if len(fields) < 2 {
				continue
			}
			c := clash{typ: t, name: name, fields: fields, keep: keeper(fields)}
			for _, f := range fields {
				if f != c.keep {
					renamed[f] = proposeName(f, name, used, fkNames)
				}
			}
			clashes = append(clashes, c)
		}
	}
	var out []Finding
	for _, c := range clashes {
		described := make([]string, len(c.fields))
		var fixes []string
		for i, f := range c.fields {
			described[i] = describeField(s, f)
			if f != c.keep {
				if fix := renameFix(s, f, renamed[f], fkNames); fix != "" && !slices.Contains(fixes, fix) {
					fixes = append(fixes, fix)
				}
			}
		}
		answered := c.fields[len(c.fields)-1]
		out = append(out, Finding{Level: Error, Rule: RuleDuplicateField, Object: relationObject(c.typ.Table.Rel),
			Reason: fmt.Sprintf("type %s has %d fields named %q: %s. The API answers the last, %s, and the others cannot be "+
				"queried, while introspection lists them all", c.typ.Name, len(c.fields), c.name,
				strings.Join(described, "; "), describeField(s, answered)),
			Fix: strings.Join(fixes, "\n")})
	}
	return out
}

// keeper is the field of a clash that keeps its name: a column, else a relationship whose key column is named
// after the table it references (film.language_id to language, not film.original_language_id), else the one
// the API answers now.
func keeper(fields []*gqlschema.Field) *gqlschema.Field {
	for _, f := range fields {
		if f.Kind == gqlschema.FieldColumn {
			return f
		}
	}
	for _, f := range fields {
		if r := f.Relationship; r != nil && len(r.FK.LocalColumns) == 1 {
			referenced := r.To
			if !forward(r) {
				referenced = r.From
			}
			if strings.EqualFold(columnFieldName(r.FK.LocalColumns[0]), referenced.TypeName) {
				return f
			}
		}
	}
	return fields[len(fields)-1]
}

// columnFieldName is the to-one field name a key column would give under inflection: language_id -> language.
func columnFieldName(col string) string {
	return gqlschema.InflectedField(strings.TrimSuffix(strings.TrimSuffix(col, "_id"), "Id"))
}

// forward reports whether a relationship field is the foreign key's to-one side on the referencing table.
func forward(r *gqlschema.Relationship) bool {
	return r.From.Rel == r.FK.Local && slices.Equal(r.FromColumns, r.FK.LocalColumns)
}

// proposeName picks a new name for a field of a clash and, for a relationship, records it among its foreign
// key's names.
func proposeName(f *gqlschema.Field, clashName string, used map[string]bool, fkNames map[*reflect.ForeignKey]*reflect.NameDirectives) string {
	var name string
	switch {
	case f.Relationship != nil:
		r := f.Relationship
		cols := r.FK.LocalColumns
		if forward(r) && len(cols) == 1 && columnFieldName(cols[0]) != clashName {
			name = columnFieldName(cols[0])
		} else {
			by := gqlschema.InflectedField(strings.Join(cols, "_"))
			name = clashName + "By" + strings.ToUpper(by[:1]) + by[1:]
		}
		name = unique(name, used)
		names := fkNames[r.FK]
		if names == nil {
			d := r.FK.Directives
			names = &d
			fkNames[r.FK] = names
		}
		if forward(r) {
			names.ForeignName = name
		} else {
			names.LocalName = name
		}
		return name
	case f.Column != nil:
		name = gqlschema.InflectedField(f.Column.SQL.Name)
		if name == clashName {
			name += "Column"
		}
	default:
		name = clashName + "Fn"
	}
	return unique(name, used)
}

func describeField(s *gqlschema.Schema, f *gqlschema.Field) string {
	switch {
	case f.Relationship != nil:
		r := f.Relationship
		if forward(r) {
			return fmt.Sprintf("foreign key %s (%s)", r.FK.Name, strings.Join(r.FK.LocalColumns, ", "))
		}
		return fmt.Sprintf("foreign key %s of %s (%s), read backwards", r.FK.Name, relationName(r.FK.Local),
			strings.Join(r.FK.LocalColumns, ", "))
	case f.Column != nil:
		return "column " + f.Column.SQL.Name
	case f.Function != nil:
		return functionObject(s.Catalog, f.Function.SQL)
	}
	return "field " + f.Name
}

// renameFix is the statement that gives a field of a clash its new name.
func renameFix(s *gqlschema.Schema, f *gqlschema.Field, name string, fkNames map[*reflect.ForeignKey]*reflect.NameDirectives) string {
	switch {
	case f.Relationship != nil:
		fk := f.Relationship.FK
		names := fkNames[fk]
		if fk.Synthetic {
			return "" // declared in the table's foreign_keys directive: its local_name and foreign_name go there
		}
		set := map[string]any{}
		if names.ForeignName != "" {
			set["foreign_name"] = names.ForeignName
		}
		if names.LocalName != "" {
			set["local_name"] = names.LocalName
		}
		return commentOn("constraint "+sqlgen.Ident(fk.Name)+" on "+relationSQL(fk.Local), fk.Directives, set)
	case f.Column != nil:
		return columnComment(f.Table.Rel, f.Column.SQL, name)
	case f.Function != nil:
		return functionComment(s.Catalog, f.Function.SQL, name)
	}
	return ""
}

// reservedNames: names beginning with __ belong to introspection. A relation, column, enum or function named
// so gives the schema a type or field graphql-js refuses.
func reservedNames(s *gqlschema.Schema) []Finding {
	var out []Finding
	seen := map[string]bool{}
	add := func(object, name, fix string) {
		if seen[object] {
			return
		}
		seen[object] = true
		out = append(out, Finding{Level: Error, Rule: RuleReservedName, Object: object,
			Reason: fmt.Sprintf("its GraphQL name %q begins with \"__\", which GraphQL reserves for introspection: "+
				"graphql-js rejects the schema", name), Fix: fix})
	}
	for _, t := range sortedTypes(s) {
		switch {
		case t.Role == gqlschema.RoleNode && t.Table != nil:
			r := t.Table.Rel
			if reserved(t.Name) {
				add(relationObject(r), t.Name, relationComment(r, map[string]any{"name": graphQLName(t.Name)}))
			}
			for _, f := range t.Fields {
				if !reserved(f.Name) {
					continue
				}
				switch {
				case f.Column != nil:
					add(columnObject(r, f.Column.SQL), f.Name, columnComment(r, f.Column.SQL, graphQLName(f.Name)))
				case f.Function != nil:
					fn := f.Function.SQL
					add(functionObject(s.Catalog, fn), f.Name, functionComment(s.Catalog, fn, graphQLName(f.Name)))
				}
			}
		case t.Role == gqlschema.RoleEnum && t.Enum != nil && reserved(t.Name):
			add(typeObject(t.Enum), t.Name, commentOn("type "+sqlgen.Ident(t.Enum.SchemaName)+"."+sqlgen.Ident(t.Enum.Name),
				t.Enum.Directives, map[string]any{"name": graphQLName(t.Name)}))
		case t.Role == gqlschema.RoleQuery || t.Role == gqlschema.RoleMutation:
			for _, f := range t.Fields {
				if f.Function == nil {
					continue
				}
				fn := f.Function.SQL
				if reserved(f.Name) {
					add(functionObject(s.Catalog, fn), f.Name, functionComment(s.Catalog, fn, graphQLName(f.Name)))
				}
				for _, a := range f.Args {
					if a.Param != nil && reserved(a.Name) {
						// no directive names an argument: the function itself must rename it
						add(functionObject(s.Catalog, fn)+" argument "+a.Param.SQLName, a.Name, "")
					}
				}
			}
		}
	}
	return out
}
