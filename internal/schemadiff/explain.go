package schemadiff

import (
	"fmt"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/reflect"
)

// explain names the database object behind c when a side is a database: what the old schema had is looked
// up in the new catalog (and the reverse for additions) to tell a dropped column from a revoked privilege or a
// comment directive.
func explain(c *Change, old, new *gqlschema.Schema, oldSchema *ast.Schema) {
	if old == nil && new == nil {
		return
	}
	e := explainer{old: old, new: new}
	if old == nil {
		c.Reason = fromCurrent(c, new, oldSchema)
		return
	}
	switch c.kind {
	case typeRemoved, typeKindChanged:
		c.Reason = e.typeGone(lookupType(old, c.typeName), new)
	case typeAdded:
		c.Reason = e.typeCame(lookupType(new, c.typeName), old)
	case fieldRemoved:
		c.Reason = e.fieldGone(lookupType(old, c.typeName), c.field, new)
	case fieldAdded:
		c.Reason = e.fieldCame(lookupType(new, c.typeName), c.field, old)
	case fieldTypeChanged, defaultChanged, argTypeChanged, argRemoved, argAdded:
		c.Reason = e.fieldChanged(c)
	case enumValueRemoved:
		c.Reason = e.enumValue(lookupType(old, c.typeName), c.enum, new, "removed from")
	case enumValueAdded:
		c.Reason = e.enumValue(lookupType(new, c.typeName), c.enum, old, "added to")
	}
}

type explainer struct{ old, new *gqlschema.Schema }

func lookupType(s *gqlschema.Schema, name string) *gqlschema.Type {
	if s == nil {
		return nil
	}
	return s.Types[name]
}

// target is what a generated field or input field stands for.
type target struct {
	table  *gqlschema.Table
	column *gqlschema.Column
	rel    *gqlschema.Relationship
	fn     *gqlschema.Function
	kind   gqlschema.FieldKind
}

// inputField is the kind of a target that is an input object's field rather than a field.
const inputField gqlschema.FieldKind = -1

func fieldTarget(t *gqlschema.Type, name string) (target, bool) {
	if t == nil {
		return target{}, false
	}
	for _, f := range t.Fields {
		if f.Name == name {
			return target{table: f.Table, column: f.Column, rel: f.Relationship, fn: f.Function, kind: f.Kind}, true
		}
	}
	for _, iv := range t.InputFields {
		if iv.Name == name {
			return target{table: t.Table, column: iv.Column, kind: inputField}, true
		}
	}
	return target{}, false
}

func qualified(r *reflect.Relation) string { return r.Schema.Name + "." + r.Name }

func findRelation(s *gqlschema.Schema, r *reflect.Relation) *reflect.Relation {
	for _, o := range s.Catalog.Relations {
		if o.Name == r.Name && o.Schema != nil && r.Schema != nil && o.Schema.Name == r.Schema.Name {
			return o
		}
	}
	return nil
}

func findTable(s *gqlschema.Schema, r *reflect.Relation) *gqlschema.Table {
	if o := findRelation(s, r); o != nil {
		return s.Tables[o.OID]
	}
	return nil
}

// tableGone says why the relation behind a vanished type or field is no longer exposed in other.
func (e explainer) tableGone(t *gqlschema.Table, other *gqlschema.Schema) string {
	name := qualified(t.Rel)
	if other == nil {
		return "table " + name
	}
	r := findRelation(other, t.Rel)
	if r == nil {
		return fmt.Sprintf("table %s dropped or renamed", name)
	}
	if ot := other.Tables[r.OID]; ot != nil && ot.TypeName != t.TypeName {
		return fmt.Sprintf("comment directive on table %s renames type %s to %s", name, t.TypeName, ot.TypeName)
	}
	selectable := false
	for _, c := range r.Columns {
		selectable = selectable || c.CanSelect
	}
	switch {
	case !selectable:
		return fmt.Sprintf("SELECT revoked from %s on %s", other.Catalog.Role, name)
	case len(r.PrimaryKey) == 0:
		return fmt.Sprintf("primary key of %s dropped", name)
	}
	return fmt.Sprintf("table %s is no longer exposed", name)
}

// privilegeGone explains a vanished insert, update or delete type or field of a table still exposed.
func (e explainer) privilegeGone(t *gqlschema.Table, privilege string, other *gqlschema.Schema) string {
	if other == nil {
		return "table " + qualified(t.Rel)
	}
	ot := findTable(other, t.Rel)
	if ot == nil || ot.TypeName != t.TypeName {
		return e.tableGone(t, other)
	}
	if held(ot.Rel, privilege) {
		return fmt.Sprintf("no column of %s left to %s (dropped, generated or identity)", qualified(t.Rel), strings.ToLower(privilege))
	}
	return fmt.Sprintf("%s revoked from %s on %s", privilege, other.Catalog.Role, qualified(t.Rel))
}

