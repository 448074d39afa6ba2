package sqlgen

import (
	"sort"
	"strconv"
	"strings"
)

// gen accumulates SQL text and parameters.
type gen struct {
	server  Server
	sb      *strings.Builder
	args    []any
	aliases int
	// rowCast turns an alias whose rows are anonymous records into the table's row type (mutation results).
	rowCast map[string]string
	// joined holds, by alias, the rows being written to which to-one records are joined (joinedRows).
	joined map[string]*joinedRows
	// respelled says that the text written holds a value whose JSON Postgres may spell otherwise than
	// pg_graphql answers it (see Statement.Verbatim).
	respelled bool
}

// newGen returns a generator whose text has room for a statement of a kilobyte to start with, rather than
// growing to it a doubling at a time (eight copies of what was written so far).
func newGen(server Server) *gen {
	g := &gen{server: server, sb: &strings.Builder{}}
	g.sb.Grow(1 << 10)
	return g
}

func (g *gen) w(parts ...string) {
	for _, p := range parts {
		g.sb.WriteString(p)
	}
}

// param binds a text value and returns its placeholder.
func (g *gen) param(v any) string {
	g.args = append(g.args, v)
	return "$" + strconv.Itoa(len(g.args))
}

// idents writes column names as a comma-separated list of quoted identifiers.
func (g *gen) idents(names []string) {
	for i, n := range names {
		if i > 0 {
			g.w(", ")
		}
		g.w(Ident(n))
	}
}

func (g *gen) alias() string {
	g.aliases++
	return "t" + strconv.Itoa(g.aliases)
}

// text writes a text constant of the statement (a key, a type name, a catalog name). Constants are part of the
// statement's text, so that its shape alone decides the text and the plan Postgres keeps for it; one that is
// not plainly safe to inline is a parameter instead.
func (g *gen) text(s string) { g.w(g.constant(s), "::text") }

// constant returns s as a SQL string literal, or as a parameter when it holds anything but letters, digits,
// space and _ - . : (never a quote or a backslash, whatever standard_conforming_strings says).
func (g *gen) constant(s string) string {
	if len(s) > 128 {
		return g.param(s)
	}
	if strings.ContainsFunc(s, func(r rune) bool { return !plainRune(r) }) {
		return g.param(s)
	}
	return "'" + s + "'"
}

// plainRune reports whether r may appear in a string literal that constant inlines.
func plainRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(" _-.:", r)
}

// value writes a value cast to its type, or NULL.
func (g *gen) value(v *string, cast string) {
	if v == nil {
		g.w("null")
		if cast != "" {
			g.w("::", cast)
		}
		return
	}
	if cast == "" {
		g.w(g.param(*v), "::text")
		return
	}
	g.w("(", g.param(*v), "::text)::", cast)
}

// array writes a list value as text[] cast to the array type; nil elements are NULL.
func (g *gen) array(vs []*string, cast string) {
	if vs == nil {
		vs = []*string{}
	}
	g.w("(", g.param(vs), "::text[])::", cast)
}

// capture returns what fn writes instead of writing it.
func (g *gen) capture(fn func()) string {
	outer := g.sb
	g.sb = &strings.Builder{}
	fn()
	s := g.sb.String()
	g.sb = outer
	return s
}

// Statement is generated SQL with its parameters.
type Statement struct {
	SQL  string
	Args []any
	// Verbatim says of each column of the statement's row that its text is the answer as pg_graphql spells
	// it: it holds no value that the response's layout pass respaces or renumbers (a number through to_json,
	// an array, a composite or a JSON object, a value of a type not known), only strings, integers, booleans
	// and nulls in the separators sqlgen writes.
	Verbatim []bool
	// NoRow, when set, is the answer of a statement that returns no row (a one-row insert that wrote
	// nothing); without it such a statement answers null.
	NoRow []byte
}

// RootField is a top-level query field: exactly one of its parts is set.
type RootField struct {
	Connection *Connection
	Record     *Record
	Scalar     *Call
}

// Query renders root fields as one statement for server returning one row with one text column (jsonb text)
// per field.
func Query(server Server, fields []RootField) Statement {
	g := newGen(server)
	g.w("select ")
	verbatim := make([]bool, len(fields))
	for i, f := range fields {
		if i > 0 {
			g.w(", ")
		}
		g.respelled = false
		g.w("(")
		switch {
		case f.Connection != nil:
			g.connection(f.Connection, "")
		case f.Record != nil:
			g.record(f.Record, "")
		case f.Scalar != nil:
			// Outside jsonb_build_object the value must be made JSON explicitly.
			g.w("to_jsonb(")
			g.call(f.Scalar, "", true)
			g.w(")")
			g.respelled = true
		}
		g.w(")::text")
		verbatim[i] = !g.respelled
	}
	return Statement{SQL: g.sql(), Args: g.args, Verbatim: verbatim}
}

