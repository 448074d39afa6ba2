package sqlgen

import (
	"strconv"
	"strings"
)

// tooManyMarker starts the text an update or delete beyond atMost fails to cast to integer. The check must
// fail inside the statement, so that the request stays one round trip and nothing is changed, and plain SQL
// (no function installed in the database) can fail a statement only through a built-in's error: the failed
// cast's message quotes the marked text, which TooManyFailure finds again.
const tooManyMarker = "pgreflect atMost: "

// TooManyFailure reports whether a statement failed with SQLSTATE code and message because a mutation went
// beyond its atMost, and returns the mutation's TooMany message. It reads only the type name and the quoted
// text, which stay as written whatever language the server's messages are in. A value of the request never
// fails a cast to integer: Int inputs are checked before any SQL runs.
func TooManyFailure(code, message string) (string, bool) {
	if code != "22P02" || !strings.Contains(message, "integer") { // invalid_text_representation
		return "", false
	}
	_, rest, ok := strings.Cut(message, tooManyMarker)
	if !ok {
		return "", false
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return !plainRune(r) })
	if end < 0 {
		end = len(rest)
	}
	return rest[:end], end > 0
}

// Value is a value written by a mutation.
type Value struct {
	Value *string // nil writes NULL
	Cast  string
	// Array marks a list value held in Values.
	Array  bool
	Values []*string
	// Default writes DEFAULT (insert rows that omit a column).
	Default bool
}

// Assignment sets one column in an update.
type Assignment struct {
	Column string
	Value  Value
}

// MutationField is one selected field of a mutation response.
type MutationField struct {
	Key           string
	Typename      string
	AffectedCount bool
	Records       *Node
}

// Mutation is one insert, update or delete; exactly one of Rows (insert), Set (update) or Delete is used.
type Mutation struct {
	Relation Relation
	// Insert: the columns and, per row, one value per column.
	Columns []string
	Rows    [][]Value
	// Update.
	Set []Assignment
	// Delete marks a delete.
	Delete bool
	Filter Expr
	// AtMost limits the rows an update or delete may touch; TooMany is the error raised beyond it.
	AtMost  int
	TooMany string
	// PK names the key an update or delete locks its rows by, in this order, before writing them; without it
	// the statement locks rows in whatever order its scan meets them.
	PK []string
	// OneRow says that an update's or a delete's filter matches at most one row (it fixes every column of a
	// unique key): the statement is then written alone, without locking in order or counting against AtMost,
	// which one row can neither need nor exceed when AtMost is at least 1.
	OneRow bool
	// Returning lists the columns the role may read; nil returns every column (needed by computed fields,
	// which take the whole row).
	Returning []string
	Fields    []MutationField
	// OnConflict makes an insert an upsert (the upsert extension).
	OnConflict *OnConflict
	// Objects, when set, replace Columns and Rows for an insert that writes related rows too (the nestedInsert
	// extension): each object is its own insert, after its new parents and before its children.
	Objects []*InsertObject
}

// insert reports whether the mutation is an insert.
func (m *Mutation) insert() bool { return m.Rows != nil || m.Objects != nil }

// MutationStatement renders a mutation as one statement returning its response object as JSON text.
func MutationStatement(server Server, m *Mutation) Statement {
	if len(m.Rows) == 1 || m.OneRow && m.AtMost >= 1 {
		return writeOne(server, m)
	}
	g := newGen(server)
	g.rowCast = map[string]string{}
	a := g.alias()
	g.w("with ")
	lockedInOrder := m.Rows == nil && len(m.PK) > 0
	if lockedInOrder {
		g.lockInOrder(m, a)
	}
	counted := false
	if m.Objects != nil {
		counted = g.insertObjects(m, a)
	} else {
		g.affected(m, a, lockedInOrder)
	}
	g.w(") select ")
	if !m.insert() {
		// A scalar subquery, not a constant: the planner folds constant casts, failing even the branch not
		// taken.
		g.w("case when (select count(*) from ", a, "_affected) > ", strconv.Itoa(m.AtMost), " then to_json((select ")
		g.text(tooManyMarker + m.TooMany)
		g.w(")::integer)::text else ")
	}
	rec := g.alias()
	if m.Returning == nil {
		// Computed fields take the table's row type; the CTE's rows are anonymous records of the same shape.
		g.rowCast[rec] = "row(" + rec + ".*)::" + m.Relation.sql()
	}
	g.answer(m.Fields, func() { g.jsonPlain(func() { g.w("select count(*) from ", a, "_affected") }) }, func(n *Node) {
		g.list(func() { g.node(n, rec) }, nil, func() { g.w("from ", a, "_affected ", rec) })
	})
	if !m.insert() {
		g.w(" end")
	}
	g.w("::text")
	if counted {
		g.w(" from ", a, "_written")
	}
	return Statement{SQL: g.sql(), Args: g.args, Verbatim: []bool{!g.respelled}}
}