// held reports whether the role holds the privilege on the relation or on any of its columns.
func held(r *reflect.Relation, privilege string) bool {
	switch privilege {
	case "DELETE":
		return r.CanDelete
	case "INSERT":
		if r.CanInsert {
			return true
		}
	case "UPDATE":
		if r.CanUpdate {
			return true
		}
	}
	for _, c := range r.Columns {
		if privilege == "INSERT" && c.CanInsert || privilege == "UPDATE" && c.CanUpdate {
			return true
		}
	}
	return false
}

func (e explainer) typeGone(t *gqlschema.Type, other *gqlschema.Schema) string {
	if t == nil {
		return ""
	}
	if t.Enum != nil {
		return enumGone(t.Enum, other)
	}
	if t.Table == nil {
		return ""
	}
	switch t.Role {
	case gqlschema.RoleInsertInput, gqlschema.RoleInsertResponse:
		return e.privilegeGone(t.Table, "INSERT", other)
	case gqlschema.RoleUpdateInput, gqlschema.RoleUpdateResponse:
		return e.privilegeGone(t.Table, "UPDATE", other)
	case gqlschema.RoleDeleteResponse:
		return e.privilegeGone(t.Table, "DELETE", other)
	case gqlschema.RoleAggregate, gqlschema.RoleAggregateResult:
		if other != nil && findTable(other, t.Table.Rel) != nil {
			return "aggregate directive or aggregatable columns of " + qualified(t.Table.Rel) + " changed"
		}
	}
	return e.tableGone(t.Table, other)
}

func enumGone(en *reflect.Type, other *gqlschema.Schema) string {
	name := en.SchemaName + "." + en.Name
	if other == nil {
		return "enum " + name
	}
	for _, t := range other.Types {
		if t.Enum != nil && t.Enum.SchemaName == en.SchemaName && t.Enum.Name == en.Name {
			return fmt.Sprintf("comment directive on enum %s renames it to %s", name, t.Name)
		}
	}
	for _, t := range other.Catalog.Types {
		if t.Kind == "e" && t.SchemaName == en.SchemaName && t.Name == en.Name && !t.CanUse {
			return fmt.Sprintf("USAGE on enum %s revoked from %s", name, other.Catalog.Role)
		}
	}
	return fmt.Sprintf("enum %s dropped or renamed", name)
}

func (e explainer) typeCame(t *gqlschema.Type, old *gqlschema.Schema) string {
	if t == nil {
		return ""
	}
	if t.Enum != nil {
		return "enum " + t.Enum.SchemaName + "." + t.Enum.Name
	}
	if t.Table == nil {
		return ""
	}
	name := qualified(t.Table.Rel)
	if old == nil {
		return "table " + name
	}
	r := findRelation(old, t.Table.Rel)
	switch {
	case r == nil:
		return fmt.Sprintf("table %s created", name)
	case old.Tables[r.OID] != nil && old.Tables[r.OID].TypeName != t.Table.TypeName:
		return fmt.Sprintf("comment directive on table %s renames type %s to %s", name, old.Tables[r.OID].TypeName, t.Table.TypeName)
	}
	switch t.Role {
	case gqlschema.RoleInsertInput, gqlschema.RoleInsertResponse:
		return fmt.Sprintf("INSERT granted on %s", name)
	case gqlschema.RoleUpdateInput, gqlschema.RoleUpdateResponse:
		return fmt.Sprintf("UPDATE granted on %s", name)
	case gqlschema.RoleDeleteResponse:
		return fmt.Sprintf("DELETE granted on %s", name)
	}
	return fmt.Sprintf("table %s now exposed", name)
}

func (e explainer) fieldGone(t *gqlschema.Type, field string, other *gqlschema.Schema) string {
	tg, ok := fieldTarget(t, field)
	if !ok {
		return ""
	}
	switch {
	case tg.kind == gqlschema.FieldInsert:
		return e.privilegeGone(tg.table, "INSERT", other)
	case tg.kind == gqlschema.FieldUpdate:
		return e.privilegeGone(tg.table, "UPDATE", other)
	case tg.kind == gqlschema.FieldDelete:
		return e.privilegeGone(tg.table, "DELETE", other)
	case tg.kind == gqlschema.FieldCollection || tg.kind == gqlschema.FieldByPk:
		return e.tableGone(tg.table, other)
	case tg.rel != nil:
		if ot := findTable(other, tg.rel.To.Rel); other != nil && ot != nil && ot.TypeName != tg.rel.To.TypeName {
			return e.tableGone(tg.rel.To, other)
		}
		return foreignKeyGone(tg.rel, other)
	case tg.fn != nil:
		return functionGone(tg.fn.SQL, other)
	case tg.column != nil && t.Table != nil:
		return e.columnGone(t, tg.column, other)
	}
	return ""
}

