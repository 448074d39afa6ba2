package resolve

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"slices"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/reflect"
	"github.com/pgreflect/pgreflect/sqlgen"
)

// relation is the SQL relation of a table the request reads or writes; a live query is refreshed when one of
// them changes.
func (r *request) relation(t *gqlschema.Table) *sqlgen.Relation {
	r.reads.add(t.Rel)
	return &sqlgen.Relation{Schema: t.Rel.Schema.Name, Name: t.Rel.Name}
}

// unknownFieldStyle picks which of pg_graphql's phrasings an unknown node field gets.
type unknownFieldStyle int

const (
	quotedSingle unknownFieldStyle = iota // Unknown field 'x' on type 'X' (via connections, relationships)
	quotedDouble                          // Unknown field "x" on type X (byPk)
)

func unknownField(style unknownFieldStyle, field, typeName string) error {
	if style == quotedDouble {
		return errUnknownField(field, typeName)
	}
	return errUnknownNodeField(field, typeName)
}

// noArguments rejects arguments on fields that take none.
func noArguments(sel *selection) error {
	if len(sel.Field.Arguments) == 0 {
		return nil
	}
	names := make([]string, len(sel.Field.Arguments))
	for i, a := range sel.Field.Arguments {
		names[i] = a.Name
	}
	return errExtraArguments(names)
}

// fieldArgs coerces a field's arguments against its declared arguments, rejecting unknown ones.
func (r *request) fieldArgs(sel *selection, f *gqlschema.Field) (map[string]any, error) {
	var extra []string
	for _, a := range sel.Field.Arguments {
		if f.Arg(a.Name) == nil {
			extra = append(extra, a.Name)
		}
	}
	if len(extra) > 0 {
		return nil, errExtraArguments(extra)
	}
	out := map[string]any{}
	for _, a := range f.Args {
		v, present := sel.Args[a.Name]
		if !present {
			if a.Type.Kind == gqlschema.NonNull && a.DefaultValue == nil {
				return nil, errInvalidInput("NonNull")
			}
			continue
		}
		c, err := r.coerce(v, a.Type)
		if err != nil {
			return nil, err
		}
		out[a.Name] = c
	}
	return out, nil
}

// node plans the selection of a record of table t.
func (r *request) node(sel *selection, t *gqlschema.Table, style unknownFieldStyle) (*sqlgen.Node, error) {
	return r.objectFields(sel, r.schema.Types[t.TypeName], t.TypeName, style, func(c *selection, f *gqlschema.Field) (sqlgen.NodeField, error) {
		nf := sqlgen.NodeField{Key: c.Key}
		var err error
		switch f.Kind {
		case gqlschema.FieldNodeID:
			nf.NodeID = &sqlgen.NodeID{Relation: *r.relation(t), PK: pkNames(t)}
		case gqlschema.FieldColumn:
			if f.Column.Type.Composite != nil {
				nf.Composite, err = r.compositeValue(c, f.Column)
				break
			}
			nf.Column = columnOutput(f.Column)
		case gqlschema.FieldToOne:
			if err := noArguments(c); err != nil {
				return nf, err
			}
			child, err := r.node(c, f.Table, quotedSingle)
			if err != nil {
				return nf, err
			}
			// Joined only at a key Postgres enforces (a foreign key's referenced key always is one): a
			// primary_key_columns directive, or a view's foreign_keys directive, promises nothing.
			nf.Record = &sqlgen.Record{Source: sqlgen.Source{Relation: r.relation(f.Table)}, Join: joins(f.Relationship),
				Node: child, Joinable: r.joinRecords && f.Relationship.To.Rel.UniqueKeyWithin(f.Relationship.ToColumns)}
		case gqlschema.FieldToMany:
			nf.Connection, err = r.connection(c, f, sqlgen.Source{Relation: r.relation(f.Table)}, joins(f.Relationship))
		case gqlschema.FieldComputed:
			err = r.functionField(c, f, &nf, true)
		default:
			err = unknownField(style, c.Name, t.TypeName)
		}
		return nf, err
	})
}