// affected writes the CTE of the rows a plain insert, an update or a delete writes.
func (g *gen) affected(m *Mutation, a string, lockedInOrder bool) {
	g.w(a, "_affected as (")
	g.writeRows(m, a, lockedInOrder)
	g.returning(a, m.Returning)
}

// writeRows writes the insert of the mutation's rows, or the update or delete of the rows its filter selects,
// under alias a; an update or delete is joined to the rows locked in order (lockInOrder) when locked is set.
func (g *gen) writeRows(m *Mutation, a string, locked bool) {
	switch {
	case m.Rows != nil:
		g.insertRows(m, a)
	case m.Delete:
		g.w("delete from ", m.Relation.sql(), " ", a)
		g.selected(m, a, " using ", locked)
	default:
		g.w("update ", m.Relation.sql(), " ", a, " set ")
		for i, s := range m.Set {
			if i > 0 {
				g.w(", ")
			}
			g.w(Ident(s.Column), " = ")
			g.mutationValue(s.Value)
		}
		g.selected(m, a, " from ", locked)
	}
}

// selected ends an update or delete with the rows it writes: those locked in order, joined by join (delete's
// USING, update's FROM), when locked is set, else those the filter selects.
func (g *gen) selected(m *Mutation, a, join string, locked bool) {
	if locked {
		g.w(join, a, "_locked")
		g.whereLocked(m, a)
		return
	}
	g.where(a, "", nil, m.Filter)
}

// writeOne renders a mutation of at most one row (an insert of one object, an update or delete whose filter
// fixes a unique key) as the insert, update or delete alone, its answer made in RETURNING from the row written.
// Through a CTE and a select over it, as more rows need, Postgres spent 5-10% more CPU on such an insert or
// delete (12 µs of a small insert under row level security), and about a fifth more on an update by primary
// key, which also locked its row first (bench/findings.md, "One row written, its answer in RETURNING"). A row
// that was not written (a BEFORE trigger skipped it; ON CONFLICT DO NOTHING, or DO UPDATE's WHERE, left the
// existing one alone; no row matched the filter) returns nothing: the statement then has no row, and
// Statement.NoRow is its answer.
func writeOne(server Server, m *Mutation) Statement {
	g := newGen(server)
	a := g.alias()
	g.writeRows(m, a, false)
	g.w(" returning ")
	// The target's alias is the row written, of the table's type (no rowCast): computed fields take it whole.
	g.answer(m.Fields, func() { g.lit("1") }, func(n *Node) { g.enclosed("[", func() { g.node(n, a) }, "]") })
	g.w("::text")
	return Statement{SQL: g.sql(), Args: g.args, Verbatim: []bool{!g.respelled}, NoRow: noRowAnswer(m.Fields)}
}

// insertRows writes an insert of the mutation's rows into its relation under alias a, with its ON CONFLICT
// clause.
func (g *gen) insertRows(m *Mutation, a string) {
	g.w("insert into ", m.Relation.sql(), " as ", a, " (")
	g.idents(m.Columns)
	g.w(") values ")
	for i, row := range m.Rows {
		if i > 0 {
			g.w(", ")
		}
		g.w("(")
		for j, v := range row {
			if j > 0 {
				g.w(", ")
			}
			g.mutationValue(v)
		}
		g.w(")")
	}
	g.onConflict(m.OnConflict, a)
}