func (e explainer) columnGone(t *gqlschema.Type, col *gqlschema.Column, other *gqlschema.Schema) string {
	name := qualified(t.Table.Rel) + "." + col.SQL.Name
	if other == nil {
		return "column " + name
	}
	r := findRelation(other, t.Table.Rel)
	if r == nil || findTable(other, t.Table.Rel) == nil {
		return e.tableGone(t.Table, other)
	}
	oc := r.Column(col.SQL.Name)
	if oc == nil {
		for _, c := range r.Columns {
			if c.Num == col.SQL.Num && t.Table.Rel.Column(c.Name) == nil {
				return fmt.Sprintf("column %s renamed to %s", name, c.Name)
			}
		}
		return fmt.Sprintf("column %s dropped", name)
	}
	role := other.Catalog.Role
	switch {
	case !oc.CanSelect:
		return fmt.Sprintf("SELECT on column %s revoked from %s", name, role)
	case t.Role == gqlschema.RoleInsertInput && !oc.CanInsert:
		return fmt.Sprintf("INSERT on column %s revoked from %s", name, role)
	case t.Role == gqlschema.RoleUpdateInput && !oc.CanUpdate:
		return fmt.Sprintf("UPDATE on column %s revoked from %s", name, role)
	case oc.Directives.Name != col.SQL.Directives.Name:
		return fmt.Sprintf("comment directive on column %s renames its field", name)
	case oc.FormatType != col.SQL.FormatType:
		return fmt.Sprintf("column %s changed type from %s to %s", name, col.SQL.FormatType, oc.FormatType)
	case oc.Generated != col.SQL.Generated || oc.Serial != col.SQL.Serial:
		return fmt.Sprintf("column %s became generated or an identity", name)
	}
	return "column " + name
}

func foreignKeyGone(rel *gqlschema.Relationship, other *gqlschema.Schema) string {
	fk := rel.FK
	name := fmt.Sprintf("foreign key %s on %s", fk.Name, qualified(fk.Local))
	if other == nil {
		return name
	}
	for _, o := range other.Catalog.ForeignKeys {
		if o.Name == fk.Name && o.Local.Name == fk.Local.Name && o.Local.Schema.Name == fk.Local.Schema.Name {
			if o.Directives != fk.Directives {
				return "comment directive on " + name + " renames the relationship"
			}
			return name + " now leads to a table or columns the role cannot see"
		}
	}
	return name + " dropped"
}

func functionGone(fn *reflect.Function, other *gqlschema.Schema) string {
	name := fmt.Sprintf("function %s.%s", fn.Schema.Name, fn.Name)
	if other == nil {
		return name
	}
	for _, o := range other.Catalog.Functions {
		if o.Name == fn.Name && o.Schema != nil && o.Schema.Name == fn.Schema.Name {
			if !o.CanExecute {
				return fmt.Sprintf("EXECUTE on %s revoked from %s", name, other.Catalog.Role)
			}
			return name + " changed (arguments, result or comment directive)"
		}
	}
	return name + " dropped"
}

func (e explainer) fieldCame(t *gqlschema.Type, field string, old *gqlschema.Schema) string {
	tg, ok := fieldTarget(t, field)
	if !ok {
		return ""
	}
	switch {
	case tg.kind == gqlschema.FieldInsert || tg.kind == gqlschema.FieldUpdate || tg.kind == gqlschema.FieldDelete ||
		tg.kind == gqlschema.FieldCollection || tg.kind == gqlschema.FieldByPk:
		return e.typeCame(&gqlschema.Type{Table: tg.table, Role: mutationRole(tg.kind)}, old)
	case tg.rel != nil:
		return fmt.Sprintf("foreign key %s on %s", tg.rel.FK.Name, qualified(tg.rel.FK.Local))
	case tg.fn != nil:
		return fmt.Sprintf("function %s.%s", tg.fn.SQL.Schema.Name, tg.fn.SQL.Name)
	case tg.column != nil && t.Table != nil:
		name := qualified(t.Table.Rel) + "." + tg.column.SQL.Name
		if old != nil {
			if r := findRelation(old, t.Table.Rel); r != nil && r.Column(tg.column.SQL.Name) == nil {
				// The column's number survives a rename: an old column of that number whose name the new
				// relation lacks is this one, renamed (columnGone's counterpart).
				for _, c := range r.Columns {
					if c.Num == tg.column.SQL.Num && t.Table.Rel.Column(c.Name) == nil {
						return fmt.Sprintf("column %s renamed from %s", name, c.Name)
					}
				}
				return fmt.Sprintf("column %s added", name)
			}
		}
		return "column " + name
	}
	return ""
}

