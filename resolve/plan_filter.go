package resolve

import (
	"sort"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/sqlgen"
)

var scalarOps = map[string]string{
	"eq": "=", "neq": "<>", "lt": "<", "lte": "<=", "gt": ">", "gte": ">=",
	"like": "like", "ilike": "ilike", "regex": "~", "iregex": "~*", "startsWith": "^@",
}

var listOps = map[string]string{"eq": "=", "contains": "@>", "containedBy": "<@", "overlaps": "&&"}

// filter plans a coerced <X>Filter object. Null and empty parts are ignored, as in pg_graphql.
func (r *request) filter(obj map[string]any, t *gqlschema.Table) (sqlgen.Expr, error) {
	filterType := r.schema.Types[t.TypeName+"Filter"]
	var and sqlgen.And
	for _, f := range filterType.InputFields {
		v, present := obj[f.Name]
		if !present || v == nil {
			continue
		}
		switch {
		case f.Relationship != nil:
			exprs, err := r.relatedFilter(v, f)
			if err != nil {
				return nil, err
			}
			and = append(and, exprs...)
		case f.Column != nil && f.Column.Type.Composite != nil:
			exprs, err := compositeFilter(v, f.Column, r.schema.Types[f.Type.NamedType()])
			if err != nil {
				return nil, err
			}
			and = append(and, exprs...)
		case f.Column != nil:
			ops, _ := v.(map[string]any)
			exprs, err := columnFilter(ops, f.Column)
			if err != nil {
				return nil, err
			}
			and = append(and, exprs...)
		case f.Name == "nodeId":
			ops, _ := v.(map[string]any)
			if id, ok := ops["eq"]; ok {
				e, err := r.nodeIDCondition(id, t)
				if err != nil {
					return nil, err
				}
				and = append(and, e)
			}
		case f.Name == "and" || f.Name == "or":
			list, _ := v.([]any)
			var parts []sqlgen.Expr
			for _, e := range list {
				sub, _ := e.(map[string]any)
				x, err := r.filter(sub, t)
				if err != nil {
					return nil, err
				}
				if isEmptyFilter(x) {
					continue // an entry that constrains nothing ({} or only missing variables) is dropped
				}
				parts = append(parts, x)
			}
			if len(parts) == 0 {
				continue
			}
			if f.Name == "and" {
				and = append(and, sqlgen.And(parts))
			} else {
				and = append(and, sqlgen.Or(parts))
			}
		case f.Name == "not":
			sub, _ := v.(map[string]any)
			if len(sub) == 0 {
				continue
			}
			x, err := r.filter(sub, t)
			if err != nil {
				return nil, err
			}
			if isEmptyFilter(x) {
				continue
			}
			and = append(and, sqlgen.Not{X: x})
		}
	}
	return and, nil
}

// isEmptyFilter reports whether a planned filter constrains nothing.
func isEmptyFilter(x sqlgen.Expr) bool {
	a, ok := x.(sqlgen.And)
	return ok && len(a) == 0
}

func columnFilter(ops map[string]any, c *gqlschema.Column) ([]sqlgen.Expr, error) {
	var out []sqlgen.Expr
	name, cast := c.SQL.Name, c.SQL.FormatType
	for _, op := range sortedKeys(ops) {
		v := ops[op]
		if op == "is" {
			switch v {
			case enumLiteral("NULL"):
				out = append(out, sqlgen.IsNull{Column: name})
			case enumLiteral("NOT_NULL"):
				out = append(out, sqlgen.IsNull{Column: name, Negate: true})
			default:
				return nil, errIsFilterValue()
			}
			continue
		}
		if c.Type.Array {
			sqlOp, ok := listOps[op]
			if !ok {
				return nil, errFilterOperation(op)
			}
			if v == nil {
				out = append(out, sqlgen.Compare{Column: name, Op: sqlOp, Cast: cast})
				continue
			}
			values, err := listTexts(v, c.Type.MaxLength)
			if err != nil {
				return nil, err
			}
			out = append(out, sqlgen.ArrayCompare{Column: name, Op: sqlOp, Values: values, Cast: cast})
			continue
		}
		if op == "in" {
			if v == nil {
				out = append(out, sqlgen.Compare{Column: name, Op: "=", Cast: cast})
				continue
			}
			values, err := listTexts(v, c.Type.MaxLength)
			if err != nil {
				return nil, err
			}
			out = append(out, sqlgen.In{Column: name, Values: values, Cast: cast})
			continue
		}
		sqlOp, ok := scalarOps[op]
		if !ok {
			return nil, errFilterOperation(op)
		}
		text := sqlText(v)
		if err := checkLength(text, c.Type.MaxLength); err != nil {
			return nil, err
		}
		valueCast := cast
		if sqlOp == "like" || sqlOp == "ilike" || sqlOp == "~" || sqlOp == "~*" || sqlOp == "^@" {
			valueCast = "text"
		}
		out = append(out, sqlgen.Compare{Column: name, Op: sqlOp, Value: text, Cast: valueCast})
	}
	return out, nil
}

func listTexts(v any, maxLength int) ([]*string, error) {
	list, _ := v.([]any)
	out := make([]*string, len(list))
	for i, e := range list {
		out[i] = sqlText(e)
		if err := checkLength(out[i], maxLength); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sortedKeys are a filter's operators in a fixed order: the same request makes the same SQL.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
