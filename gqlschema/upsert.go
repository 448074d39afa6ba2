package gqlschema

import (
	"fmt"

	"github.com/pgreflect/pgreflect/reflect"
)

// addUpsertTypes adds <X>OnConflict, <X>Constraint and <X>UpdateColumn (the shape of pg_graphql's open pull
// request #622, so that clients written for it work) for a table with the upsert feature on, when the role
// may insert, may update some column, and the table has a unique key the insert input can fill.
func (b *builder) addUpsertTypes(t *Table) {
	if !t.Features.Has(reflect.FeatureUpsert) || !isTable(t.Rel) {
		return
	}
	ins := b.s.Types[t.TypeName+"InsertInput"]
	if ins == nil {
		return
	}
	name, hidden := t.TypeName, b.hidden(t.Rel.Schema.OID)
	constraints := &Type{Kind: Enum, Name: name + "Constraint", Table: t, Hidden: hidden,
		Description: str(fmt.Sprintf("Unique constraints of `%s` an insert may conflict with", name))}
	for _, k := range t.Rel.UniqueKeys {
		if validEnumValue(k.Name) && conflictTarget(t, ins, k.Columns) {
			constraints.EnumValues = append(constraints.EnumValues, &EnumValue{Name: k.Name, SQL: k.Name})
		}
	}
	columns := &Type{Kind: Enum, Name: name + "UpdateColumn", Table: t, Hidden: hidden,
		Description: str(fmt.Sprintf("Columns of `%s` an insert's conflict may update", name))}
	for _, in := range b.writable(t, func(c *reflect.Column) bool { return c.CanUpdate }) {
		if !validEnumValue(in.Name) {
			continue
		}
		columns.EnumValues = append(columns.EnumValues, &EnumValue{Name: in.Name, SQL: in.Column.SQL.Name})
	}
	if len(constraints.EnumValues) == 0 || len(columns.EnumValues) == 0 {
		return
	}
	for _, n := range []string{constraints.Name, columns.Name, name + "OnConflict"} {
		if b.s.Types[n] != nil {
			return // a table's own type already has the name
		}
	}
	b.add(constraints)
	b.add(columns)
	b.add(&Type{Kind: InputObject, Name: name + "OnConflict", Table: t, Hidden: hidden,
		Description: str(fmt.Sprintf("Turns an insert into `%s` into an upsert: rows that conflict on `constraint` are updated instead", name)),
		InputFields: []*InputValue{
			{Name: "constraint", Description: b.text("The unique constraint whose conflicts update the existing row"),
				Type: NonNullOf(Named(constraints.Name))},
			{Name: "updateColumns", Description: b.text("Columns set from the inserted values on conflict; empty leaves the existing row as it is"),
				Type: NonNullOf(ListOf(NonNullOf(Named(columns.Name))))},
			{Name: "filter", Description: b.text("Only existing rows matching the filter are updated"),
				Type: t.refs.filter},
		}})
}

// validEnumValue reports whether a constraint's or a column's name can be an enum value: a valid name, and
// not one of the three GraphQL forbids.
func validEnumValue(name string) bool {
	return IsValidName(name) && name != "true" && name != "false" && name != "null"
}

// conflictTarget reports whether an insert can conflict on the key: the input fills each of its columns and
// the role may read them (ON CONFLICT reads the target's columns).
func conflictTarget(t *Table, ins *Type, cols []string) bool {
	for _, c := range cols {
		found := false
		for _, in := range ins.InputFields {
			if in.Column != nil && in.Column.SQL.Name == c && in.Column.SQL.CanSelect {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return len(cols) > 0
}

// insertArgs are the arguments of insertInto<X>Collection: pg_graphql's objects, and onConflict where the
// upsert extension added its type.
func (b *builder) insertArgs(t *Table) []*InputValue {
	args := []*InputValue{{Name: "objects", Type: NonNullOf(ListOf(NonNullOf(Named(t.TypeName + "InsertInput"))))}}
	if on := b.s.Types[t.TypeName+"OnConflict"]; on != nil && on.Table == t && on.Kind == InputObject {
		args = append(args, &InputValue{Name: "onConflict", Type: Named(on.Name),
			Description: b.text("Updates the existing row instead where an object conflicts with a unique constraint")})
	}
	return args
}