func mutationRole(k gqlschema.FieldKind) gqlschema.TypeRole {
	switch k {
	case gqlschema.FieldInsert:
		return gqlschema.RoleInsertResponse
	case gqlschema.FieldUpdate:
		return gqlschema.RoleUpdateResponse
	case gqlschema.FieldDelete:
		return gqlschema.RoleDeleteResponse
	}
	return gqlschema.RoleNode
}

// fieldChanged explains a changed type, argument or default: the column's type or NOT NULL, or the function.
func (e explainer) fieldChanged(c *Change) string {
	ot, nt := lookupType(e.old, c.typeName), lookupType(e.new, c.typeName)
	otg, ok1 := fieldTarget(ot, c.field)
	ntg, ok2 := fieldTarget(nt, c.field)
	pick := otg
	if !ok1 {
		pick = ntg
	}
	if !ok1 && !ok2 {
		return ""
	}
	switch {
	case pick.fn != nil:
		return fmt.Sprintf("function %s.%s changed", pick.fn.SQL.Schema.Name, pick.fn.SQL.Name)
	case pick.rel != nil && ok1 && ok2 && ntg.rel != nil && pick.rel.FK.Unchecked != ntg.rel.FK.Unchecked:
		// an unchecked key (NOT VALID, NOT ENFORCED) makes the to-one field nullable
		fk := ntg.rel.FK
		if fk.Unchecked {
			return fmt.Sprintf("foreign key %s on %s no longer checks existing rows (NOT VALID or NOT ENFORCED)", fk.Name, qualified(fk.Local))
		}
		return fmt.Sprintf("foreign key %s on %s validated", fk.Name, qualified(fk.Local))
	case pick.rel != nil && ok1 && ok2 && ntg.rel != nil:
		return columnsChanged(pick.rel.FK.Local, pick.rel.FK.LocalColumns, ntg.rel.FK.Local)
	case pick.column != nil && ok1 && ok2 && ntg.column != nil:
		return columnChanged(otg.table, otg.column, ntg.column, ot)
	}
	return ""
}

func columnChanged(t *gqlschema.Table, oc, nc *gqlschema.Column, owner *gqlschema.Type) string {
	if t == nil && owner != nil {
		t = owner.Table
	}
	name := nc.SQL.Name
	if t != nil {
		name = qualified(t.Rel) + "." + nc.SQL.Name
	}
	switch {
	case oc.SQL.FormatType != nc.SQL.FormatType:
		return fmt.Sprintf("column %s changed type from %s to %s", name, oc.SQL.FormatType, nc.SQL.FormatType)
	case !oc.SQL.NotNull && nc.SQL.NotNull:
		return fmt.Sprintf("NOT NULL added to column %s", name)
	case oc.SQL.NotNull && !nc.SQL.NotNull:
		return fmt.Sprintf("NOT NULL dropped from column %s", name)
	}
	return "column " + name
}

func columnsChanged(old *reflect.Relation, cols []string, new *reflect.Relation) string {
	for _, c := range cols {
		oc, nc := old.Column(c), new.Column(c)
		if oc != nil && nc != nil && oc.NotNull != nc.NotNull {
			if nc.NotNull {
				return fmt.Sprintf("NOT NULL added to column %s.%s", qualified(new), c)
			}
			return fmt.Sprintf("NOT NULL dropped from column %s.%s", qualified(new), c)
		}
	}
	return "columns of the foreign key on " + qualified(new)
}

func (e explainer) enumValue(t *gqlschema.Type, value string, other *gqlschema.Schema, verb string) string {
	if t == nil || t.Enum == nil {
		return ""
	}
	name := t.Enum.SchemaName + "." + t.Enum.Name
	for _, v := range t.EnumValues {
		if v.Name != value {
			continue
		}
		if other != nil {
			for _, ot := range other.Catalog.Types {
				if ot.Kind == "e" && ot.SchemaName == t.Enum.SchemaName && ot.Name == t.Enum.Name {
					for _, label := range ot.EnumValues {
						if label == v.SQL {
							return fmt.Sprintf("mappings directive on enum %s renames label '%s'", name, v.SQL)
						}
					}
				}
			}
		}
		return fmt.Sprintf("label '%s' %s enum %s", v.SQL, verb, name)
	}
	return "enum " + name
}