// answer writes a mutation's response object: count writes affectedCount's value, records a records list's.
func (g *gen) answer(fields []MutationField, count func(), records func(*Node)) {
	g.object(answerFields(fields, count, records, g.jsonString))
}

// answerFields are the keys of a mutation's response object and the writers of their values.
func answerFields(fields []MutationField, count func(), records func(*Node), typename func(string)) ([]string, []func()) {
	keys := make([]string, len(fields))
	values := make([]func(), len(fields))
	for i, f := range fields {
		keys[i] = f.Key
		values[i] = func() {
			switch {
			case f.AffectedCount:
				count()
			case f.Records != nil:
				records(f.Records)
			default:
				typename(f.Typename)
			}
		}
	}
	return keys, values
}

// noRowAnswer is the response object of a mutation that wrote no row, as answer writes it in SQL: no
// records, an affectedCount of 0. Keys and type names are GraphQL names, which need no escaping in JSON.
func noRowAnswer(fields []MutationField) []byte {
	var b []byte
	keys, values := jsonbOrder(answerFields(fields,
		func() { b = append(b, '0') },
		func(*Node) { b = append(b, "[]"...) },
		func(name string) { b = append(append(append(b, '"'), name...), '"') }))
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(append(append(b, '"'), k...), `": `...)
		values[i]()
	}
	return append(b, '}')
}

// returning writes the RETURNING clause of the columns, or of the whole row when cols is nil.
func (g *gen) returning(a string, cols []string) {
	g.w(" returning ")
	if cols == nil {
		g.w(a, ".*")
		return
	}
	for i, c := range cols {
		if i > 0 {
			g.w(", ")
		}
		g.w(g.col(a, c))
	}
}

func (g *gen) mutationValue(v Value) {
	switch {
	case v.Default:
		g.w("default")
	case v.Array && v.Values != nil:
		g.array(v.Values, v.Cast)
	default:
		g.value(v.Value, v.Cast)
	}
}

// lockInOrder writes a CTE that locks the rows an update will write, in key order. An update otherwise locks
// rows in the order its scan meets them, which differs between plans and moves as rows get new versions: two
// concurrent updates of overlapping rows then each hold a row the other waits for, and Postgres aborts one
// with "deadlock detected". Taking the locks in one global order first makes them queue instead. The update
// then joins the locked rows by key (not ctid: a row updated concurrently and locked in its newest version is
// invisible to the statement's snapshot by ctid, while the key finds its old version and follows it).
//
// SELECT ... FOR UPDATE needs UPDATE privilege and applies UPDATE policies, so the caller sets PK on a delete
// only where that selects the same rows as the delete (a table without row level security, a role with
// UPDATE on some column).
func (g *gen) lockInOrder(m *Mutation, a string) {
	// materialized: the locks must all be taken, in order, before the update joins the rows (an inlined CTE
	// would let the planner fold the lock into the join).
	g.w(a, "_locked as materialized (select ")
	for i, k := range m.PK {
		if i > 0 {
			g.w(", ")
		}
		g.w(g.col(a, k))
	}
	g.w(" from ", m.Relation.sql(), " ", a)
	g.where(a, "", nil, m.Filter)
	g.w(" order by ")
	for i, k := range m.PK {
		if i > 0 {
			g.w(", ")
		}
		g.w(g.col(a, k))
	}
	g.w(" for update of ", a, "), ")
}

// whereLocked joins the written rows to the locked ones by key, and applies the filter again: a view's
// primary_key_columns directive need not be unique, and the key alone would then reach rows the filter does
// not select.
func (g *gen) whereLocked(m *Mutation, a string) {
	join := make([]Join, len(m.PK))
	for i, k := range m.PK {
		join[i] = Join{Child: k, Parent: k}
	}
	g.where(a, a+"_locked", join, m.Filter)
}
