package resolve

import (
	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/sqlgen"
)

// maxNestedObjects bounds the rows one nested insert writes. Most are a CTE of their own, and an object may be empty
// ({}), so neither the parameter limit nor the body size keeps a request from asking Postgres to plan
// hundreds of thousands of inserts.
const maxNestedObjects = 1000

// insert plans insertInto<X>Collection: pg_graphql's insert, with the extensions the table has on (an
// object writing related rows, onConflict).
func (r *request) insert(m *sqlgen.Mutation, t *gqlschema.Table, args map[string]any) error {
	rows, _ := args["objects"].([]any)
	if !writesRelated(r.schema.Types[t.TypeName+"InsertInput"], rows) {
		if err := r.insertRows(m, t, args["objects"]); err != nil {
			return err
		}
		oc, err := r.onConflict(args["onConflict"], t)
		m.OnConflict = oc
		return err
	}
	if args["onConflict"] != nil {
		return errNestedOnConflict()
	}
	budget := maxNestedObjects
	for _, row := range rows {
		o, err := r.insertObject(row.(map[string]any), t, map[string]bool{}, &budget)
		if err != nil {
			return err
		}
		m.Objects = append(m.Objects, o)
	}
	return nil
}

// writesRelated reports whether any object of an insert writes related rows: sets a field of the input that
// the nestedInsert extension added.
func writesRelated(input *gqlschema.Type, rows []any) bool {
	for _, in := range input.InputFields {
		if in.Relationship == nil {
			continue
		}
		for _, row := range rows {
			if obj, _ := row.(map[string]any); obj[in.Name] != nil {
				return true
			}
		}
	}
	return false
}

// insertObject plans one object of a nested insert into t. filled holds the foreign key columns the link to
// its parent fills, which the object may not also set; budget counts down the objects the insert may still
// write.
func (r *request) insertObject(obj map[string]any, t *gqlschema.Table, filled map[string]bool, budget *int) (*sqlgen.InsertObject, error) {
	if *budget--; *budget < 0 {
		return nil, errNestedTooMany(maxNestedObjects)
	}
	input := r.schema.Types[t.TypeName+"InsertInput"]
	o := &sqlgen.InsertObject{Relation: *r.relation(t)}
	claim := func(field string, cols []string) error {
		for _, c := range cols {
			if filled[c] {
				return errNestedColumnTwice(input.Name, c, field)
			}
			filled[c] = true
		}
		return nil
	}
	for _, in := range input.InputFields {
		v := obj[in.Name]
		rel := in.Relationship
		if rel == nil || v == nil {
			continue
		}
		if rel.ToParent() {
			if err := claim(in.Name, rel.FromColumns); err != nil {
				return nil, err
			}
			p, err := r.insertObject(v.(map[string]any), rel.To, map[string]bool{}, budget)
			if err != nil {
				return nil, err
			}
			join := make([]sqlgen.Join, len(rel.FromColumns))
			for i := range rel.FromColumns {
				join[i] = sqlgen.Join{Child: rel.FromColumns[i], Parent: rel.ToColumns[i]}
			}
			o.Parents = append(o.Parents, sqlgen.InsertLink{Join: join, Object: p})
			continue
		}
		children, ok := v.([]any)
		if !ok {
			children = []any{v} // a to-one reverse relationship takes one object
		}
		for _, child := range children {
			childFilled := map[string]bool{}
			for _, c := range rel.ToColumns {
				childFilled[c] = true
			}
			c, err := r.insertObject(child.(map[string]any), rel.To, childFilled, budget)
			if err != nil {
				return nil, err
			}
			o.Children = append(o.Children, sqlgen.InsertLink{Join: joins(rel), Object: c})
		}
	}
	for _, in := range input.InputFields {
		v, present := obj[in.Name]
		if in.Column == nil || !present {
			continue
		}
		if filled[in.Column.SQL.Name] {
			return nil, errNestedColumnFilled(input.Name, in.Name)
		}
		val, err := writeValue(v, in.Column)
		if err != nil {
			return nil, err
		}
		o.Columns = append(o.Columns, in.Column.SQL.Name)
		o.Values = append(o.Values, val)
	}
	return o, nil
}
