package sqlgen

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// marked writes what fn writes with the concatenation writers and returns it spelled.
func marked(fn func(g *gen)) string {
	g := &gen{sb: &strings.Builder{}}
	fn(g)
	return g.sql()
}

func TestSpellJoinsConstantsAcrossGroups(t *testing.T) {
	group := func(g *gen, operands ...func()) {
		g.open()
		for i, o := range operands {
			if i > 0 {
				g.cat()
			}
			o()
		}
		g.close()
	}
	for _, c := range []struct {
		name  string
		write func(g *gen)
		want  string
	}{
		{"plain SQL is left as it is", func(g *gen) { g.w("select 'a' || 'b'") }, "select 'a' || 'b'"},
		{"literals side by side", func(g *gen) {
			group(g, func() { g.lit("a") }, func() { g.lit("b") }, func() { g.w("x") }, func() { g.lit("c") }, func() { g.lit("d") })
		}, "('ab' || x || 'cd')"},
		{"a literal and the group after it", func(g *gen) {
			group(g, func() { g.lit("a") }, func() { group(g, func() { g.lit("b") }, func() { g.w("x") }) })
		}, "('ab' || x)"},
		{"a group and the literal after it", func(g *gen) {
			group(g, func() { group(g, func() { g.w("x") }, func() { g.lit("c") }) }, func() { g.lit("d") })
		}, "(x || 'cd')"},
		{"two groups meeting in literals", func(g *gen) {
			group(g, func() { group(g, func() { g.w("x") }, func() { g.lit("c") }) }, func() { group(g, func() { g.lit("d") }, func() { g.w("y") }) })
		}, "((x || 'cd') || (y))"},
		{"through groups nested at the edge", func(g *gen) {
			group(g, func() { g.lit("a") }, func() {
				group(g, func() { group(g, func() { g.lit("b") }, func() { g.w("x") }, func() { g.w("y") }) }, func() { g.w("z") })
			})
		}, "(('ab' || x || y) || z)"},
		{"a group of constants only", func(g *gen) {
			g.w("select ")
			group(g, func() { g.lit("{") }, func() { group(g, func() { g.lit(`"a": `) }, func() { g.lit("1") }) }, func() { g.lit("}") })
			g.w("::text")
		}, `select ('{"a": 1}')::text`},
		{"nothing joined into a call", func(g *gen) {
			group(g, func() { g.lit("a") }, func() { g.w("coalesce("); group(g, func() { g.lit("b") }, func() { g.w("x") }); g.w(", 'null')") })
		}, "('a' || coalesce(('b' || x), 'null'))"},
		{"a group inside SQL is joined on its own", func(g *gen) {
			g.w("coalesce(")
			group(g, func() { g.lit("a") }, func() { group(g, func() { g.lit("b") }, func() { g.w("x") }) })
			g.w(", 'null')")
		}, "coalesce(('ab' || x), 'null')"},
		{"a quote is doubled", func(g *gen) { group(g, func() { g.lit("it's") }, func() { g.w("x") }) }, "('it''s' || x)"},
		{"a cat or close outside any group is what it stands for", func(g *gen) {
			g.w("f(x")
			g.cat()
			g.lit("a")
			g.close()
		}, "f(x || 'a')"},
	} {
		if got := marked(c.write); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// TestSpellKeepsTheTextAndTheDepth: for random nestings of literals and SQL operands, the spelled SQL makes the
// same text (the same operands in the same order, the literals between them joined), with no more || than the
// marked text and their nesting no deeper: a joined literal stays in a group that was there, and a group left
// with one operand is that operand. So the halving of pairs keeps its logarithmic depth.
func TestSpellKeepsTheTextAndTheDepth(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		var plain strings.Builder // the marked text as SQL, nothing joined
		names := 0
		var write func(g *gen, depth int)
		write = func(g *gen, depth int) {
			n := 1 + rng.IntN(4)
			g.open()
			plain.WriteString("(")
			for j := range n {
				if j > 0 {
					g.cat()
					plain.WriteString(" || ")
				}
				switch k := rng.IntN(3); {
				case k == 0 && depth < 5:
					write(g, depth+1)
				case k == 1:
					s := string(rune('a' + rng.IntN(26)))
					g.lit(s)
					plain.WriteString("'" + s + "'")
				default:
					names++
					s := "x" + strconv.Itoa(names)
					g.w(s)
					plain.WriteString(s)
				}
			}
			g.close()
			plain.WriteString(")")
		}
		got := marked(func(g *gen) { write(g, 0) })
		want := plain.String()
		if a, b := concatenated(got), concatenated(want); a != b {
			t.Fatalf("case %d: %s makes %q, %s makes %q", i, got, a, want, b)
		}
		if a, b := strings.Count(got, "||"), strings.Count(want, "||"); a > b {
			t.Fatalf("case %d: %d || in %s, %d in %s", i, a, got, b, want)
		}
		if a, b := depth(got), depth(want); a > b {
			t.Fatalf("case %d: %s is %d deep, %s %d", i, got, a, want, b)
		}
	}
}

// concatenated is what a concatenation of literals and names makes, each name as <name>.
func concatenated(sql string) string {
	var b strings.Builder
	for _, tok := range strings.FieldsFunc(sql, func(r rune) bool { return strings.ContainsRune("() |", r) }) {
		if strings.HasPrefix(tok, "'") {
			b.WriteString(strings.Trim(tok, "'"))
		} else {
			b.WriteString("<" + tok + ">")
		}
	}
	return b.String()
}

// depth is how deep Postgres nests the || operators of sql: || groups to the left, so that in a chain of n
// operands the first two are under n-1 operators and the k-th after them under n-k.
func depth(sql string) int {
	var operands []string
	level, start := 0, 0
	for i := 0; i < len(sql); i++ {
		switch {
		case sql[i] == '(':
			level++
		case sql[i] == ')':
			level--
		case level == 0 && strings.HasPrefix(sql[i:], " || "):
			operands = append(operands, sql[start:i])
			start = i + 4
		}
	}
	operands = append(operands, sql[start:])
	n, deepest := len(operands), 0
	for k, op := range operands {
		d := 0
		if strings.HasPrefix(op, "(") && strings.HasSuffix(op, ")") {
			d = depth(op[1 : len(op)-1])
		}
		deepest = max(deepest, d+n-max(k, 1))
	}
	return deepest
}
