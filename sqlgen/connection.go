package sqlgen

import "strconv"

// connection writes a connection as a scalar subquery yielding its JSON text. The page is a CTE holding, per
// row, the rendered node (or the whole edge), its cursor and its order keys; edges and pageInfo read it, while
// hasNextPage, hasPreviousPage, totalCount and aggregates look at the filtered set directly and only when
// selected.
func (g *gen) connection(c *Connection, parent string) {
	a := g.alias()
	page := a + "_page"
	var edges *Edges
	edgesFields := 0
	edgeCursor, pageInfoCursor := false, false
	for _, f := range c.Fields {
		if f.Edges != nil {
			edges = f.Edges
			edgesFields++
			for _, ef := range f.Edges.Fields {
				edgeCursor = edgeCursor || ef.Cursor
			}
		}
		for _, p := range f.PageInfo {
			pageInfoCursor = pageInfoCursor || p.Kind == PageStartCursor || p.Kind == PageEndCursor
		}
	}
	var node *Node
	if edges != nil {
		for _, ef := range edges.Fields {
			if ef.Node != nil {
				node = ef.Node
			}
		}
	}
	// The one edges field of a connection is written whole in the page, where its node is: the list then
	// gathers the edges as they are, instead of copying every node into its edge once more (two concatenations
	// a row, each copying the node's text: 4% of Q5's statement, a page of pages, counted). Not where a cursor
	// is read by both the edges and pageInfo, which would encode it twice.
	folded := edgesFields == 1 && !(edgeCursor && pageInfoCursor)
	needCursor := pageInfoCursor || edgeCursor && !folded

	// The page: its select list first, which says what a joined page's sub-select must return.
	var joined *joinedRows
	if node != nil && joinsToOne(node, c) {
		joined = g.joinTo(a, nil)
		joined.noteColumns()
	}
	var foldedEdge *Edges
	if folded {
		foldedEdge = edges
	}
	selectList := g.capture(func() { g.pageSelectList(c, node, foldedEdge, a, needCursor) })
	delete(g.joined, a)
	g.w("with ", page, " as (select ", selectList, " from ")
	if joined != nil {
		g.w("(select ")
		g.columnList(a, joined.columns)
		g.w(" from ")
	}
	g.from(c.Source, a, parent)
	g.connectionWhere(c, a, parent, g.keysetCondition(c, a, false)...)
	g.w(" order by ")
	g.orderBy(c.Order, a, c.Backward, false)
	g.w(" limit ", strconv.Itoa(c.Limit))
	if c.Offset > 0 && !c.Backward {
		g.w(" offset ", strconv.Itoa(c.Offset))
	}
	if joined != nil {
		g.w(") ", a)
		joined.write(g)
	}
	g.w(") select ")

	keys := make([]string, len(c.Fields))
	values := make([]func(), len(c.Fields))
	for i, f := range c.Fields {
		keys[i] = f.Key
		values[i] = func() {
			switch {
			case f.Edges != nil:
				g.edges(f.Edges, c, page, folded)
			case f.PageInfo != nil:
				g.pageInfo(f.PageInfo, c, a, parent, page)
			case f.TotalCount:
				g.jsonPlain(func() {
					g.w("select count(*) from ")
					sub := g.alias()
					g.from(c.Source, sub, parent)
					g.connectionWhere(c, sub, parent)
				})
			case f.Aggregate != nil:
				g.aggregate(f.Aggregate, c, parent)
			default:
				g.jsonString(f.Typename)
			}
		}
	}
	g.object(keys, values)
}

// pageSelectList writes the page's columns over its rows as a: the rendered node (n, or none), or the whole edge
// where the connection's edges are folded into the page (edge), the cursor when needed, and the order keys.
func (g *gen) pageSelectList(c *Connection, n *Node, edge *Edges, a string, needCursor bool) {
	switch {
	case edge != nil:
		g.edge(edge, func() { g.node(n, a) }, func() { g.cursor(c, a) })
	case n != nil:
		g.node(n, a)
	default:
		g.w("null::text")
	}
	g.w(" as __node, ")
	if needCursor {
		g.cursor(c, a)
	} else {
		g.w("null::text")
	}
	g.w(" as __cursor")
	for i, o := range c.Order {
		g.w(", ", g.orderRef(o, a), " as __o", strconv.Itoa(i))
	}
}

