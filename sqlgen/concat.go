package sqlgen

import "strings"

// The JSON text of an answer is a concatenation of constant pieces (keys, brackets, type names) and values,
// nested in groups (an object's halves, a list, an object in its parent). Every || costs Postgres, on every
// execution of the statement's cached plan, a function lookup, an EXECUTE privilege check and expression steps
// (about 3,000 instructions, bench/findings.md, "Literals joined across groups"), so the pieces that meet
// across a group's edge are joined into one literal, in the group: 'a' || ('b' || X) is spelled ('ab' || X),
// (X || 'c') || 'd' is (X || 'cd'), and (X || 'c') || ('d' || Y) is (X || 'cd') || (Y). Groups stay, so the
// nesting stays balanced (pairs): a chain of n operands becomes one of at most n. The writers of the
// concatenation mark its structure in the text they write, and spell reads the marks back when the statement is
// complete. A mark starts with NUL, which neither an identifier nor a constant sqlgen inlines can hold.
const (
	markOpen  = "\x00(" // a group opens
	markClose = "\x00)" // the group closes
	markCat   = "\x00|" // || between two operands of a group
	markLit   = "\x00'" // a constant operand, its text up to markEnd
	markEnd   = "\x00;"
)

// open starts a group of operands joined by cat; close ends it. Each operand is text: a literal (lit), a
// group, or any SQL expression of type text.
func (g *gen) open()  { g.w(markOpen) }
func (g *gen) close() { g.w(markClose) }
func (g *gen) cat()   { g.w(markCat) }

// lit writes a constant operand, the text of parts. It holds no backslash, which standard_conforming_strings
// off would read as an escape (constant inlines none); a quote is doubled.
func (g *gen) lit(parts ...string) {
	g.w(markLit)
	g.w(parts...)
	g.w(markEnd)
}

// enclosed writes the group before || inner || after, with before and after literals.
func (g *gen) enclosed(before string, inner func(), after string) {
	g.open()
	g.lit(before)
	g.cat()
	inner()
	g.cat()
	g.lit(after)
	g.close()
}

// sql is the statement written so far, its marked concatenations spelled out.
func (g *gen) sql() string { return spell(g.sb.String()) }

// spell returns s with its marked groups written as SQL, the constants that meet joined. It runs on every
// statement sqlgen writes (a request compiled again for new variables), so it reads the text once into arenas
// of values without pointers, for the collector to skip: a few allocations a statement.
func spell(s string) string {
	marks := strings.Count(s, "\x00")
	if marks == 0 {
		return s
	}
	r := &spelling{s: s, nodes: make([]node, 0, marks), kids: make([]int32, 0, marks), stack: make([]int32, 0, 64)}
	r.joined.Grow(len(s))
	root := r.operand(true)
	var b strings.Builder
	b.Grow(len(s))
	r.write(&b, root)
	return b.String()
}

// spelling reads marked text from pos into nodes.
type spelling struct {
	s     string
	pos   int
	nodes []node
	// kids holds the operands of each group and the parts of each sequence, as ranges; stack the operands of the
	// groups being read and the parts of the operands being read.
	kids, stack []int32
	// joined holds the text of literals joined from others. It is only appended to, so that what it held stays
	// valid when it grows.
	joined strings.Builder
}

type nodeKind uint8

const (
	sqlNode   nodeKind = iota // SQL, as written
	litNode                   // a literal
	groupNode                 // a group of operands joined by ||
	seqNode                   // SQL with literals or groups inside (a call, a cast): nothing in it joined across
)

type node struct {
	kind nodeKind
	// The text of a literal or of SQL (textOf): s[from:to], or joined's when inJoined.
	inJoined   bool
	from, to   int32
	start, end int32 // a group's operands or a sequence's parts, in kids
}

func (r *spelling) add(n node) int32 {
	r.nodes = append(r.nodes, n)
	return int32(len(r.nodes) - 1)
}

