package sqlgen

import "slices"

// InsertObject is one row of a nested insert (the nestedInsert extension) with the related rows written
// with it.
type InsertObject struct {
	Relation Relation
	// Columns and Values are the columns the object sets; the rest take their defaults, and the foreign key
	// columns a link fills are added.
	Columns []string
	Values  []Value
	// Parents are new rows whose keys fill this object's foreign key columns.
	Parents []InsertLink
	// Children are new rows whose foreign key columns take this object's key.
	Children []InsertLink
}

// InsertLink is a related object and how the two join: child.Child = parent.Parent.
type InsertLink struct {
	Join   []Join
	Object *InsertObject
}

// fill is a foreign key column of a row taken from the key a parent's insert returned.
type fill struct {
	column, cte, parentColumn string
}

// insertCTE is one data-modifying CTE of a nested insert: its name and the CTEs of the parents whose new keys
// it reads.
type insertCTE struct {
	name  string
	reads []string
}

// insertObjects writes a nested insert: one data-modifying CTE per object, or per run of sibling objects
// without relations of their own, each parent before the rows that reference it (a CTE sees only those before
// it, and a child's insert reads its parent's new key from the parent's RETURNING), then the affected CTE as
// the union of the top-level objects' rows. Postgres runs every CTE of the statement, so the whole tree is
// written, or nothing if one insert fails (a constraint, a policy, a privilege); foreign keys are checked at
// the end of the statement, when every row exists. It reports whether it wrote the written CTE, which the
// statement must then select from.
func (g *gen) insertObjects(m *Mutation, a string) (counted bool) {
	tops := make([]string, len(m.Objects))
	var written []insertCTE
	for i, o := range m.Objects {
		tops[i] = g.insertObject(o, a, nil, m.Returning, m.Returning == nil, &written)
	}
	// The answer reads the top-level rows only when it selects them or their count.
	answerReads := slices.ContainsFunc(m.Fields, func(f MutationField) bool { return f.AffectedCount || f.Records != nil })
	var read []string
	if answerReads {
		read = tops
	}
	if !inWrittenOrder(written, read) {
		// Read in the order written, the inserts run in the request's order, and serial keys follow it.
		// Materialized, or the planner drops the count nobody uses and the reads with it.
		counted = true
		g.w(a, "_written as materialized (select count(*) from (")
		for i, w := range written {
			if i > 0 {
				g.w(" union all ")
			}
			g.w("select from ", w.name)
		}
		g.w(") w), ")
	}
	g.w(a, "_affected as (")
	for i, t := range tops {
		if i > 0 {
			g.w(" union all ")
		}
		g.w("select ")
		if m.Returning == nil {
			g.w("*")
		} else {
			g.idents(m.Returning)
		}
		g.w(" from ", t)
	}
	return counted
}

// inWrittenOrder reports whether Postgres runs the inserts in the order written without a query that reads
// them so. It runs a CTE when the statement first reads it: the answer reads the top-level rows in order (read),
// and the CTEs no one reads run at the end, last first. A CTE read only by another (a new parent, a child with
// children of its own) runs within the insert that reads it, after that insert's row may have taken its serial
// key, so an order with one is never counted on. Leaving out the count saved Postgres 4% of the instructions of
// a post inserted with two comments (bench/findings.md, "Nested inserts in Postgres' instructions").
func inWrittenOrder(written []insertCTE, read []string) bool {
	isRead := make(map[string]bool, len(written))
	for _, w := range written {
		for _, r := range w.reads {
			isRead[r] = true
		}
	}
	for _, r := range read {
		isRead[r] = true
	}
	order := append([]string(nil), read...)
	for i := len(written) - 1; i >= 0; i-- {
		if !isRead[written[i].name] {
			order = append(order, written[i].name)
		}
	}
	return slices.EqualFunc(order, written, func(name string, w insertCTE) bool { return name == w.name })
}

