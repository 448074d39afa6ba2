package resolve

import (
	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/sqlgen"
)

// compositeValue plans the selection of a composite-type column's fields (the composite feature).
func (r *request) compositeValue(sel *selection, c *gqlschema.Column) (*sqlgen.CompositeValue, error) {
	typ := c.Type.Composite
	children, err := r.children(sel, typ.Name)
	if err != nil {
		return nil, err
	}
	if len(children) == 0 {
		return nil, errNoSubselection(sel.Name, typ.Name)
	}
	n := &sqlgen.Node{}
	for _, child := range children {
		if child.Name == "__typename" {
			n.Fields = append(n.Fields, sqlgen.NodeField{Key: child.Key, Typename: typ.Name})
			continue
		}
		f := findField(typ, child.Name)
		if f == nil {
			return nil, unknownField(quotedSingle, child.Name, typ.Name)
		}
		if err := noArguments(child); err != nil {
			return nil, err
		}
		n.Fields = append(n.Fields, sqlgen.NodeField{Key: child.Key, Column: columnOutput(f.Column)})
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
