package sqlgen

// joinedRows are the to-one records joined (left join lateral) to the rows of an alias rather than read by a
// subquery per row: Postgres may hash or memoize a join's lookups where rows share records (a page of 20
// items of 20 categories reads the categories once), a subquery per row it cannot (bench/findings.md, "To-one
// records joined to the page"). A record joins its own to-one records after its relation; a page's rows come
// from a limited sub-select that returns the columns the page's select list reads, which col notes in columns
// (noteColumns), and no others, so that a page of wide rows reads no more.
type joinedRows struct {
	columns []string
	read    map[string]bool // the names in columns; nil where they are not noted (a record's own relation)
	// joins are the lateral joins, written after the rows' from item.
	joins []string
	// left is how many more records the join problem these rows belong to may join (maxJoined).
	left *int
}

// maxJoined bounds the records joined in one join problem (a page or a record read by a subquery, with the
// records joined to it and to those): what Postgres spends planning grows with every outer join it may
// reorder (a page of 20 rows with one joined record 0.10 ms against a subquery's 0.07, with four 0.37 against
// 0.15, with eight 4-13 against 0.3-0.4), and a prepared statement is planned again when its tables'
// statistics change. The others are read by subqueries.
const maxJoined = 3

// joinTo starts noting the to-one records joined to the rows of alias a, within the join problem whose
// allowance is left (a new one when nil); delete g.joined[a] when the text that may read them is written.
func (g *gen) joinTo(a string, left *int) *joinedRows {
	if left == nil {
		left = new(int)
		*left = maxJoined
	}
	j := &joinedRows{left: left}
	if g.joined == nil {
		g.joined = map[string]*joinedRows{}
	}
	g.joined[a] = j
	return j
}

// joinedNode writes node n of the rows of alias a and returns the records it joins to them, within the join
// problem whose allowance is left (a new one when nil).
func (g *gen) joinedNode(n *Node, a string, left *int) *joinedRows {
	j := g.joinTo(a, left)
	g.node(n, a)
	delete(g.joined, a)
	return j
}

// noteColumns makes col note the columns read of these rows, which a page's sub-select returns.
func (j *joinedRows) noteColumns() { j.read = map[string]bool{} }

// write writes the lateral joins after the rows' from item.
func (j *joinedRows) write(g *gen) {
	for _, join := range j.joins {
		g.w(join)
	}
}

// takes says whether record r of these rows is joined to them, and counts it against the allowance.
func (j *joinedRows) takes(r *Record) bool {
	if j == nil || !joinable(r) || *j.left == 0 {
		return false
	}
	*j.left--
	return true
}

// joinable says whether record r may be joined to the rows it belongs to: a relation read at a unique key, so
// that the join never repeats a row.
func joinable(r *Record) bool {
	return r.Joinable && r.Source.Relation != nil && len(r.Join) > 0 && !r.SkipNullRow
}

// joinsToOne says whether the page of c whose nodes are n joins its records (joinedRows): n selects a joinable
// record, and nothing that takes the whole row (a computed field's row argument), which the sub-select's
// anonymous rows would not give; and no ordering element reads related rows, which the sub-select and the
// page would then both read.
func joinsToOne(n *Node, c *Connection) bool {
	for _, o := range c.Order {
		if o.Related != nil {
			return false
		}
	}
	found := false
	for _, f := range n.Fields {
		switch {
		case f.Scalar != nil && f.Scalar.RowArg,
			f.Record != nil && f.Record.Source.Call != nil && f.Record.Source.Call.RowArg,
			f.Connection != nil && f.Connection.Source.Call != nil && f.Connection.Source.Call.RowArg:
			return false
		case f.Record != nil && joinable(f.Record):
			found = true
		}
	}
	return found
}

// join adds the lateral join of record r to the rows of parent and returns its alias, whose column one is r's
// JSON text, NULL when the row has no such record.
func (j *joinedRows) join(g *gen, r *Record, parent string) string {
	a := g.alias()
	j.joins = append(j.joins, g.capture(func() {
		g.w(" left join lateral (select ")
		joined := g.joinedNode(r.Node, a, j.left)
		g.w(" as one")
		g.recordFrom(r, a, parent, joined)
		g.w(") ", a, " on true")
	}))
	return a
}