// cursor writes the cursor of a row of c as a: its order keys, encoded.
func (g *gen) cursor(c *Connection, a string) {
	g.encoded(func() {
		for i, o := range c.Order {
			if i > 0 {
				g.w(", ")
			}
			g.w(g.orderRef(o, a))
		}
	})
}

// orderBy writes the ordering over alias (or over the page's __o columns when page is set), reversed for
// backward pagination.
func (g *gen) orderBy(order []Order, alias string, reverse, pageColumns bool) {
	for i, o := range order {
		if i > 0 {
			g.w(", ")
		}
		if pageColumns {
			g.w(alias, ".__o", strconv.Itoa(i))
		} else {
			g.w(g.orderRef(o, alias))
		}
		desc, nullsFirst := o.Desc, o.NullsFirst
		if reverse {
			desc, nullsFirst = !desc, !nullsFirst
		}
		if desc {
			g.w(" desc")
		} else {
			g.w(" asc")
		}
		if o.NotNull {
			continue
		}
		if nullsFirst {
			g.w(" nulls first")
		} else {
			g.w(" nulls last")
		}
	}
}

// edges writes the list of a page's edges: the page's __node as it is where the page holds whole edges
// (folded), else each edge made of the page's node and cursor.
func (g *gen) edges(e *Edges, c *Connection, page string, folded bool) {
	element := func() { g.w("p.__node") }
	if !folded {
		element = func() { g.edge(e, func() { g.w("p.__node") }, func() { g.w("p.__cursor") }) }
	}
	g.list(element,
		func() { g.orderBy(c.Order, "p", false, true) },
		func() { g.w("from ", page, " p") })
}

// edge writes an edge's object, its node and cursor written by node and cursor.
func (g *gen) edge(e *Edges, node, cursor func()) {
	keys := make([]string, len(e.Fields))
	values := make([]func(), len(e.Fields))
	for i, f := range e.Fields {
		keys[i] = f.Key
		values[i] = func() {
			switch {
			case f.Cursor:
				g.jsonQuoted(cursor)
			case f.Node != nil:
				node()
			default:
				g.jsonString(f.Typename)
			}
		}
	}
	g.object(keys, values)
}

func (g *gen) pageInfo(fields []PageInfoField, c *Connection, a, parent, page string) {
	keys := make([]string, len(fields))
	values := make([]func(), len(fields))
	for i, f := range fields {
		keys[i] = f.Key
		values[i] = func() {
			switch f.Kind {
			case PageStartCursor, PageEndCursor:
				g.jsonQuoted(func() {
					g.w("select p.__cursor from ", page, " p order by ")
					g.orderBy(c.Order, "p", f.Kind == PageEndCursor, true)
					g.w(" limit 1")
				})
			case PageHasNext:
				if c.Backward {
					g.jsonPlain(func() { g.beyondCursor(c, parent, page) })
				} else {
					g.jsonPlain(func() { g.moreThanLimit(c, parent) })
				}
			case PageHasPrevious:
				if c.Backward {
					g.jsonPlain(func() { g.moreThanLimit(c, parent) })
				} else {
					g.jsonPlain(func() { g.beyondCursor(c, parent, page) })
				}
			default:
				g.jsonString(f.Typename)
			}
		}
	}
	g.object(keys, values)
}

// moreThanLimit: in the paging direction, do more rows follow the cursor (and offset) than the page holds?
func (g *gen) moreThanLimit(c *Connection, parent string) {
	sub := g.alias()
	g.w("(select count(*) > ", strconv.Itoa(c.Limit), " from (select 1 from ")
	g.from(c.Source, sub, parent)
	g.connectionWhere(c, sub, parent, g.keysetCondition(c, sub, false)...)
	g.w(" order by ")
	g.orderBy(c.Order, sub, c.Backward, false)
	g.w(" limit ", strconv.Itoa(c.Limit+1))
	if c.Offset > 0 && !c.Backward {
		g.w(" offset ", strconv.Itoa(c.Offset))
	}
	g.w(") x)")
}

