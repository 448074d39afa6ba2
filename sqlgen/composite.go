package sqlgen

// CompositeValue reads the fields of a composite-type column (the composite feature) as an object; a value
// whose fields are all NULL reads as null, as a function's all-NULL row does.
type CompositeValue struct {
	Column string
	Node   *Node
}

func (g *gen) composite(c *CompositeValue, alias string) {
	ref := g.col(alias, c.Column)
	g.w("case when ", ref, " is null then 'null' else ")
	g.node(c.Node, "("+ref+")")
	g.w(" end")
}

// OnComposite applies X to the fields of a composite-type column instead of the record's columns.
type OnComposite struct {
	Column string
	X      Expr
}

func (e OnComposite) write(g *gen, alias string) { e.X.write(g, "("+g.col(alias, e.Column)+")") }
