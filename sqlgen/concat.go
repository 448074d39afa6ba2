package sqlgen

import "strings"

// The JSON text of an answer is a concatenation of constant pieces (keys, brackets, type names) and values,
// nested in groups (an object's halves, a list, an object in its parent). Every || costs Postgres a function
// lookup, an EXECUTE privilege check and an expression step on every row it makes (about 3,000 instructions
// each, bench/findings.md, "Literals joined across groups"), so the pieces that meet across a group's edge
// are joined into one literal: 'a' || ('b' || X) is spelled 'ab' || (X), (X || 'c') || 'd' is (X) || 'cd',
// and (X || 'c') || ('d' || Y) is (X) || 'cd' || (Y). Groups stay, so the depth of the balanced nesting
// (pairs) is kept. The writers of the concatenation mark its structure in the text they write, and spell
// reads the marks back when the statement is complete. A mark starts with NUL, which neither an identifier
// nor a constant sqlgen inlines can hold.
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

// lit writes a constant operand. s holds no backslash, which standard_conforming_strings off would read as an
// escape (constant inlines none); a quote is doubled.
func (g *gen) lit(s string) { g.w(markLit, s, markEnd) }

// sql is the statement written so far, its marked concatenations spelled out.
func (g *gen) sql() string { return spell(g.sb.String()) }

// operand is one operand of a group: a literal, a group, or other SQL (of type text).
type operand struct {
	group []operand // when it is a group
	text  string    // the literal's text (isLit), or the SQL
	isLit bool
}

func (o operand) isGroup() bool { return o.group != nil }

// spell returns s with its marked groups written as SQL, the constants that meet joined.
func spell(s string) string {
	if !strings.Contains(s, "\x00") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	r := &marks{s: s}
	for _, part := range r.operandParts() {
		part.write(&b)
	}
	// Outside a group the writers mark nothing but groups and literals; a stray cat or close is written as what
	// it stands for.
	for r.pos < len(r.s) {
		if r.s[r.pos:r.pos+2] == markCat {
			b.WriteString(" || ")
		} else {
			b.WriteString(")")
		}
		r.pos += 2
		for _, part := range r.operandParts() {
			part.write(&b)
		}
	}
	return b.String()
}

// marks reads marked text from pos.
type marks struct {
	s   string
	pos int
}

// operandParts reads up to the next cat or close of the current group (or the end): the parts of one operand,
// each plain SQL, a literal or a group (read whole, its constants joined).
func (r *marks) operandParts() []operand {
	var parts []operand
	for r.pos < len(r.s) {
		next := strings.IndexByte(r.s[r.pos:], 0)
		if next < 0 {
			parts = append(parts, operand{text: r.s[r.pos:]})
			r.pos = len(r.s)
			break
		}
		if next > 0 {
			parts = append(parts, operand{text: r.s[r.pos : r.pos+next]})
			r.pos += next
		}
		switch r.s[r.pos : r.pos+2] {
		case markCat, markClose:
			return parts
		case markLit:
			end := strings.Index(r.s[r.pos:], markEnd)
			parts = append(parts, operand{text: r.s[r.pos+2 : r.pos+end], isLit: true})
			r.pos += end + 2
		case markOpen:
			r.pos += 2
			parts = append(parts, r.group())
		}
	}
	return parts
}

// group reads a group's operands after its open mark, through its close mark.
func (r *marks) group() operand {
	var operands []operand
	for {
		parts := r.operandParts()
		var o operand
		if len(parts) == 1 && (parts[0].isLit || parts[0].isGroup()) {
			o = parts[0]
		} else {
			// SQL with a literal or group inside (a call, a cast): one operand, nothing in it joined across.
			var b strings.Builder
			for _, p := range parts {
				p.write(&b)
			}
			o = operand{text: b.String()}
		}
		operands = append(operands, o)
		if r.pos >= len(r.s) {
			break
		}
		mark := r.s[r.pos : r.pos+2]
		r.pos += 2
		if mark == markClose {
			break
		}
	}
	return operand{group: joinConstants(operands)}
}

// joinConstants joins the literals that meet in a group's operands (whose own groups are joined already): two
// literals side by side, or a literal and the one that starts or ends the group beside it.
func joinConstants(operands []operand) []operand {
	out := make([]operand, 0, len(operands))
	for _, o := range operands {
		o = unwrapped(o)
		if len(out) == 0 || !endsInLit(out[len(out)-1]) || !startsWithLit(o) {
			out = append(out, o)
			continue
		}
		prev := &out[len(out)-1]
		switch {
		case prev.isLit && o.isLit:
			prev.text += o.text
		case prev.isLit:
			prev.text += takeFirst(&o)
			out = append(out, o)
		case o.isLit:
			o.text = takeLast(prev) + o.text
			out = append(out, o)
		default:
			joined := operand{text: takeLast(prev) + takeFirst(&o), isLit: true}
			out = append(out, joined, o)
		}
	}
	return out
}

// unwrapped is a group of one literal or group as that operand; a group of other SQL keeps its parentheses.
func unwrapped(o operand) operand {
	for o.isGroup() && len(o.group) == 1 && (o.group[0].isLit || o.group[0].isGroup()) {
		o = o.group[0]
	}
	return o
}

func startsWithLit(o operand) bool {
	for o.isGroup() {
		o = o.group[0]
	}
	return o.isLit
}

func endsInLit(o operand) bool {
	for o.isGroup() {
		o = o.group[len(o.group)-1]
	}
	return o.isLit
}

// takeFirst removes the literal a group starts with (startsWithLit) and returns its text.
func takeFirst(o *operand) string {
	first := &o.group[0]
	var s string
	if first.isLit {
		s = first.text
		o.group = o.group[1:]
	} else {
		s = takeFirst(first)
	}
	*o = unwrapped(*o)
	return s
}

// takeLast removes the literal a group ends with (endsInLit) and returns its text.
func takeLast(o *operand) string {
	last := &o.group[len(o.group)-1]
	var s string
	if last.isLit {
		s = last.text
		o.group = o.group[:len(o.group)-1]
	} else {
		s = takeLast(last)
	}
	*o = unwrapped(*o)
	return s
}

func (o operand) write(b *strings.Builder) {
	switch {
	case o.isLit:
		b.WriteString("'")
		b.WriteString(strings.ReplaceAll(o.text, "'", "''"))
		b.WriteString("'")
	case o.isGroup():
		b.WriteString("(")
		for i, p := range o.group {
			if i > 0 {
				b.WriteString(" || ")
			}
			p.write(b)
		}
		b.WriteString(")")
	default:
		b.WriteString(o.text)
	}
}