// object writes a JSON object as text over key/value writers, each of which writes JSON text that is never
// NULL (jsonValue, jsonPlain, jsonQuoted, jsonString, or a nested object, list or page). Keys go in jsonb's
// order (shorter first, then bytewise; a repeated key keeps its last value) with jsonb's separators, so that
// the text is what jsonb would print. Responses are concatenated text rather than json_build_object and
// json_agg: those look up every argument's type and output function again on every call, which was half of
// Postgres' time on a page of nested pages (bench/findings.md, "JSON as text").
func (g *gen) object(keys []string, values []func()) {
	keys, values = jsonbOrder(keys, values)
	if len(keys) == 0 {
		g.lit("{}")
		return
	}
	g.open()
	g.pairs(keys, values, true)
	g.cat()
	g.lit("}")
	g.close()
}

// pairs writes key/value pairs as concatenated text, opening the object when first is set. More than two pairs
// are split in halves, each in parentheses: a chain of || is as deep as it is long, and Postgres refuses an
// expression deeper than its stack allows (an object of a few thousand aliased fields); and each || copies
// what its left side holds, so that in a chain a large value would be copied once for every field after it.
func (g *gen) pairs(keys []string, values []func(), first bool) {
	if n := len(keys); n > 2 {
		g.open()
		g.pairs(keys[:n/2], values[:n/2], first)
		g.close()
		g.cat()
		g.open()
		g.pairs(keys[n/2:], values[n/2:], false)
		g.close()
		return
	}
	for i := range keys {
		open := ", "
		if first && i == 0 {
			open = "{"
		}
		if i > 0 {
			g.cat()
		}
		g.jsonStringBetween(open, keys[i], ": ")
		g.cat()
		values[i]()
	}
}

// list writes a JSON array as text, one element per row of what from writes (from "from" on), in the order
// order writes when it is not nil. The elements are collected by an ARRAY subquery, whose rows keep its ORDER
// BY: the planner sees that a page is already in that order, where an aggregate's own ORDER BY sorts every
// page again (before PostgreSQL 16). Elements are never NULL, which array_to_string would skip.
func (g *gen) list(element, order, from func()) {
	g.enclosed("[", func() {
		g.w("array_to_string(array(select ")
		element()
		g.w(" ")
		from()
		if order != nil {
			g.w(" order by ")
			order()
		}
		g.w("), ', ')")
	}, "]")
}

// jsonValue writes the JSON text of a value of any type, as json_build_object would embed it, or null; out
// says what the value is, and so whether its JSON may need respelling (Statement.Verbatim).
func (g *gen) jsonValue(out Output, value func()) {
	if out != OutString && out != OutEnum && out != OutJSONText {
		g.respelled = true
	}
	if g.server.JSONScalar {
		g.w("coalesce(json_scalar(")
	} else {
		g.w("coalesce(to_json(")
	}
	value()
	g.w(")::text, 'null')")
}

// jsonPlain writes a value whose text is its JSON text (an integer, a boolean), or null.
func (g *gen) jsonPlain(value func()) {
	g.w("coalesce((")
	value()
	g.w(")::text, 'null')")
}

// jsonQuoted writes a value whose text needs no escaping in a JSON string (a uuid, a bigint, a numeric, base64)
// as that string, or null.
func (g *gen) jsonQuoted(value func()) {
	g.w(`coalesce('"' || (`)
	value()
	g.w(`)::text || '"', 'null')`)
}

// jsonString writes a constant as a JSON string.
func (g *gen) jsonString(s string) { g.jsonStringBetween("", s, "") }

// jsonStringBetween writes the text before, the constant s as a JSON string, and after: one literal when s may
// be inlined (a key, a type name), else s as a parameter through to_json.
func (g *gen) jsonStringBetween(before, s, after string) {
	lit := g.constant(s)
	if lit[0] == '\'' {
		g.lit(before, `"`, s, `"`, after)
		return
	}
	if before != "" {
		g.lit(before)
		g.cat()
	}
	g.w("to_json(", lit, "::text)::text")
	if after != "" {
		g.cat()
		g.lit(after)
	}
}

// JSONBKeyLess orders object keys as jsonb stores them: shorter first, then bytewise.
func JSONBKeyLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// jsonbOrder sorts keys as jsonb stores them, keeping the last of repeated keys.
func jsonbOrder(keys []string, values []func()) ([]string, []func()) {
	last := make(map[string]int, len(keys))
	for i, k := range keys {
		last[k] = i
	}
	idx := make([]int, 0, len(last))
	for i, k := range keys {
		if last[k] == i {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return JSONBKeyLess(keys[idx[a]], keys[idx[b]]) })
	sk := make([]string, len(idx))
	sv := make([]func(), len(idx))
	for i, j := range idx {
		sk[i], sv[i] = keys[j], values[j]
	}
	return sk, sv
}

