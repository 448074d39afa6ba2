package sqlgen

import "strings"

// Expr is a boolean condition on the current record.
type Expr interface {
	write(g *gen, alias string)
}

// And is true when all its parts are; an empty And is true.
type And []Expr

// Or is true when any part is; an empty Or is false.
type Or []Expr

// Not negates an expression.
type Not struct{ X Expr }

// Compare compares a column with a value: Op is one of = <> < <= > >= like ilike ~ ~* ^@ @> <@ &&.
type Compare struct {
	Column string
	Op     string
	Value  *string // nil compares with SQL NULL (which matches nothing)
	Cast   string
}

// In is column = any(values).
type In struct {
	Column string
	Values []*string
	Cast   string
}

// ArrayCompare compares an array column with a list value: Op is = @> <@ &&.
type ArrayCompare struct {
	Column string
	Op     string
	Values []*string
	Cast   string // the array column's type, e.g. integer[]
}

// IsNull is column IS [NOT] NULL.
type IsNull struct {
	Column string
	Negate bool
}

func (e And) write(g *gen, alias string) { g.junction(e, " and ", "true", alias) }

func (e Or) write(g *gen, alias string) { g.junction(e, " or ", "false", alias) }

// junction writes parts joined by op, or empty (the identity of op) when there are none.
func (g *gen) junction(parts []Expr, op, empty, alias string) {
	if len(parts) == 0 {
		g.w(empty)
		return
	}
	g.w("(")
	for i, x := range parts {
		if i > 0 {
			g.w(op)
		}
		x.write(g, alias)
	}
	g.w(")")
}

func (e Not) write(g *gen, alias string) {
	g.w("(not ")
	e.X.write(g, alias)
	g.w(")")
}

func (e Compare) write(g *gen, alias string) {
	g.w("(", g.col(alias, e.Column), " ", e.Op, " ")
	g.value(e.Value, e.Cast)
	g.w(")")
}

func (e In) write(g *gen, alias string) {
	g.w("(", g.col(alias, e.Column), " = any(")
	g.array(e.Values, e.Cast+"[]")
	g.w("))")
}

func (e ArrayCompare) write(g *gen, alias string) {
	g.w("(", g.col(alias, e.Column), " ", e.Op, " ")
	g.array(e.Values, e.Cast)
	g.w(")")
}

func (e IsNull) write(g *gen, alias string) {
	if e.Negate {
		g.w("(", g.col(alias, e.Column), " is not null)")
	} else {
		g.w("(", g.col(alias, e.Column), " is null)")
	}
}

// Ident quotes an identifier.
func Ident(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// col is the SQL of column name of alias, noted as read when alias is a page whose records are joined
// (joinedRows.noteColumns).
func (g *gen) col(alias, name string) string {
	if j := g.joined[alias]; j != nil && j.read != nil && !j.read[name] {
		j.read[name] = true
		j.columns = append(j.columns, name)
	}
	return alias + "." + Ident(name)
}

func (r Relation) sql() string { return Ident(r.Schema) + "." + Ident(r.Name) }