// objectFields plans the fields selected on object type typ (named typeName): __typename by itself, a name typ
// lacks as an unknown field in style, and every other field as field plans it. A table's node and a composite
// value share it; which fields they have and what each becomes are theirs.
func (r *request) objectFields(sel *selection, typ *gqlschema.Type, typeName string, style unknownFieldStyle,
	field func(c *selection, f *gqlschema.Field) (sqlgen.NodeField, error)) (*sqlgen.Node, error) {
	children, err := r.children(sel, typeName)
	if err != nil {
		return nil, err
	}
	n := &sqlgen.Node{}
	for _, c := range children {
		if c.Name == "__typename" {
			n.Fields = append(n.Fields, sqlgen.NodeField{Key: c.Key, Typename: typeName})
			continue
		}
		f := findField(typ, c.Name)
		if f == nil {
			return nil, unknownField(style, c.Name, typeName)
		}
		nf, err := field(c, f)
		if err != nil {
			return nil, err
		}
		n.Fields = append(n.Fields, nf)
	}
	return n, nil
}

func findField(t *gqlschema.Type, name string) *gqlschema.Field {
	if t == nil {
		return nil
	}
	var found *gqlschema.Field
	for _, f := range t.Fields {
		if f.Name == name {
			found = f // a later column wins when two inflect to the same name, as in pg_graphql
		}
	}
	return found
}

func pkNames(t *gqlschema.Table) []string {
	out := make([]string, len(t.PK))
	for i, c := range t.PK {
		out[i] = c.SQL.Name
	}
	return out
}

// knownOutputs are the column types sqlgen writes better than a value of any type (OutPlain), by type oid so
// that a domain over one of them keeps the general path: booleans, integers and uuids, whose text is their JSON
// text (or a JSON string's content), without to_json; text, char, varchar, name and the dates and times as
// values whose JSON is a string, which the response takes without the layout pass.
var knownOutputs = map[uint32]sqlgen.Output{
	16: sqlgen.OutBoolean, 21: sqlgen.OutNumber, 23: sqlgen.OutNumber, 2950: sqlgen.OutUUID,
	18: sqlgen.OutString, 19: sqlgen.OutString, 25: sqlgen.OutString, 1042: sqlgen.OutString, 1043: sqlgen.OutString,
	1082: sqlgen.OutString, 1083: sqlgen.OutString, 1114: sqlgen.OutString, 1184: sqlgen.OutString,
	1266: sqlgen.OutString,
}

func columnOutput(c *gqlschema.Column) *sqlgen.Column {
	out := &sqlgen.Column{Name: c.SQL.Name}
	out.Output, out.EnumLabels = valueOutput(c.Type, c.SQL.Type)
	return out
}

// valueOutput is how a value of type v, whose type's oid is oid, is written into JSON, and the answers of its
// enum's labels where they are mapped: a column's or a computed field's alike.
func valueOutput(v *gqlschema.ValueType, oid uint32) (sqlgen.Output, map[string]string) {
	out := sqlgen.Output(v.Output)
	if known, ok := knownOutputs[oid]; ok && v.Output == gqlschema.OutPlain && !v.Array {
		out = known
	}
	var labels map[string]string
	if v.Output == gqlschema.OutEnum && v.Enum != nil {
		if len(v.Enum.Directives.Mappings) > 0 {
			labels = v.Enum.Directives.Mappings
		}
		if enumAnswersPlain(v.Enum) {
			out = sqlgen.OutQuotedEnum
		}
	}
	return out, labels
}

// enumAnswersPlain reports whether every label of enum, as the API answers it, needs no escaping in a JSON
// string. The labels are the catalog's as the schema was read: a label added or renamed since reaches requests
// with the schema read after the change, as a column's new type does.
func enumAnswersPlain(enum *reflect.Type) bool {
	for _, label := range enum.EnumValues {
		if name, ok := enum.Directives.Mappings[label]; ok {
			label = name
		}
		if !sqlgen.PlainInJSONString(label) {
			return false
		}
	}
	return true
}

func joins(rel *gqlschema.Relationship) []sqlgen.Join {
	out := make([]sqlgen.Join, len(rel.FromColumns))
	for i := range rel.FromColumns {
		out[i] = sqlgen.Join{Child: rel.ToColumns[i], Parent: rel.FromColumns[i]}
	}
	return out
}

