package resolve

import (
	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/sqlgen"
)

// relatedFilter plans a relationship's entry of a filter (relatedFilter): the related record's filter for a
// to-one relationship, some/every/none for a to-many one. As elsewhere in filters, null and empty parts
// constrain nothing; {some: {}} asks for at least one related record, {none: {}} for none.
func (r *request) relatedFilter(v any, f *gqlschema.InputValue) ([]sqlgen.Expr, error) {
	rel := f.Relationship
	obj, _ := v.(map[string]any)
	related := func(filter map[string]any, q sqlgen.Quantifier) (sqlgen.Expr, error) {
		x, err := r.filter(filter, rel.To)
		if err != nil {
			return nil, err
		}
		e := sqlgen.Related{Relation: *r.relation(rel.To), Join: joins(rel), Quantifier: q}
		if !isEmptyFilter(x) {
			e.Filter = x
		}
		return e, nil
	}
	if f.Type.NamedType() == rel.To.TypeName+"Filter" { // to-one
		x, err := related(obj, sqlgen.Some)
		if err != nil || x.(sqlgen.Related).Filter == nil {
			return nil, err
		}
		return []sqlgen.Expr{x}, nil
	}
	var out []sqlgen.Expr
	for _, q := range []struct {
		key        string
		quantifier sqlgen.Quantifier
	}{{"every", sqlgen.Every}, {"none", sqlgen.None}, {"some", sqlgen.Some}} {
		sub, ok := obj[q.key].(map[string]any)
		if !ok {
			continue
		}
		x, err := related(sub, q.quantifier)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// relatedOrder plans a relationship's entry of an order-by object (relatedOrder): the related record's
// order-by for a to-one relationship, whose values come through a subquery; for a to-many one the count or an
// aggregate of a column of the related records.
func (r *request) relatedOrder(obj map[string]any, f *gqlschema.InputValue) ([]sqlgen.Order, error) {
	rel := f.Relationship
	hop := sqlgen.RelatedValue{Relation: *r.relation(rel.To), Join: joins(rel)}
	var out []sqlgen.Order
	if f.Type.NamedType() == rel.To.TypeName+"OrderBy" { // to-one
		inner, err := r.orderObject(obj, rel.To)
		if err != nil {
			return nil, err
		}
		for _, o := range inner {
			v := hop
			v.Column, v.Next = o.Column, o.Related
			// A missing or hidden related record reads as NULL whatever the column's constraint.
			out = append(out, sqlgen.Order{Column: o.Column, Cast: o.Cast, Desc: o.Desc, NullsFirst: o.NullsFirst, Related: &v})
		}
		return out, nil
	}
	aggType := r.schema.Types[f.Type.NamedType()]
	for _, g := range aggType.InputFields {
		switch v := obj[g.Name].(type) {
		case enumLiteral: // count
			hv := hop
			hv.Aggregate = g.Name
			o := sqlgen.Order{Column: g.Name, Cast: "bigint", NotNull: true, Related: &hv}
			direct(&o, v)
			out = append(out, o)
		case map[string]any:
			for _, cf := range r.schema.Types[g.Type.NamedType()].InputFields {
				dir, ok := v[cf.Name].(enumLiteral)
				if !ok {
					continue
				}
				hv := hop
				hv.Aggregate, hv.Column = g.Name, cf.Column.SQL.Name
				o := sqlgen.Order{Column: cf.Column.SQL.Name, Cast: cf.Column.SQL.FormatType, Related: &hv}
				if g.Name == "sum" || g.Name == "avg" {
					o.Cast = "numeric"
				}
				direct(&o, dir)
				out = append(out, o)
			}
		}
	}
	return out, nil
}

// distinctOn plans the distinctOn argument (the distinct feature), or nil without one.
func distinctOn(v any, t *gqlschema.Table) *sqlgen.Distinct {
	list, _ := v.([]any)
	var cols []string
	for _, e := range list {
		if name, ok := e.(string); ok {
			cols = append(cols, name)
		}
	}
	if len(cols) == 0 {
		return nil
	}
	return &sqlgen.Distinct{Columns: cols, PK: pkNames(t)}
}
