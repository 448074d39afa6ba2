package sqlgen

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

// insertObjects writes a nested insert: one data-modifying CTE per object, each parent before the rows that
// reference it (a CTE sees only those before it, and a child's insert reads its parent's new key from the
// parent's RETURNING), then the affected CTE as the union of the top-level objects' rows. Postgres runs every
// CTE of the statement, so the whole tree is written, or nothing if one insert fails (a constraint, a policy,
// a privilege); foreign keys are checked at the end of the statement, when every row exists.
func (g *gen) insertObjects(m *Mutation, a string) {
	tops := make([]string, len(m.Objects))
	var written []string
	for i, o := range m.Objects {
		tops[i] = g.insertObject(o, a, nil, m.Returning, m.Returning == nil, &written)
	}
	// Postgres runs a CTE when the query first reads it, and those no one reads at the end, last first: read
	// in the order written, the inserts run in the request's order, and serial keys follow it. Materialized,
	// or the planner drops the count nobody uses and the reads with it.
	g.w(a, "_written as materialized (select count(*) from (")
	for i, w := range written {
		if i > 0 {
			g.w(" union all ")
		}
		g.w("select from ", w)
	}
	g.w(") w), ")
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
}

// insertObject writes the CTEs inserting o (its new parents, o, its children), adds their names to written
// in that order, and returns the name of o's. The insert's target alias is a; fills are the foreign key
// columns o's parent link fills; need lists the columns o's rows must return for the caller, and whole
// returns every column instead.
func (g *gen) insertObject(o *InsertObject, a string, fills []fill, need []string, whole bool, written *[]string) string {
	for _, p := range o.Parents {
		pc := g.insertObject(p.Object, a, nil, parentColumns(p.Join), false, written)
		for _, j := range p.Join {
			fills = append(fills, fill{column: j.Child, cte: pc, parentColumn: j.Parent})
		}
	}
	for _, c := range o.Children {
		need = appendNew(need, parentColumns(c.Join)...)
	}
	name := g.alias()
	*written = append(*written, name)
	g.w(name, " as (insert into ", o.Relation.sql(), " as ", a)
	if len(o.Columns)+len(fills) == 0 {
		g.w(" default values")
	} else {
		g.w(" (")
		g.idents(o.Columns)
		for i, f := range fills {
			if i > 0 || len(o.Columns) > 0 {
				g.w(", ")
			}
			g.w(Ident(f.column))
		}
		g.w(") values (")
		for i, v := range o.Values {
			if i > 0 {
				g.w(", ")
			}
			g.mutationValue(v)
		}
		for i, f := range fills {
			if i > 0 || len(o.Values) > 0 {
				g.w(", ")
			}
			g.w("(select ", Ident(f.parentColumn), " from ", f.cte, ")")
		}
		g.w(")")
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
	for _, c := range o.Children {
		var cf []fill
		for _, j := range c.Join {
			cf = append(cf, fill{column: j.Child, cte: name, parentColumn: j.Parent})
		}
		g.insertObject(c.Object, a, cf, nil, false, written)
	}
	return name
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