// text adds a node of s[from:to].
func (r *spelling) text(kind nodeKind, from, to int) int32 {
	return r.add(node{kind: kind, from: int32(from), to: int32(to)})
}

// textOf is the text of a literal or of SQL.
func (r *spelling) textOf(n node) string {
	if n.inJoined {
		return r.joined.String()[n.from:n.to]
	}
	return r.s[n.from:n.to]
}

// joinLits is the literal of a's text followed by b's.
func (r *spelling) joinLits(a, b node) node {
	from := r.joined.Len()
	r.joined.WriteString(r.textOf(a))
	r.joined.WriteString(r.textOf(b))
	return node{kind: litNode, inJoined: true, from: int32(from), to: int32(r.joined.Len())}
}

// operand reads up to the next cat or close of the current group (or the end): one operand, a literal or a group
// (its constants joined) when it is nothing else. At the top level, outside any group, it reads to the end; a
// stray cat or close there (the writers mark none) is written as what it stands for.
func (r *spelling) operand(top bool) int32 {
	base := len(r.stack)
	for r.pos < len(r.s) {
		next := strings.IndexByte(r.s[r.pos:], 0)
		if next < 0 {
			next = len(r.s) - r.pos
		}
		if next > 0 {
			r.stack = append(r.stack, r.text(sqlNode, r.pos, r.pos+next))
			r.pos += next
			continue
		}
		mark := r.s[r.pos : r.pos+2]
		switch mark {
		case markCat, markClose:
			if !top {
				return r.parts(base)
			}
			r.stack = append(r.stack, r.text(sqlNode, r.pos, r.pos+2)) // the mark, which write spells
			r.pos += 2
		case markLit:
			end := strings.Index(r.s[r.pos:], markEnd)
			r.stack = append(r.stack, r.text(litNode, r.pos+2, r.pos+end))
			r.pos += end + 2
		case markOpen:
			r.pos += 2
			r.stack = append(r.stack, r.group())
		default: // no mark the writers write: kept as it is
			r.stack = append(r.stack, r.text(sqlNode, r.pos, r.pos+2))
			r.pos += 2
		}
	}
	return r.parts(base)
}

// parts makes the parts on the stack from base one operand, and takes them off.
func (r *spelling) parts(base int) int32 {
	parts := r.stack[base:]
	r.stack = r.stack[:base]
	switch {
	case len(parts) == 0:
		return r.add(node{kind: sqlNode})
	case len(parts) == 1:
		return parts[0]
	default:
		return r.add(node{kind: seqNode, start: r.keep(parts), end: int32(len(r.kids))})
	}
}

// keep copies nodes into kids and returns where they start.
func (r *spelling) keep(ids []int32) int32 {
	start := int32(len(r.kids))
	r.kids = append(r.kids, ids...)
	return start
}

// group reads a group's operands after its open mark, through its close mark (or the end), joining the
// constants that meet as each operand is read.
func (r *spelling) group() int32 {
	base := len(r.stack)
	for {
		r.push(base, r.operand(false))
		if r.pos >= len(r.s) {
			break
		}
		mark := r.s[r.pos : r.pos+2]
		r.pos += 2
		if mark == markClose {
			break
		}
	}
	if len(r.stack) == base+1 && r.nodes[r.stack[base]].kind == groupNode {
		// one group left, the literal before or after it joined into it: that group
		g := r.stack[base]
		r.stack = r.stack[:base]
		return g
	}
	g := r.add(node{kind: groupNode, start: r.keep(r.stack[base:]), end: int32(len(r.kids))})
	r.stack = r.stack[:base]
	return g
}