func (g *gen) node(n *Node, alias string) {
	keys := make([]string, len(n.Fields))
	values := make([]func(), len(n.Fields))
	for i, f := range n.Fields {
		keys[i] = f.Key
		values[i] = func() {
			switch {
			case f.Column != nil:
				g.column(f.Column, alias)
			case f.NodeID != nil:
				g.jsonQuoted(func() { g.nodeID(f.NodeID, alias) })
			case f.Record != nil && g.joined[alias].takes(f.Record):
				g.w("coalesce(", g.joined[alias].join(g, f.Record, alias), ".one, 'null')")
			case f.Record != nil:
				g.w("coalesce((")
				g.record(f.Record, alias)
				g.w("), 'null')")
			case f.Connection != nil:
				g.w("(")
				g.connection(f.Connection, alias)
				g.w(")")
			case f.Scalar != nil:
				g.jsonOf(g.capture(func() { g.call(f.Scalar, alias, false) }), f.Scalar.Output, f.Scalar.EnumLabels)
			case f.Composite != nil:
				g.composite(f.Composite, alias)
			default:
				g.jsonString(f.Typename)
			}
		}
	}
	g.object(keys, values)
}

// column writes a column's JSON text.
func (g *gen) column(c *Column, alias string) {
	g.jsonOf(g.col(alias, c.Name), c.Output, c.EnumLabels)
}

// jsonOf writes the JSON text of expr, a column or a function call, as out says (labels: an enum's answers).
func (g *gen) jsonOf(expr string, out Output, labels map[string]string) {
	switch out {
	case OutNumber, OutBoolean:
		g.jsonPlain(func() { g.w(expr) })
	case OutUUID, OutText:
		g.jsonQuoted(func() { g.w(expr) })
	case OutQuotedEnum:
		g.jsonQuoted(func() { g.output(expr, OutEnum, labels) })
	default:
		g.jsonValue(out, func() { g.output(expr, out, labels) })
	}
}

func (g *gen) output(expr string, out Output, labels map[string]string) {
	switch out {
	case OutText:
		g.w("(", expr, ")::text")
	case OutJSONText:
		g.w("((", expr, ") #>> '{}')")
	case OutTextArray:
		g.w("(", expr, ")::text[]")
	case OutEnum:
		if len(labels) == 0 {
			g.w(expr)
			return
		}
		sqlLabels := make([]string, 0, len(labels))
		for l := range labels {
			sqlLabels = append(sqlLabels, l)
		}
		sort.Strings(sqlLabels)
		g.w("case (", expr, ")::text")
		for _, l := range sqlLabels {
			g.w(" when ")
			g.text(l)
			g.w(" then ")
			g.text(labels[l])
		}
		g.w(" else (", expr, ")::text end")
	default:
		g.w(expr)
	}
}

// base64 of the jsonb text of an array, as pg_graphql encodes cursors and node ids.
func (g *gen) encoded(array func()) {
	g.w("translate(encode(convert_to(jsonb_build_array(")
	array()
	g.w(")::text, 'utf-8'), 'base64'), E'\\n', '')")
}

func (g *gen) nodeID(n *NodeID, alias string) {
	g.encoded(func() {
		g.text(n.Relation.Schema)
		g.w(", ")
		g.text(n.Relation.Name)
		for _, c := range n.PK {
			g.w(", ", g.col(alias, c))
		}
	})
}

// call writes a function call; as an output value when render is set.
func (g *gen) call(c *Call, parent string, render bool) {
	expr := g.capture(func() {
		g.w(c.Function.sql(), "(")
		n := 0
		if c.RowArg {
			if cast, ok := g.rowCast[parent]; ok {
				g.w(cast)
			} else {
				g.w(parent)
			}
			n++
		}
		for _, a := range c.Args {
			if n > 0 {
				g.w(", ")
			}
			n++
			g.w(Ident(a.Name), " => ")
			if a.Array {
				g.array(a.Values, a.Cast)
			} else {
				g.value(a.Value, a.Cast)
			}
		}
		g.w(")")
	})
	if render {
		g.output(expr, c.Output, c.EnumLabels)
	} else {
		g.w(expr)
	}
}

func (g *gen) from(s Source, alias, parent string) {
	if s.Call != nil {
		g.call(s.Call, parent, false)
	} else {
		g.w(s.Relation.sql())
	}
	g.w(" ", alias)
}

// where writes the join with the parent, the filter and any extra conditions.
func (g *gen) where(alias, parent string, join []Join, filter Expr, extra ...func()) {
	g.w(" where true")
	for _, j := range join {
		g.w(" and ", g.col(alias, j.Child), " = ", g.col(parent, j.Parent))
	}
	if filter != nil {
		g.w(" and ")
		filter.write(g, alias)
	}
	for _, e := range extra {
		g.w(" and ")
		e()
	}
}

func (g *gen) record(r *Record, parent string) {
	a := g.alias()
	g.w("select ")
	joined := g.joinedNode(r.Node, a, nil)
	g.recordFrom(r, a, parent, joined)
}

// recordFrom writes the from and where clauses of record r read as alias a, with the records joined to it.
func (g *gen) recordFrom(r *Record, a, parent string, joined *joinedRows) {
	g.w(" from ")
	g.from(r.Source, a, parent)
	joined.write(g)
	var extra []func()
	if r.SkipNullRow {
		extra = append(extra, func() { g.w("not (", a, " is null)") })
	}
	g.where(a, parent, r.Join, r.Filter, extra...)
}