// functionField plans a computed field or a root function into nf.
func (r *request) functionField(sel *selection, f *gqlschema.Field, nf *sqlgen.NodeField, rowArg bool) error {
	fn := f.Function
	args, err := r.fieldArgs(sel, f)
	if err != nil {
		return err
	}
	// What a function reads is not known: any change may change its result.
	r.reads.all = true
	call := &sqlgen.Call{Function: sqlgen.Relation{Schema: fn.SQL.Schema.Name, Name: fn.SQL.Name}, RowArg: rowArg}
	for _, a := range f.Args {
		if a.Param == nil {
			continue
		}
		v, present := args[a.Name]
		if !present {
			continue
		}
		arg := sqlgen.Arg{Name: a.Param.SQLName, Cast: a.Param.Type.Cast}
		if list, ok := v.([]any); ok {
			arg.Array = true
			for _, e := range list {
				arg.Values = append(arg.Values, sqlText(e))
			}
		} else {
			arg.Value = sqlText(v)
		}
		call.Args = append(call.Args, arg)
	}
	switch fn.Returns {
	case gqlschema.ReturnsConnection:
		conn, err := r.connectionWithArgs(sel, f, args, sqlgen.Source{Call: call}, nil)
		if err != nil {
			return err
		}
		nf.Connection = conn
	case gqlschema.ReturnsRow:
		if fn.Return == nil && fn.Table != nil {
			child, err := r.node(sel, fn.Table, quotedSingle)
			if err != nil {
				return err
			}
			nf.Record = &sqlgen.Record{Source: sqlgen.Source{Call: call}, Node: child, SkipNullRow: true}
		}
	default:
		// Written as a column of its type is: an integer, a boolean or a uuid without to_json, and none of them, nor
		// a string, through the layout pass.
		call.Output, call.EnumLabels = valueOutput(fn.Return, fn.Return.ElemOID)
		nf.Scalar = call
	}
	return nil
}

// connection plans a connection field from its raw arguments.
func (r *request) connection(sel *selection, f *gqlschema.Field, src sqlgen.Source, join []sqlgen.Join) (*sqlgen.Connection, error) {
	args, err := r.fieldArgs(sel, f)
	if err != nil {
		return nil, err
	}
	return r.connectionWithArgs(sel, f, args, src, join)
}

func unsigned(args map[string]any, name string) (int, bool, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return 0, false, nil
	}
	n, err := strconv.Atoi(string(v.(json.Number)))
	if err != nil || n < 0 {
		return 0, false, errNotUnsigned(name)
	}
	return n, true, nil
}

func (r *request) connectionWithArgs(sel *selection, f *gqlschema.Field, args map[string]any, src sqlgen.Source, join []sqlgen.Join) (*sqlgen.Connection, error) {
	t := f.Table
	first, hasFirst, err := unsigned(args, "first")
	if err != nil {
		return nil, err
	}
	last, hasLast, err := unsigned(args, "last")
	if err != nil {
		return nil, err
	}
	offset, hasOffset, err := unsigned(args, "offset")
	if err != nil {
		return nil, err
	}
	after, hasAfter := args["after"].(string)
	before, hasBefore := args["before"].(string)
	switch {
	case hasFirst && hasLast:
		return nil, errFirstAndLast()
	case hasBefore && hasAfter:
		return nil, errBeforeAndAfter()
	case hasFirst && hasBefore:
		return nil, errFirstWithBefore()
	case hasLast && hasAfter:
		return nil, errLastWithAfter()
	case hasOffset && (hasLast || hasBefore):
		return nil, errOffsetBackwards()
	}
	c := &sqlgen.Connection{Source: src, Join: join, Offset: offset, Backward: hasLast || hasBefore}
	c.Limit = t.MaxRows
	if hasFirst && first < c.Limit {
		c.Limit = first
	}
	if hasLast && last < c.Limit {
		c.Limit = last
	}
	if fv, ok := args["filter"].(map[string]any); ok {
		if c.Filter, err = r.filter(fv, t); err != nil {
			return nil, err
		}
	}
	if c.Order, err = r.orderBy(args["orderBy"], t); err != nil {
		return nil, err
	}
	// Orders by related values are pgreflect's own, with no pg_graphql answer to match: their pages skip nothing.
	c.ExactPaging = t.Features.Has(reflect.FeatureExactPaging) ||
		slices.ContainsFunc(c.Order, func(o sqlgen.Order) bool { return o.Related != nil })
	if a := f.Arg("distinctOn"); a != nil && a.Param == nil {
		c.Distinct = distinctOn(args["distinctOn"], t)
	}
	if hasAfter || hasBefore {
		raw := after
		if hasBefore {
			raw = before
		}
		if c.Cursor, err = decodeCursor(raw); err != nil {
			return nil, err
		}
		if len(c.Cursor) > len(c.Order) {
			return nil, errCursorOrderBy()
		}
	}
	if c.Fields, err = r.connectionFields(sel, t); err != nil {
		return nil, err
	}
	return c, nil
}

