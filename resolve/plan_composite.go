package resolve

import (
	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/sqlgen"
)

// compositeValue plans the selection of a composite-type column's fields (the composite feature). Unlike a
// table's node, it needs a selection (pg_graphql's error), and its fields are columns only, which take no
// arguments.
func (r *request) compositeValue(sel *selection, c *gqlschema.Column) (*sqlgen.CompositeValue, error) {
	typ := c.Type.Composite
	n, err := r.objectFields(sel, typ, typ.Name, quotedSingle, func(child *selection, f *gqlschema.Field) (sqlgen.NodeField, error) {
		if err := noArguments(child); err != nil {
			return sqlgen.NodeField{}, err
		}
		return sqlgen.NodeField{Key: child.Key, Column: columnOutput(f.Column)}, nil
	})
	if err != nil {
		return nil, err
	}
	if len(n.Fields) == 0 { // no field selected: every one selected is planned or fails
		return nil, errNoSubselection(sel.Name, typ.Name)
	}
	return &sqlgen.CompositeValue{Column: c.SQL.Name, Node: n}, nil
}

// compositeFilter plans the filter of a composite-type column: its fields' filters, all of which must hold.
func compositeFilter(v any, c *gqlschema.Column, filterType *gqlschema.Type) ([]sqlgen.Expr, error) {
	obj, _ := v.(map[string]any)
	var and sqlgen.And
	for _, f := range filterType.InputFields {
		ops, _ := obj[f.Name].(map[string]any)
		exprs, err := columnFilter(ops, f.Column)
		if err != nil {
			return nil, err
		}
		and = append(and, exprs...)
	}
	if len(and) == 0 {
		return nil, nil
	}
	return []sqlgen.Expr{sqlgen.OnComposite{Column: c.SQL.Name, X: and}}, nil
}
