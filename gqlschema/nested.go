package gqlschema

import (
	"github.com/pgreflect/pgreflect/reflect"
)

// addWriteExtensions adds the types and fields of the insert extensions (upsert, nestedInsert) a table has on.
// It runs once every table's own types exist, since the extensions refer to other tables' inputs and must not
// take a name a table's type has.
func (b *builder) addWriteExtensions(t *Table, rels *tableRelationships) {
	b.addNestedInsertFields(t, rels)
	b.addUpsertTypes(t)
}

// ToParent reports whether the relationship leads from the table holding the foreign key to the table it
// references (a to-one field such as post.blog), rather than the reverse.
func (r *Relationship) ToParent() bool {
	if r.From.Rel != r.FK.Local || len(r.FromColumns) != len(r.FK.LocalColumns) {
		return false
	}
	for i, c := range r.FromColumns {
		if c != r.FK.LocalColumns[i] {
			return false
		}
	}
	return true
}

// addNestedInsertFields adds to <X>InsertInput, for a table with the nestedInsert feature on, a field per
// relationship whose rows the same insert may write: a new parent for a foreign key of X (field named as the
// to-one relationship, typed <Parent>InsertInput) and the children of a foreign key to X (named as the reverse
// relationship, typed [<Child>InsertInput!] or <Child>InsertInput when at most one child may exist). It runs
// once every table's insert input exists, since each field's type is another table's input.
func (b *builder) addNestedInsertFields(t *Table, rels *tableRelationships) {
	if !t.Features.Has(reflect.FeatureNestedInsert) || !isTable(t.Rel) {
		return
	}
	ins := b.s.Types[t.TypeName+"InsertInput"]
	if ins == nil || ins.Table != t {
		return
	}
	used := map[string]bool{}
	for _, in := range ins.InputFields {
		used[in.Name] = true
	}
	add := func(f *Field, parent *Table, parentCols []string, child *Table, childCols []string) {
		rel := f.Relationship
		if used[f.Name] || rel.FK.Synthetic || !isTable(rel.To.Rel) {
			return
		}
		other := b.s.Types[rel.To.TypeName+"InsertInput"]
		childInput := b.s.Types[child.TypeName+"InsertInput"]
		if other == nil || other.Table != rel.To || childInput == nil || childInput.Table != child {
			return
		}
		// The side holding the foreign key is written with the other side's key, which its insert returns.
		if !readable(parent, parentCols) || !fillable(childInput, childCols) {
			return
		}
		ref := Named(other.Name)
		if f.Kind == FieldToMany {
			ref = ListOf(NonNullOf(ref))
		}
		ins.InputFields = append(ins.InputFields, &InputValue{Name: f.Name, Type: ref, Relationship: rel})
		used[f.Name] = true
	}
	for _, f := range rels.forward {
		add(f, f.Relationship.To, f.Relationship.ToColumns, t, f.Relationship.FromColumns)
	}
	for _, f := range rels.reverse {
		add(f, t, f.Relationship.FromColumns, f.Relationship.To, f.Relationship.ToColumns)
	}
}

// isTable reports whether the relation is a table, partitioned or not, which the write extensions write;
// views and foreign tables are left to pg_graphql's plain mutations.
func isTable(r *reflect.Relation) bool { return r.Kind == "r" || r.Kind == "p" }

// readable reports whether the role may read every one of the columns (an insert returns them).
func readable(t *Table, cols []string) bool {
	for _, c := range cols {
		col := t.ColumnByName(c)
		if col == nil || !col.SQL.CanSelect {
			return false
		}
	}
	return true
}

// fillable reports whether an insert input offers every one of the columns.
func fillable(in *Type, cols []string) bool {
	for _, c := range cols {
		found := false
		for _, f := range in.InputFields {
			found = found || f.Column != nil && f.Column.SQL.Name == c
		}
		if !found {
			return false
		}
	}
	return true
}