// orderBy plans the orderBy argument followed by the primary key, which makes the order total.
func (r *request) orderBy(v any, t *gqlschema.Table) ([]sqlgen.Order, error) {
	var out []sqlgen.Order
	list, _ := v.([]any)
	for _, e := range list {
		obj, _ := e.(map[string]any)
		o, err := r.orderObject(obj, t)
		if err != nil {
			return nil, err
		}
		out = append(out, o...)
	}
	for _, pk := range t.PK {
		out = append(out, sqlgen.Order{Column: pk.SQL.Name, Cast: pk.SQL.FormatType, NotNull: pk.SQL.NotNull})
	}
	return out, nil
}

// orderObject plans one <X>OrderBy object.
func (r *request) orderObject(obj map[string]any, t *gqlschema.Table) ([]sqlgen.Order, error) {
	var out []sqlgen.Order
	// Several keys in one element have no defined relative order upstream; use the input type's order.
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	orderType := r.schema.Types[t.TypeName+"OrderBy"]
	sort.Slice(keys, func(i, j int) bool { return keyIndex(t, orderType, keys[i]) < keyIndex(t, orderType, keys[j]) })
	for _, k := range keys {
		switch v := obj[k].(type) {
		case enumLiteral:
			c := columnByField(t, k)
			o := sqlgen.Order{Column: c.SQL.Name, Cast: c.SQL.FormatType, NotNull: c.SQL.NotNull}
			direct(&o, v)
			out = append(out, o)
		case map[string]any:
			o, err := r.relatedOrder(v, inputField(orderType, k))
			if err != nil {
				return nil, err
			}
			out = append(out, o...)
		}
		// null directions are skipped
	}
	return out, nil
}

// direct sets an ordering element's direction.
func direct(o *sqlgen.Order, dir enumLiteral) {
	switch dir {
	case "AscNullsFirst":
		o.NullsFirst = true
	case "DescNullsFirst":
		o.Desc, o.NullsFirst = true, true
	case "DescNullsLast":
		o.Desc = true
	}
}

// keyIndex orders the keys of an order-by object: columns in attnum order, then relationships (relatedOrder)
// in the input type's order.
func keyIndex(t *gqlschema.Table, orderType *gqlschema.Type, key string) int {
	if i := columnIndex(t, key); i < len(t.Columns) {
		return i
	}
	for i, f := range orderType.InputFields {
		if f.Name == key {
			return len(t.Columns) + i
		}
	}
	return len(t.Columns) + len(orderType.InputFields)
}

func columnIndex(t *gqlschema.Table, field string) int {
	for i, c := range t.Columns {
		if c.FieldName == field {
			return i
		}
	}
	return len(t.Columns)
}

func columnByField(t *gqlschema.Table, field string) *gqlschema.Column {
	var found *gqlschema.Column
	for _, c := range t.Columns {
		if c.FieldName == field {
			found = c
		}
	}
	return found
}

// decodeCursor decodes base64(jsonb text of an array) into the text of each element.
func decodeCursor(s string) ([]*string, error) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, errCursorDecode(1)
	}
	if !utf8.Valid(raw) {
		return nil, errCursorDecode(2)
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || !atEOF(dec) {
		return nil, errCursorDecode(3)
	}
	list, ok := v.([]any)
	if !ok {
		return nil, errCursorDecode(4)
	}
	out := make([]*string, len(list))
	for i, e := range list {
		out[i] = jsonText(e)
	}
	return out, nil
}

// atEOF reports whether dec has nothing but whitespace left: serde_json, which pg_graphql decodes cursors and
// node ids with, refuses trailing data where Go's decoder stops after the first value.
func atEOF(dec *json.Decoder) bool {
	_, err := dec.Token()
	return err == io.EOF
}

// jsonText is the text a JSON scalar stands for (strings unquoted); objects and arrays keep their JSON text.
func jsonText(v any) *string {
	switch v := v.(type) {
	case nil:
		return nil
	case string, json.Number, bool:
		return sqlText(v)
	}
	b, _ := json.Marshal(v)
	s := string(b)
	return &s
}

