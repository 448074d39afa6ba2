package sqlgen

// joinedPage is a page whose rows come from a limited sub-select, to which every to-one record its nodes select
// is joined (left join lateral) rather than read by a subquery per row: Postgres memoizes a join's lookups where
// rows share a record (20 posts of 3 blogs: 3 index probes, not 20), a subquery per row it cannot
// (bench/findings.md, "To-one records joined to the page"). The sub-select returns the columns the page's
// select list reads, which col notes in columns, and no others, so that a page of wide rows reads no more.
type joinedPage struct {
	columns []string
	read    map[string]bool // the names in columns
	// joins are the lateral joins, written after the sub-select.
	joins []string
}

// joinable says whether record r may be joined to a page: a relation read at a unique key, so that the join
// never repeats a page's row.
func joinable(r *Record) bool {
	return r.Unique && r.Source.Relation != nil && len(r.Join) > 0 && !r.SkipNullRow
}

// joinsToOne says whether the page of c whose nodes are n is written as a joinedPage: n selects a joinable
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

// join adds the lateral join of record r to the page's rows (parent) and returns its alias, whose column one
// is r's JSON text, NULL when the row has no such record.
func (j *joinedPage) join(g *gen, r *Record, parent string) string {
	a := g.alias()
	j.joins = append(j.joins, g.capture(func() {
		g.w(" left join lateral (select ")
		g.node(r.Node, a)
		g.w(" as one")
		g.recordFrom(r, a, parent)
		g.w(") ", a, " on true")
	}))
	return a
}