// push adds operand o to the group whose operands are on the stack from base, joining the literals that meet:
// two literals side by side, or a literal and the one that starts or ends the group beside it. A literal joined
// with a group's takes the place of the group's, however deep, and leaves the group where it is: Postgres
// evaluates a || b || c from the left, copying each time what it has so far, so that 'ab' || ((X) || (Y)) would
// copy the text of X and Y once more than ('ab' || X) || (Y).
func (r *spelling) push(base int, o int32) {
	r.unwrap(o)
	if len(r.stack) > base {
		prev := r.stack[len(r.stack)-1]
		if r.edgeLit(prev, false) && r.edgeLit(o, true) {
			switch {
			case r.nodes[prev].kind == litNode && r.nodes[o].kind == litNode:
				r.nodes[prev] = r.joinLits(r.nodes[prev], r.nodes[o])
				return
			case r.nodes[prev].kind == litNode:
				head := r.edgeOperand(o, true)
				r.nodes[head] = r.joinLits(r.nodes[prev], r.nodes[head])
				r.stack = r.stack[:len(r.stack)-1]
			case r.nodes[o].kind == litNode:
				tail := r.edgeOperand(prev, false)
				r.nodes[tail] = r.joinLits(r.nodes[tail], r.nodes[o])
				return
			default:
				tail := r.edgeOperand(prev, false)
				r.nodes[tail] = r.joinLits(r.nodes[tail], r.take(o, true))
			}
		}
	}
	r.stack = append(r.stack, o)
}

// unwrap makes a group of one literal or group that operand; a group of other SQL keeps its parentheses.
func (r *spelling) unwrap(i int32) {
	for n := r.nodes[i]; n.kind == groupNode && n.end-n.start == 1; n = r.nodes[i] {
		inner := r.nodes[r.kids[n.start]]
		if inner.kind != litNode && inner.kind != groupNode {
			return
		}
		r.nodes[i] = inner
	}
}

// edgeLit reports whether operand i is a literal or a group that starts (first) or ends with one.
func (r *spelling) edgeLit(i int32, first bool) bool {
	return r.nodes[r.edgeOperand(i, first)].kind == litNode
}

// edgeOperand is operand i, or the operand a group i starts (first) or ends with, through nested groups.
func (r *spelling) edgeOperand(i int32, first bool) int32 {
	for r.nodes[i].kind == groupNode {
		i = r.edge(i, first)
	}
	return i
}

// edge is the first or last operand of group g.
func (r *spelling) edge(g int32, first bool) int32 {
	if first {
		return r.kids[r.nodes[g].start]
	}
	return r.kids[r.nodes[g].end-1]
}

// take removes the literal that group g starts (first) or ends with (edgeLit) and returns it.
func (r *spelling) take(g int32, first bool) node {
	e := r.edge(g, first)
	var lit node
	if r.nodes[e].kind == litNode {
		lit = r.nodes[e]
		if first {
			r.nodes[g].start++
		} else {
			r.nodes[g].end--
		}
	} else {
		lit = r.take(e, first)
	}
	r.unwrap(g)
	return lit
}

func (r *spelling) write(b *strings.Builder, i int32) {
	n := r.nodes[i]
	switch n.kind {
	case litNode:
		b.WriteByte('\'')
		writeDoubled(b, r.textOf(n))
		b.WriteByte('\'')
	case groupNode:
		b.WriteByte('(')
		for k := n.start; k < n.end; k++ {
			if k > n.start {
				b.WriteString(" || ")
			}
			r.write(b, r.kids[k])
		}
		b.WriteByte(')')
	case seqNode:
		for k := n.start; k < n.end; k++ {
			r.write(b, r.kids[k])
		}
	default:
		switch text := r.textOf(n); text {
		case markCat:
			b.WriteString(" || ")
		case markClose:
			b.WriteString(")")
		default:
			b.WriteString(text)
		}
	}
}

// writeDoubled writes a literal's text with each quote doubled.
func writeDoubled(b *strings.Builder, text string) {
	for {
		i := strings.IndexByte(text, '\'')
		if i < 0 {
			b.WriteString(text)
			return
		}
		b.WriteString(text[:i+1])
		b.WriteByte('\'')
		text = text[i+1:]
	}
}