// mutationTypes are the suffixes of the types a privilege on a table brings, with that privilege.
var mutationTypes = []struct{ suffix, privilege string }{
	{"InsertInput", "INSERT"}, {"InsertResponse", "INSERT"}, {"UpdateInput", "UPDATE"}, {"UpdateResponse", "UPDATE"},
	{"DeleteResponse", "DELETE"},
}

// mutationFields are the prefixes of the mutation fields of a table, with their privilege.
var mutationFields = []struct{ prefix, privilege string }{
	{"insertInto", "INSERT"}, {"update", "UPDATE"}, {"deleteFrom", "DELETE"},
}

// fromCurrent explains a change when only the new side is a database (a snapshot file against the current
// database, as check compares): for a removal, what the database has now under the names the snapshot used;
// for an addition, the database object behind it.
func fromCurrent(c *Change, cur *gqlschema.Schema, oldSchema *ast.Schema) string {
	table := func(typeName string) *gqlschema.Table {
		if t := cur.Types[typeName]; t != nil && t.Role == gqlschema.RoleNode {
			return t.Table
		}
		return nil
	}
	revoked := func(t *gqlschema.Table, privilege string) string {
		return fmt.Sprintf("%s revoked from %s on %s", privilege, cur.Catalog.Role, qualified(t.Rel))
	}
	switch {
	case c.kind == typeAdded:
		return explainer{new: cur}.typeCame(cur.Types[c.typeName], nil)
	case c.kind == fieldAdded:
		return explainer{new: cur}.fieldCame(cur.Types[c.typeName], c.field, nil)
	case c.kind == typeRemoved:
		for _, m := range mutationTypes {
			if base, ok := strings.CutSuffix(c.typeName, m.suffix); ok && table(base) != nil {
				return revoked(table(base), m.privilege)
			}
		}
	case c.kind == fieldRemoved && c.typeName == "Mutation":
		for _, m := range mutationFields {
			rest, ok := strings.CutPrefix(c.field, m.prefix)
			if base, ok2 := strings.CutSuffix(rest, "Collection"); ok && ok2 && table(base) != nil {
				return revoked(table(base), m.privilege)
			}
		}
	case c.kind == fieldRemoved:
		// The table's object type, or one of its input types (insert, update, filter, order by), whose
		// fields are named as the object type's.
		ct := cur.Types[c.typeName]
		if ct == nil || ct.Table == nil {
			return ""
		}
		t := ct.Table
		for _, col := range t.Rel.Columns {
			if col.Name == c.field || col.Directives.Name == c.field {
				if !col.CanSelect {
					return fmt.Sprintf("SELECT on column %s.%s revoked from %s", qualified(t.Rel), col.Name, cur.Catalog.Role)
				}
				return fmt.Sprintf("column %s.%s", qualified(t.Rel), col.Name)
			}
		}
		// A field of a scalar or enum type of the table's object type stood for a column; others are
		// relationships or functions.
		if def := oldSchema.Types[t.TypeName]; def != nil {
			if f := def.Fields.ForName(c.field); f != nil {
				if k := oldSchema.Types[f.Type.Name()]; k != nil && (k.Kind == ast.Scalar || k.Kind == ast.Enum) {
					return fmt.Sprintf("no column %s.%s in the database (dropped or renamed)", qualified(t.Rel), c.field)
				}
			}
		}
	}
	return ""
}

// requiredOnInsert finds what no SDL shows: a column that became NOT NULL without a default, which pg_graphql's
// insert input still offers as optional, so that an insert omitting it, valid before, now fails.
func requiredOnInsert(old, new *gqlschema.Schema) []Change {
	var out []Change
	for _, nt := range new.Tables {
		input := new.Types[nt.TypeName+"InsertInput"]
		ot := findTable(old, nt.Rel)
		if input == nil || ot == nil || old.Types[ot.TypeName+"InsertInput"] == nil {
			continue
		}
		for _, iv := range input.InputFields {
			nc := iv.Column.SQL
			oc := ot.Rel.Column(nc.Name)
			if oc == nil || oc.NotNull || !nc.NotNull || nc.HasDefault || nc.Generated || nc.Serial {
				continue
			}
			out = append(out, Change{Level: Dangerous, Path: input.Name + "." + iv.Name,
				Message: fmt.Sprintf("Input field '%s.%s' stays optional but inserts that omit it now fail", input.Name, iv.Name),
				Reason:  fmt.Sprintf("NOT NULL added to column %s.%s without a default", qualified(nt.Rel), nc.Name)})
		}
	}
	return out
}
