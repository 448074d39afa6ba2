package resolve

import (
	"encoding/json"
	"strconv"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/sqlgen"
)

// planMutation plans every root field of a mutation as its own statement, in document order, so that a later
// field sees the effects of earlier ones. Any error fails the whole request before anything runs.
func (r *request) planMutation() ([]statement, []*rootPlan, error) {
	roots, err := r.collect(r.op.SelectionSet, "Mutation")
	if err != nil {
		return nil, nil, err
	}
	if len(roots) == 0 {
		return nil, nil, errEmptySelection()
	}
	var stmts []statement
	var plans []*rootPlan
	for _, sel := range roots {
		if sel.argErr != nil {
			return nil, nil, sel.argErr
		}
		if sel.Name == "__typename" {
			plans = append(plans, &rootPlan{key: sel.Key, value: "Mutation"})
			continue
		}
		f := findField(r.schema.Mutation, sel.Name)
		if f == nil {
			return nil, nil, errUnknownField(sel.Name, "Mutation")
		}
		var st sqlgen.Statement
		switch f.Kind {
		case gqlschema.FieldInsert, gqlschema.FieldUpdate, gqlschema.FieldDelete:
			m, err := r.mutation(sel, f)
			if err != nil {
				return nil, nil, err
			}
			st = sqlgen.MutationStatement(r.server, m)
		case gqlschema.FieldFunction:
			var nf sqlgen.NodeField
			if err := r.functionField(sel, f, &nf, false); err != nil {
				return nil, nil, err
			}
			st = sqlgen.Query(r.server, []sqlgen.RootField{{Connection: nf.Connection, Record: nf.Record, Scalar: nf.Scalar}})
		default:
			return nil, nil, errUnknownField(sel.Name, "Mutation")
		}
		if err := r.limits.checkParameters(len(st.Args)); err != nil {
			return nil, nil, err
		}
		stmts = append(stmts, statement{sql: st.SQL, args: st.Args, verbatim: st.Verbatim, noRow: st.NoRow})
		plans = append(plans, &rootPlan{key: sel.Key, sql: &sqlgen.RootField{}})
	}
	return stmts, plans, nil
}

func (r *request) mutation(sel *selection, f *gqlschema.Field) (*sqlgen.Mutation, error) {
	t := f.Table
	args, err := r.fieldArgs(sel, f)
	if err != nil {
		return nil, err
	}
	m := &sqlgen.Mutation{Relation: *r.relation(t)}
	if !t.Rel.CanSelect {
		m.Returning = []string{}
		for _, c := range t.Columns {
			m.Returning = append(m.Returning, c.SQL.Name)
		}
	}
	var responseName, op string
	switch f.Kind {
	case gqlschema.FieldInsert:
		responseName, op = t.TypeName+"InsertResponse", "insert"
		if err := r.insert(m, t, args); err != nil {
			return nil, err
		}
	case gqlschema.FieldUpdate:
		responseName, op = t.TypeName+"UpdateResponse", "update"
		m.TooMany = updateTooMany
		if pkReadable(t) {
			m.PK = pkNames(t)
		}
		set, _ := args["set"].(map[string]any)
		input := r.schema.Types[t.TypeName+"UpdateInput"]
		for _, in := range input.InputFields {
			v, present := set[in.Name]
			if !present {
				continue
			}
			val, err := writeValue(v, in.Column)
			if err != nil {
				return nil, err
			}
			m.Set = append(m.Set, sqlgen.Assignment{Column: in.Column.SQL.Name, Value: val})
		}
		if len(m.Set) == 0 {
			return nil, errNoMappings()
		}
	case gqlschema.FieldDelete:
		responseName, op = t.TypeName+"DeleteResponse", "delete"
		m.TooMany = deleteTooMany
		m.Delete = true
		// Locking first selects FOR UPDATE, which needs UPDATE privilege and applies UPDATE policies; only on
		// a table without row level security, for a role that may update it, does it find the delete's rows.
		if (t.Rel.Kind == "r" || t.Rel.Kind == "p") && !t.Rel.RLS && pkReadable(t) && anyUpdatable(t) {
			m.PK = pkNames(t)
		}
	}
	if f.Kind != gqlschema.FieldInsert {
		atMost := json.Number("1")
		if v, ok := args["atMost"].(json.Number); ok {
			atMost = v
		}
		n, err := strconv.Atoi(string(atMost))
		if err != nil {
			return nil, errInvalidInput("Int")
		}
		m.AtMost = n
		if fv, ok := args["filter"].(map[string]any); ok {
			if m.Filter, err = r.filter(fv, t); err != nil {
				return nil, err
			}
		}
		m.OneRow = t.Rel.UniqueKeyWithin(fixedColumns(m.Filter, nil))
	}
	children, err := r.children(sel, responseName)
	if err != nil {
		return nil, err
	}
	for _, c := range children {
		mf := sqlgen.MutationField{Key: c.Key}
		switch c.Name {
		case "__typename":
			mf.Typename = responseName
		case "affectedCount":
			mf.AffectedCount = true
		case "records":
			n, err := r.node(c, t, quotedSingle)
			if err != nil {
				return nil, err
			}
			mf.Records = n
		default:
			return nil, errUnknownMutationField(op)
		}
		m.Fields = append(m.Fields, mf)
	}
	return m, nil
}