func (r *request) connectionFields(sel *selection, t *gqlschema.Table) ([]sqlgen.ConnectionField, error) {
	connType := r.schema.Types[t.TypeName+"Connection"]
	children, err := r.children(sel, connType.Name)
	if err != nil {
		return nil, err
	}
	var out []sqlgen.ConnectionField
	for _, c := range children {
		cf := sqlgen.ConnectionField{Key: c.Key}
		switch c.Name {
		case "__typename":
			cf.Typename = connType.Name
		case "edges":
			edges, err := r.edges(c, t)
			if err != nil {
				return nil, err
			}
			cf.Edges = edges
		case "pageInfo":
			pi, err := r.pageInfo(c)
			if err != nil {
				return nil, err
			}
			cf.PageInfo = pi
		case "totalCount":
			if findField(connType, "totalCount") == nil {
				return nil, errUnknownConnectionField()
			}
			cf.TotalCount = true
		case "aggregate":
			if findField(connType, "aggregate") == nil {
				return nil, errAggregateDisabled()
			}
			agg, err := r.aggregate(c, t)
			if err != nil {
				return nil, err
			}
			cf.Aggregate = agg
		default:
			return nil, errUnknownConnectionField()
		}
		out = append(out, cf)
	}
	return out, nil
}

func (r *request) edges(sel *selection, t *gqlschema.Table) (*sqlgen.Edges, error) {
	children, err := r.children(sel, t.TypeName+"Edge")
	if err != nil {
		return nil, err
	}
	e := &sqlgen.Edges{}
	for _, c := range children {
		ef := sqlgen.EdgeField{Key: c.Key}
		switch c.Name {
		case "__typename":
			ef.Typename = t.TypeName + "Edge"
		case "cursor":
			ef.Cursor = true
		case "node":
			n, err := r.node(c, t, quotedSingle)
			if err != nil {
				return nil, err
			}
			ef.Node = n
		default:
			return nil, errUnknownEdgeField()
		}
		e.Fields = append(e.Fields, ef)
	}
	return e, nil
}

func (r *request) pageInfo(sel *selection) ([]sqlgen.PageInfoField, error) {
	children, err := r.children(sel, "PageInfo")
	if err != nil {
		return nil, err
	}
	out := []sqlgen.PageInfoField{}
	for _, c := range children {
		pf := sqlgen.PageInfoField{Key: c.Key}
		switch c.Name {
		case "__typename":
			pf.Typename = "PageInfo"
		case "startCursor":
			pf.Kind = sqlgen.PageStartCursor
		case "endCursor":
			pf.Kind = sqlgen.PageEndCursor
		case "hasNextPage":
			pf.Kind = sqlgen.PageHasNext
		case "hasPreviousPage":
			pf.Kind = sqlgen.PageHasPrevious
		default:
			return nil, errUnknownPageInfoField()
		}
		out = append(out, pf)
	}
	return out, nil
}

func (r *request) aggregate(sel *selection, t *gqlschema.Table) ([]sqlgen.AggregateField, error) {
	aggType := r.schema.Types[t.TypeName+"Aggregate"]
	children, err := r.children(sel, aggType.Name)
	if err != nil {
		return nil, err
	}
	out := []sqlgen.AggregateField{}
	for _, c := range children {
		af := sqlgen.AggregateField{Key: c.Key}
		f := findField(aggType, c.Name)
		switch {
		case c.Name == "__typename":
			af.Typename = aggType.Name
		case f != nil && f.Kind == gqlschema.FieldAggregateCount:
			af.Count = true
		case f != nil && f.Kind == gqlschema.FieldAggregateGroup:
			af.Group = c.Name
			groupType := r.schema.Types[f.Type.NamedType()]
			cols, err := r.children(c, groupType.Name)
			if err != nil {
				return nil, err
			}
			af.Columns = []sqlgen.AggregateColumn{}
			for _, cc := range cols {
				if cc.Name == "__typename" {
					af.Columns = append(af.Columns, sqlgen.AggregateColumn{Key: cc.Key, Typename: groupType.Name})
					continue
				}
				gf := findField(groupType, cc.Name)
				if gf == nil {
					return nil, errUnknownAggregateColumn(cc.Name, groupType.Name)
				}
				af.Columns = append(af.Columns, sqlgen.AggregateColumn{Key: cc.Key, Column: gf.Column.SQL.Name,
					Boolean: gf.Column.Type.Scalar == "Boolean"})
			}
		default:
			return nil, errUnknownAggregateField(c.Name, aggType.Name)
		}
		out = append(out, af)
	}
	return out, nil
}
