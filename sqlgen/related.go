package sqlgen

// The conditions, sort values and distinct rows below look at rows of other relations through subqueries of the
// one statement, so they run as the caller's role and row level security hides from them what it hides from
// a direct read of those relations.

// Quantifier says how a Related condition looks at the related rows.
type Quantifier int

// The quantifiers: some related row matches, every related row matches, no related row matches.
const (
	Some Quantifier = iota
	Every
	None
)

// Related is a condition on the rows of another relation joined to the current record (Join.Child is a column
// of Relation, Join.Parent one of the current record). A nil Filter matches every related row.
type Related struct {
	Relation   Relation
	Join       []Join
	Filter     Expr
	Quantifier Quantifier
}

func (e Related) write(g *gen, alias string) {
	sub := g.alias()
	filter := e.Filter
	var extra []func()
	if e.Quantifier == Every {
		// every related row matches = no related row fails to match; NULL (unknown) is not a match
		filter = nil
		extra = append(extra, func() {
			g.w("not coalesce(")
			if e.Filter != nil {
				e.Filter.write(g, sub)
			} else {
				g.w("true")
			}
			g.w(", false)")
		})
	}
	if e.Quantifier == Some {
		g.w("(exists (select 1 from ")
	} else {
		g.w("(not exists (select 1 from ")
	}
	g.w(e.Relation.sql(), " ", sub)
	g.where(sub, alias, e.Join, filter, extra...)
	g.w("))")
}

// RelatedValue is a sort value read from related rows: a column (or a further RelatedValue) of the one row a
// to-one relationship leads to, or an aggregate over the rows of a to-many relationship.
type RelatedValue struct {
	Relation Relation
	Join     []Join
	// Aggregate is count, sum, avg, min or max for a to-many relationship, empty for a to-one.
	Aggregate string
	// Column is the related column read or aggregated (none for count); Next reads through another to-one or
	// to-many relationship of the related row instead.
	Column string
	Next   *RelatedValue
}

// orderRef is the SQL of an ordering element's value over alias.
func (g *gen) orderRef(o Order, alias string) string {
	if o.Related == nil {
		return g.col(alias, o.Column)
	}
	return g.capture(func() { g.relatedValue(o.Related, alias) })
}

func (g *gen) relatedValue(v *RelatedValue, alias string) {
	sub := g.alias()
	g.w("(select ")
	switch {
	case v.Aggregate == "count":
		g.w("count(*)")
	case v.Aggregate == "avg":
		g.w("avg((", g.col(sub, v.Column), ")::numeric)")
	case v.Aggregate != "":
		g.w(v.Aggregate, "(", g.col(sub, v.Column), ")")
	case v.Next != nil:
		g.relatedValue(v.Next, sub)
	default:
		g.w(g.col(sub, v.Column))
	}
	g.w(" from ", v.Relation.sql(), " ", sub)
	g.where(sub, alias, v.Join, nil)
	g.w(")")
}

// Distinct keeps one row per distinct value of Columns: the first in the connection's order. PK identifies rows
// of the source.
type Distinct struct {
	Columns []string
	PK      []string
}

// distinct writes: the row is the first of its group, as (pk) in (select distinct on (columns) pk ...) over the
// connection's source, join and filter, so that paging, cursors, counts and aggregates work on the distinct
// rows unchanged.
func (g *gen) distinct(c *Connection, alias, parent string) {
	sub := g.alias()
	g.w("(")
	g.columnList(alias, c.Distinct.PK)
	g.w(") in (select distinct on (")
	g.columnList(sub, c.Distinct.Columns)
	g.w(") ")
	g.columnList(sub, c.Distinct.PK)
	g.w(" from ")
	g.from(c.Source, sub, parent)
	g.where(sub, parent, c.Join, c.Filter)
	g.w(" order by ")
	g.columnList(sub, c.Distinct.Columns)
	g.w(", ")
	g.orderBy(c.Order, sub, false, false)
	g.w(")")
}

func (g *gen) columnList(alias string, cols []string) {
	for i, c := range cols {
		if i > 0 {
			g.w(", ")
		}
		g.w(g.col(alias, c))
	}
}

// connectionWhere writes the connection's conditions over alias: the join, the filter, distinct and extra.
func (g *gen) connectionWhere(c *Connection, alias, parent string, extra ...func()) {
	if c.Distinct != nil {
		extra = append([]func(){func() { g.distinct(c, alias, parent) }}, extra...)
	}
	g.where(alias, parent, c.Join, c.Filter, extra...)
}
