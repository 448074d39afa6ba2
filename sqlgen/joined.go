package sqlgen

// joinedRows are the to-one records joined (left join lateral) to the rows of an alias rather than read by a
// subquery per row: Postgres memoizes or hashes a join's lookups where rows share a record (20 posts of 3
// blogs: 3 index probes, not 20), a subquery per row it cannot (bench/findings.md, "To-one records joined to
// the page"). A record joins its own to-one records after its relation; a page's rows come from a limited
// sub-select that returns the columns the page's select list reads, which col notes in columns, and no others,
// so that a page of wide rows reads no more.
type joinedRows struct {
	columns []string
	read    map[string]bool // the names in columns
	// joins are the lateral joins, written after the rows' from item.
	joins []string
}

// joinTo starts noting the to-one records joined to the rows of alias a and the columns read of them; delete
// g.joined[a] when the text that may read them is written.
func (g *gen) joinTo(a string) *joinedRows {
	j := &joinedRows{read: map[string]bool{}}
	if g.joined == nil {
		g.joined = map[string]*joinedRows{}
	}
	g.joined[a] = j
	return j
}

// joinedNode writes node n of the rows of alias a and returns the records it joins to them.
func (g *gen) joinedNode(n *Node, a string) *joinedRows {
	j := g.joinTo(a)
	g.node(n, a)
	delete(g.joined, a)
	return j
}

// write writes the lateral joins after the rows' from item.
func (j *joinedRows) write(g *gen) {
	for _, join := range j.joins {
		g.w(join)
	}
}

// joinable says whether record r may be joined to the rows it belongs to: a relation read at a unique key, so
// that the join never repeats a row.
func joinable(r *Record) bool {
	return r.Unique && r.Source.Relation != nil && len(r.Join) > 0 && !r.SkipNullRow
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
		joined := g.joinedNode(r.Node, a)
		g.w(" as one")
		g.recordFrom(r, a, parent, joined)
		g.w(") ", a, " on true")
	}))
	return a
}
