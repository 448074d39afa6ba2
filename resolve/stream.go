package resolve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/sqlgen"
)

// A stream (Subscription.<x>Stream) delivers the rows after a cursor, in batches, to one subscriber: it is
// planned as the table's collection filtered to the rows past the cursor, ordered by the cursor's column, the
// first batchSize of them, with the cursor's column read beside each node so that the next batch starts where
// this one ended.

// streamCursorKey is the response key under which each edge carries its cursor value.
const streamCursorKey = "pgreflectStreamCursor"

// stream is how a compiled stream's answer is reshaped: the root key, and the column carrying the cursor.
type stream struct {
	key, cursorField string
	batchSize        int
}

// planStream plans a stream field; cursor, when set, replaces the cursor's initial value (the last value sent).
func (r *request) planStream(sel *selection, f *gqlschema.Field, cursor json.RawMessage) (*rootPlan, *stream, error) {
	args, err := r.fieldArgs(sel, f)
	if err != nil {
		return nil, nil, err
	}
	batch, _, err := unsigned(args, "batchSize")
	if err != nil {
		return nil, nil, err
	}
	if batch < 1 {
		return nil, nil, errStreamBatchSize()
	}
	raw, _ := sel.Args["cursor"].(map[string]any)
	initial, _ := raw["initialValue"].(map[string]any)
	var column string
	var value any
	for k, v := range initial {
		if v == nil {
			continue
		}
		if column != "" {
			return nil, nil, errStreamCursorColumns()
		}
		column, value = k, v
	}
	if column == "" {
		return nil, nil, errStreamCursorColumns()
	}
	if cursor != nil {
		dec := json.NewDecoder(bytes.NewReader(cursor))
		dec.UseNumber()
		if err := dec.Decode(&value); err != nil {
			return nil, nil, fmt.Errorf("stream cursor %s: %w", cursor, err)
		}
	}
	op, order := "gt", "AscNullsLast"
	// The coerced ordering: a literal DESC and a variable's "DESC" alike.
	if coerced, _ := args["cursor"].(map[string]any); coerced["ordering"] == enumLiteral("DESC") {
		op, order = "lt", "DescNullsLast"
	}
	coll := collectionOf(r.schema, f.Table)
	past := map[string]any{column: map[string]any{op: value}}
	filter := any(past)
	if user, ok := sel.Args["filter"]; ok && user != nil {
		filter = map[string]any{"and": []any{user, past}}
	}
	collArgs := map[string]any{}
	for name, v := range map[string]any{"first": json.Number(fmt.Sprint(batch)), "filter": filter,
		"orderBy": []any{map[string]any{column: order}}} {
		c, err := r.coerce(v, coll.Arg(name).Type)
		if err != nil {
			return nil, nil, err
		}
		collArgs[name] = c
	}
	// edges { node { <the stream's selection> pgreflectStreamCursor: <column> } }
	var nodeSet ast.SelectionSet
	for _, set := range sel.sets {
		nodeSet = append(nodeSet, set...)
	}
	nodeSet = append(nodeSet, &ast.Field{Alias: streamCursorKey, Name: column})
	edges := &ast.Field{Alias: "edges", Name: "edges", SelectionSet: ast.SelectionSet{
		&ast.Field{Alias: "node", Name: "node", SelectionSet: nodeSet},
	}}
	synthetic := &selection{Key: sel.Key, Name: coll.Name, Args: sel.Args, Field: sel.Field, sets: []ast.SelectionSet{{edges}}}
	conn, err := r.connectionWithArgs(synthetic, coll, collArgs, sqlgen.Source{Relation: r.relation(f.Table)}, nil)
	if err != nil {
		return nil, nil, err
	}
	return &rootPlan{key: sel.Key, sql: &sqlgen.RootField{Connection: conn}}, &stream{key: sel.Key, cursorField: column, batchSize: batch}, nil
}

// collectionOf is the query root's collection field of a table.
func collectionOf(s *gqlschema.Schema, t *gqlschema.Table) *gqlschema.Field {
	for _, f := range s.Query.Fields {
		if f.Kind == gqlschema.FieldCollection && f.Table == t {
			return f
		}
	}
	return nil
}

// reshape turns the connection's answer into the stream's: the list of nodes, the cursor value of the last one,
// and whether the batch was full (more rows may be waiting). An answer with errors is returned as it is.
func (st *stream) reshape(body []byte) (out []byte, cursor json.RawMessage, rows int, err error) {
	var resp struct {
		Data   map[string]*struct{ Edges []map[string]json.RawMessage } `json:"data"`
		Errors json.RawMessage                                          `json:"errors"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, nil, 0, fmt.Errorf("reshape a stream's answer: %w", err)
	}
	conn := resp.Data[st.key]
	if resp.Errors != nil || conn == nil {
		return body, nil, 0, nil
	}
	var b bytes.Buffer
	b.WriteString(`{"data": {`)
	writeString(&b, st.key)
	b.WriteString(`: [`)
	for i, e := range conn.Edges {
		if i > 0 {
			b.WriteString(", ")
		}
		if cursor, err = withoutKey(&b, e["node"], streamCursorKey); err != nil {
			return nil, nil, 0, fmt.Errorf("reshape a stream's answer: %w", err)
		}
	}
	b.WriteString(`]}}`)
	return b.Bytes(), cursor, len(conn.Edges), nil
}

// withoutKey writes the JSON object obj without its member key, keeping the others' order and text, and
// returns the value it left out.
func withoutKey(b *bytes.Buffer, obj json.RawMessage, key string) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not an object: %s", obj)
	}
	var removed json.RawMessage
	var members []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if name == key {
			removed = v
			continue
		}
		var m bytes.Buffer
		writeString(&m, name)
		m.WriteString(": ")
		m.Write(v)
		members = append(members, m.String())
	}
	b.WriteByte('{')
	b.WriteString(strings.Join(members, ", "))
	b.WriteByte('}')
	return removed, nil
}