// beyondCursor: against the paging direction, is some row of the filtered set outside the page? With a
// non-empty page that holds exactly when rows were skipped by offset or lie at or behind the cursor.
func (g *gen) beyondCursor(c *Connection, parent, page string) {
	if len(c.Cursor) == 0 && (c.Offset == 0 || c.Backward) {
		g.w("false")
		return
	}
	g.w("(exists (select 1 from ", page, ") and ")
	if c.Offset > 0 && !c.Backward {
		g.w("true)")
		return
	}
	sub := g.alias()
	g.w("exists (select 1 from ")
	g.from(c.Source, sub, parent)
	g.connectionWhere(c, sub, parent, g.keysetCondition(c, sub, true)...)
	g.w("))")
}

// keysetCondition is the condition "strictly after the cursor in the paging direction" (or, negated, "not
// after it"), or nothing without a cursor.
func (g *gen) keysetCondition(c *Connection, alias string, negate bool) []func() {
	if len(c.Cursor) == 0 {
		return nil
	}
	return []func(){func() {
		if negate {
			g.w("not coalesce(")
		}
		g.after(c, alias, 0)
		if negate {
			g.w(", false)")
		}
	}}
}

// after writes: the row sorts strictly after the cursor, looking at order elements from i on, as pg_graphql's
// pagination clause decides it: equal values (NULL equal to NULL) defer to the next element, full equality is
// not after, a non-NULL row is after a NULL cursor value when NULLs come first, and a NULL row is never after a
// non-NULL cursor value, even where NULLs sort last. That last rule skips such rows on a page next to the
// cursor; drop-in clients get pg_graphql's pages, and c.ExactPaging counts them where they sort.
func (g *gen) after(c *Connection, alias string, i int) {
	if i >= len(c.Cursor) || i >= len(c.Order) {
		g.w("false")
		return
	}
	o := c.Order[i]
	v := c.Cursor[i]
	desc, nullsFirst := o.Desc, o.NullsFirst
	if c.Backward {
		desc, nullsFirst = !desc, !nullsFirst
	}
	ref := g.orderRef(o, alias)
	op := " > "
	if desc {
		op = " < "
	}
	g.w("(")
	if v == nil {
		// The cursor row's value is NULL: non-NULL rows are after it only when NULLs come first.
		if nullsFirst {
			g.w(ref, " is not null or ")
		}
		g.w("(", ref, " is null and ")
		g.after(c, alias, i+1)
		g.w("))")
		return
	}
	g.w(ref, op)
	g.value(v, o.Cast)
	if c.ExactPaging && !nullsFirst && !o.NotNull {
		g.w(" or ", ref, " is null")
	}
	g.w(" or (", ref, " = ")
	g.value(v, o.Cast)
	g.w(" and ")
	g.after(c, alias, i+1)
	g.w("))")
}

func (g *gen) aggregate(fields []AggregateField, c *Connection, parent string) {
	sub := g.alias()
	g.w("(select ")
	keys := make([]string, len(fields))
	values := make([]func(), len(fields))
	for i, f := range fields {
		keys[i] = f.Key
		values[i] = func() {
			switch {
			case f.Count:
				g.jsonPlain(func() { g.w("count(*)") })
			case f.Group != "":
				ks := make([]string, len(f.Columns))
				vs := make([]func(), len(f.Columns))
				for j, ac := range f.Columns {
					ks[j] = ac.Key
					vs[j] = func() {
						if ac.Typename != "" {
							g.jsonString(ac.Typename)
							return
						}
						ref := g.col(sub, ac.Column)
						g.jsonValue(OutPlain, func() {
							switch {
							case ac.Boolean && f.Group == "min":
								g.w("bool_and(", ref, ")")
							case ac.Boolean && f.Group == "max":
								g.w("bool_or(", ref, ")")
							case f.Group == "avg":
								g.w("avg((", ref, ")::numeric)")
							default:
								g.w(f.Group, "(", ref, ")")
							}
						})
					}
				}
				g.object(ks, vs)
			default:
				g.jsonString(f.Typename)
			}
		}
	}
	g.object(keys, values)
	g.w(" from ")
	g.from(c.Source, sub, parent)
	g.connectionWhere(c, sub, parent)
	g.w(")")
}
