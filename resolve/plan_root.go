package resolve

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"unicode/utf8"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/sqlgen"
)

// rootPlan is what one root field resolves to: SQL, or a value computed without the database.
type rootPlan struct {
	key   string
	sql   *sqlgen.RootField
	value any
}

// planQueryField plans one root field of a query.
func (r *request) planQueryField(sel *selection) (*rootPlan, error) {
	if sel.argErr != nil {
		return nil, sel.argErr
	}
	switch sel.Name {
	case "__typename":
		return &rootPlan{key: sel.Key, value: "Query"}, nil
	case "__schema", "__type":
		if !r.schema.Introspection {
			return nil, errUnknownField(sel.Name, "Query")
		}
		var v any
		var err error
		if sel.Name == "__schema" {
			v, err = r.resolveSchema(sel)
		} else {
			v, err = r.resolveType(sel)
		}
		if err != nil {
			return nil, err
		}
		return &rootPlan{key: sel.Key, value: v}, nil
	}
	f := findField(r.schema.Query, sel.Name)
	if f == nil {
		return nil, errUnknownField(sel.Name, "Query")
	}
	root := &sqlgen.RootField{}
	switch f.Kind {
	case gqlschema.FieldCollection:
		conn, err := r.connection(sel, f, sqlgen.Source{Relation: r.relation(f.Table)}, nil)
		if err != nil {
			return nil, err
		}
		root.Connection = conn
	case gqlschema.FieldByPk:
		rec, err := r.byPk(sel, f)
		if err != nil {
			return nil, err
		}
		root.Record = rec
	case gqlschema.FieldNode:
		rec, err := r.nodeLookup(sel)
		if err != nil {
			return nil, err
		}
		if rec == nil {
			return &rootPlan{key: sel.Key, value: nil}, nil
		}
		root.Record = rec
	case gqlschema.FieldFunction:
		var nf sqlgen.NodeField
		if err := r.functionField(sel, f, &nf, false); err != nil {
			return nil, err
		}
		root.Connection, root.Record, root.Scalar = nf.Connection, nf.Record, nf.Scalar
	default:
		return nil, errUnknownField(sel.Name, "Query")
	}
	return &rootPlan{key: sel.Key, sql: root}, nil
}

func (r *request) byPk(sel *selection, f *gqlschema.Field) (*sqlgen.Record, error) {
	var missing []string
	for _, a := range f.Args {
		if v, ok := sel.Args[a.Name]; !ok || v == nil {
			missing = append(missing, a.Column.SQL.Name)
		}
	}
	if len(missing) > 0 {
		return nil, errMissingPrimaryKey(missing)
	}
	args, err := r.fieldArgs(sel, f)
	if err != nil {
		return nil, err
	}
	var cond sqlgen.And
	for _, a := range f.Args {
		cond = append(cond, sqlgen.Compare{Column: a.Column.SQL.Name, Op: "=", Value: sqlText(args[a.Name]), Cast: a.Column.SQL.FormatType})
	}
	node, err := r.node(sel, f.Table, quotedDouble)
	if err != nil {
		return nil, err
	}
	return &sqlgen.Record{Source: sqlgen.Source{Relation: r.relation(f.Table)}, Filter: cond, Node: node}, nil
}

// decodeNodeID splits a node id into its table and primary key values.
func (r *request) decodeNodeID(v any) (*gqlschema.Table, []*string, error) {
	schema, table, values, err := parseNodeID(v)
	if err != nil {
		return nil, nil, err
	}
	var found *gqlschema.Table
	for _, t := range r.schema.Tables {
		if t.Rel.Schema.Name == schema && t.Rel.Name == table {
			found = t
		}
	}
	if found == nil {
		return nil, nil, errNodeIDCollection()
	}
	if len(values) != len(found.PK) {
		return nil, nil, errNodeIDKeyCount(len(found.PK), len(values))
	}
	return found, values, nil
}

// parseNodeID splits a node id into the schema and name of its table and its primary key values, without
// looking the table up.
func parseNodeID(v any) (schema, table string, values []*string, err error) {
	s, ok := v.(string)
	if !ok {
		return "", "", nil, errNodeIDNotString()
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", "", nil, errNodeIDDecode(2)
	}
	if !utf8.Valid(raw) {
		return "", "", nil, errNodeIDDecode(3)
	}
	var parsed any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&parsed); err != nil || !atEOF(dec) {
		return "", "", nil, errNodeIDDecode(4)
	}
	list, ok := parsed.([]any)
	if !ok {
		return "", "", nil, errNodeIDDecode(10)
	}
	if len(list) < 3 {
		return "", "", nil, errNodeIDDecode(5)
	}
	if schema, ok = list[0].(string); !ok {
		return "", "", nil, errNodeIDDecode(6)
	}
	if table, ok = list[1].(string); !ok {
		return "", "", nil, errNodeIDDecode(7)
	}
	for _, v := range list[2:] {
		values = append(values, jsonText(v))
	}
	return schema, table, values, nil
}

// pkCondition compares each key column with its value; values holds at least one per column.
func pkCondition(pk []*gqlschema.Column, values []*string) sqlgen.Expr {
	var cond sqlgen.And
	for i, c := range pk {
		cond = append(cond, sqlgen.Compare{Column: c.SQL.Name, Op: "=", Value: values[i], Cast: c.SQL.FormatType})
	}
	return cond
}

// nodeIDCondition is the filter nodeId: {eq: ...} on table t. As in pg_graphql, the id's table is compared by
// name, whether or not the role sees it, and the key values pair with t's key columns as far as both go.
func (r *request) nodeIDCondition(id any, t *gqlschema.Table) (sqlgen.Expr, error) {
	schema, table, values, err := parseNodeID(id)
	if err != nil {
		return nil, err
	}
	if schema != t.Rel.Schema.Name || table != t.Rel.Name {
		return nil, errNodeIDOtherCollection()
	}
	n := min(len(values), len(t.PK))
	return pkCondition(t.PK[:n], values), nil
}

// nodeLookup plans Query.node(nodeId:).
func (r *request) nodeLookup(sel *selection) (*sqlgen.Record, error) {
	var extra []string
	for _, a := range sel.Field.Arguments {
		if a.Name != "nodeId" {
			extra = append(extra, a.Name)
		}
	}
	if len(extra) > 0 {
		return nil, errExtraArguments(extra)
	}
	id, ok := sel.Args["nodeId"]
	if !ok || id == nil {
		return nil, errInvalidInput("NonNull")
	}
	switch v := id.(type) {
	case enumLiteral:
		id = string(v) // pg_graphql reads an enum literal as its name
	case string:
	default:
		return nil, errInvalidInput("ID")
	}
	t, values, err := r.decodeNodeID(id)
	if err != nil {
		return nil, err
	}
	node, err := r.node(sel, t, quotedSingle)
	if err != nil {
		return nil, err
	}
	return &sqlgen.Record{Source: sqlgen.Source{Relation: r.relation(t)}, Filter: pkCondition(t.PK, values), Node: node}, nil
}