// insertRows fills an insert: the columns any row sets, with DEFAULT where a row omits one.
func (r *request) insertRows(m *sqlgen.Mutation, t *gqlschema.Table, objects any) error {
	rows, _ := objects.([]any)
	if len(rows) == 0 {
		return errNoRecords()
	}
	input := r.schema.Types[t.TypeName+"InsertInput"]
	var cols []*gqlschema.InputValue
	for _, in := range input.InputFields {
		if in.Column == nil {
			continue // a relationship of the nestedInsert extension, which insert plans
		}
		for _, row := range rows {
			if _, ok := row.(map[string]any)[in.Name]; ok {
				cols = append(cols, in)
				break
			}
		}
	}
	if len(cols) == 0 {
		// Every object is empty: name one column and let every row take its DEFAULT.
		cols = input.InputFields[:1]
	}
	m.Columns = []string{}
	for _, c := range cols {
		m.Columns = append(m.Columns, c.Column.SQL.Name)
	}
	m.Rows = [][]sqlgen.Value{}
	for _, row := range rows {
		obj := row.(map[string]any)
		vals := []sqlgen.Value{}
		for _, c := range cols {
			v, present := obj[c.Name]
			if !present {
				vals = append(vals, sqlgen.Value{Default: true})
				continue
			}
			val, err := writeValue(v, c.Column)
			if err != nil {
				return err
			}
			vals = append(vals, val)
		}
		m.Rows = append(m.Rows, vals)
	}
	return nil
}

func writeValue(v any, c *gqlschema.Column) (sqlgen.Value, error) {
	val := sqlgen.Value{Cast: c.SQL.FormatType}
	if list, ok := v.([]any); ok && c.Type.Array {
		val.Array = true
		texts, err := listTexts(list, c.Type.MaxLength)
		if err != nil {
			return val, err
		}
		val.Values = texts
		return val, nil
	}
	val.Value = sqlText(v)
	if err := checkLength(val.Value, c.Type.MaxLength); err != nil {
		return val, err
	}
	return val, nil
}

// fixedColumns appends to cols the columns a filter holds equal to a value wherever it matches: the equalities
// of its conjunctions, outside any OR or NOT.
func fixedColumns(x sqlgen.Expr, cols []string) []string {
	switch e := x.(type) {
	case sqlgen.And:
		for _, part := range e {
			cols = fixedColumns(part, cols)
		}
	case sqlgen.Compare:
		if e.Op == "=" && e.Value != nil {
			cols = append(cols, e.Column)
		}
	}
	return cols
}

// pkReadable reports whether the role may read every primary key column: an update locks its rows by key
// first (sqlgen.Mutation.PK), which reads the key, where a plain update needs only the filter's columns.
func pkReadable(t *gqlschema.Table) bool {
	for _, c := range t.PK {
		if !c.SQL.CanSelect {
			return false
		}
	}
	return true
}

func anyUpdatable(t *gqlschema.Table) bool {
	for _, c := range t.AllColumns {
		if c.SQL.CanUpdate {
			return true
		}
	}
	return false
}