// insertObject writes the CTEs inserting o (its new parents, o, its children), adds them to written in that
// order, and returns the name of o's. The insert's target alias is a; fills are the foreign key columns o's
// parent link fills; need lists the columns o's rows must return for the caller, and whole returns every
// column instead.
func (g *gen) insertObject(o *InsertObject, a string, fills []fill, need []string, whole bool, written *[]insertCTE) string {
	for _, p := range o.Parents {
		pc := g.insertObject(p.Object, a, nil, parentColumns(p.Join), false, written)
		for _, j := range p.Join {
			fills = append(fills, fill{column: j.Child, cte: pc, parentColumn: j.Parent})
		}
	}
	for _, c := range o.Children {
		need = appendNew(need, parentColumns(c.Join)...)
	}
	name := g.insertCTE(o.Relation, a, o.Columns, [][]Value{o.Values}, fills, need, whole, written)
	for i := 0; i < len(o.Children); {
		c := o.Children[i]
		var cf []fill
		for _, j := range c.Join {
			cf = append(cf, fill{column: j.Child, cte: name, parentColumn: j.Parent})
		}
		// A run of children of one link without relations of their own is one insert of several rows:
		// Postgres starts each insert's plan (its policies, indexes, foreign keys) anew, which cost it 9% of the
		// instructions of a post inserted with two comments.
		end := i + 1
		for end < len(o.Children) && leaf(c) && leaf(o.Children[end]) && o.Children[end].Object.Relation == c.Object.Relation &&
			slices.Equal(o.Children[end].Join, c.Join) {
			end++
		}
		if end == i+1 {
			g.insertObject(c.Object, a, cf, nil, false, written)
		} else {
			cols, rows := rowsOf(o.Children[i:end])
			g.insertCTE(c.Object.Relation, a, cols, rows, cf, nil, false, written)
		}
		i = end
	}
	return name
}

// insertCTE writes one CTE inserting rows (one value per column of cols) into rel under alias a, each row's
// fills taken from its parents' CTEs, returning need (every column when whole), adds it to written and returns
// its name.
func (g *gen) insertCTE(rel Relation, a string, cols []string, rows [][]Value, fills []fill, need []string, whole bool, written *[]insertCTE) string {
	name := g.alias()
	w := insertCTE{name: name}
	for _, f := range fills {
		w.reads = append(w.reads, f.cte)
	}
	*written = append(*written, w)
	g.w(name, " as (insert into ", rel.sql(), " as ", a)
	if len(cols)+len(fills) == 0 {
		g.w(" default values")
	} else {
		g.w(" (")
		g.idents(cols)
		for i, f := range fills {
			if i > 0 || len(cols) > 0 {
				g.w(", ")
			}
			g.w(Ident(f.column))
		}
		g.w(") values ")
		for r, row := range rows {
			if r > 0 {
				g.w(", ")
			}
			g.w("(")
			for i, v := range row {
				if i > 0 {
					g.w(", ")
				}
				g.mutationValue(v)
			}
			for i, f := range fills {
				if i > 0 || len(row) > 0 {
					g.w(", ")
				}
				g.w("(select ", Ident(f.parentColumn), " from ", f.cte, ")")
			}
			g.w(")")
		}
	}
	switch {
	case whole:
		g.returning(a, nil)
	case len(need) > 0:
		g.returning(a, need)
	default:
		g.w(" returning true") // to be read in order
	}
	g.w("), ")
	return name
}

// leaf reports whether a linked object has no related rows of its own to write.
func leaf(l InsertLink) bool { return len(l.Object.Parents) == 0 && len(l.Object.Children) == 0 }

// rowsOf is the columns that any of the objects set, in the order first met, and each object's row of values
// for them: DEFAULT where it sets no such column, as a plain insert of several objects writes it. The columns'
// positions are looked up, not searched: a run may hold a thousand objects of many columns.
func rowsOf(links []InsertLink) ([]string, [][]Value) {
	var cols []string
	at := map[string]int{}
	for _, l := range links {
		for _, c := range l.Object.Columns {
			if _, ok := at[c]; !ok {
				at[c] = len(cols)
				cols = append(cols, c)
			}
		}
	}
	rows := make([][]Value, len(links))
	for r, l := range links {
		row := make([]Value, len(cols))
		for i := range row {
			row[i] = Value{Default: true}
		}
		for k, c := range l.Object.Columns {
			row[at[c]] = l.Object.Values[k]
		}
		rows[r] = row
	}
	return cols, rows
}

func parentColumns(join []Join) []string {
	cols := make([]string, len(join))
	for i, j := range join {
		cols[i] = j.Parent
	}
	return cols
}

// appendNew returns a copy of cols with the columns of more it lacks appended.
func appendNew(cols []string, more ...string) []string {
	out := append([]string(nil), cols...)
	for _, m := range more {
		found := false
		for _, c := range out {
			found = found || c == m
		}
		if !found {
			out = append(out, m)
		}
	}
	return out
}
