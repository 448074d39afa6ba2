package sqlgen

// OnConflict turns an insert into an upsert: a row that conflicts with an existing one on Target's unique key
// updates that row's Update columns from the inserted values, where the existing row matches Filter.
type OnConflict struct {
	// Target is the unique key's columns, which Postgres infers the index from: unlike ON CONSTRAINT, this
	// also finds a unique index that is no constraint.
	Target []string
	// Update lists the columns set; empty leaves a conflicting row as it is (DO NOTHING).
	Update []string
	Filter Expr
}

// onConflict writes the ON CONFLICT clause of an insert whose target alias is a.
func (g *gen) onConflict(c *OnConflict, a string) {
	if c == nil {
		return
	}
	g.w(" on conflict (")
	g.idents(c.Target)
	if len(c.Update) == 0 {
		g.w(") do nothing")
		return
	}
	g.w(") do update set ")
	for i, u := range c.Update {
		if i > 0 {
			g.w(", ")
		}
		g.w(Ident(u), " = excluded.", Ident(u))
	}
	if c.Filter != nil {
		g.w(" where ")
		c.Filter.write(g, a)
	}
}
