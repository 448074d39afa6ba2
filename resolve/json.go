package resolve

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pgreflect/pgreflect/sqlgen"
)

// encodeResponse renders {"data": ..., "errors": [...]} as Postgres renders jsonb: keys ordered shorter first
// then bytewise, ", " and ": " separators. A nil data with errors renders "data": null.
func encodeResponse(data map[string]any, errs []error) []byte {
	body := map[string]any{}
	if data != nil {
		body["data"] = data
	} else {
		body["data"] = nil
	}
	if len(errs) > 0 {
		list := make([]any, len(errs))
		for i, e := range errs {
			list[i] = map[string]any{"message": e.Error()}
		}
		body["errors"] = list
	}
	var buf bytes.Buffer
	writeJSON(&buf, body)
	return buf.Bytes()
}

// errorsOnly is the shape of request-level failures: no data key.
func errorsOnly(err error) []byte {
	var buf bytes.Buffer
	writeJSON(&buf, map[string]any{"errors": []any{map[string]any{"message": err.Error()}}})
	return buf.Bytes()
}

// dataNull is the shape of mutation and SQL failures.
func dataNull(err error) []byte { return encodeResponse(nil, []error{err}) }

func writeJSON(buf *bytes.Buffer, v any) {
	switch v := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		buf.WriteString(strconv.FormatBool(v))
	case string:
		writeString(buf, v)
	case *string: // nil writes null
		if v == nil {
			buf.WriteString("null")
		} else {
			writeString(buf, *v)
		}
	case json.Number:
		buf.WriteString(string(v))
	case int:
		buf.WriteString(strconv.Itoa(v))
	case []any:
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteString(", ")
			}
			writeJSON(buf, e)
		}
		buf.WriteByte(']')
	case *introAnswer:
		v.writeTo(buf)
	case *introFields:
		buf.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				buf.WriteString(", ")
			}
			writeString(buf, k)
			buf.WriteString(": ")
			writeJSON(buf, v.values[i])
		}
		buf.WriteByte('}')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return sqlgen.JSONBKeyLess(keys[i], keys[j]) })
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteString(", ")
			}
			writeString(buf, k)
			buf.WriteString(": ")
			writeJSON(buf, v[k])
		}
		buf.WriteByte('}')
	default:
		writeString(buf, fmt.Sprint(v))
	}
}

// jsonLen is the length of what writeJSON writes for v: an answer of tens of megabytes (introspection at
// thousands of tables) is written into a buffer of its size, where growing one by doubling allocated three
// times the answer and spent a fifth of the time clearing fresh memory.
func jsonLen(v any) int {
	switch v := v.(type) {
	case nil:
		return len("null")
	case bool:
		return len(strconv.FormatBool(v))
	case string:
		return stringLen(v)
	case *string:
		if v == nil {
			return len("null")
		}
		return stringLen(*v)
	case json.Number:
		return len(v)
	case int:
		var digits [20]byte
		return len(strconv.AppendInt(digits[:0], int64(v), 10))
	case []any:
		n := len("[]") + max(len(v)-1, 0)*len(", ")
		for _, e := range v {
			n += jsonLen(e)
		}
		return n
	case *introAnswer:
		return v.size
	case *introFields:
		n := len("{}") + max(len(v.keys)-1, 0)*len(", ")
		for i, k := range v.keys {
			n += stringLen(k) + len(": ") + jsonLen(v.values[i])
		}
		return n
	case map[string]any:
		n := len("{}") + max(len(v)-1, 0)*len(", ")
		for k, e := range v {
			n += stringLen(k) + len(": ") + jsonLen(e)
		}
		return n
	default:
		return stringLen(fmt.Sprint(v))
	}
}

// stringLen is the length of what writeString writes for s.
func stringLen(s string) int {
	if plainJSON(s) {
		return len(s) + len(`""`)
	}
	n := len(`""`)
	for _, r := range s {
		switch {
		case r == '"' || r == '\\' || r == '\b' || r == '\f' || r == '\n' || r == '\r' || r == '\t':
			n += 2
		case r < 0x20:
			n += len(`\u0000`)
		default:
			n += utf8.RuneLen(r)
		}
	}
	return n
}

// plainJSON reports whether s is written as it is between quotes: printable ASCII, no quote or backslash (names
// and descriptions, almost always).
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if !plainJSONByte[s[i]] {
			return false
		}
	}
	return true
}

// plainJSONByte tells the bytes plainJSON accepts: one load a byte, where four comparisons took a tenth of
// an introspection answer's time (every name and description is checked). Never modified.
var plainJSONByte = func() (plain [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		plain[c] = c != '"' && c != '\\'
	}
	return plain
}()

// writeString escapes as Postgres' escape_json does.
func writeString(buf *bytes.Buffer, s string) {
	buf.WriteByte('"')
	if plainJSON(s) {
		buf.WriteString(s)
		buf.WriteByte('"')
		return
	}
	for _, r := range s {
		switch r {
		case '"':
			buf.WriteString(`\"`)
		case '\\':
			buf.WriteString(`\\`)
		case '\b':
			buf.WriteString(`\b`)
		case '\f':
			buf.WriteString(`\f`)
		case '\n':
			buf.WriteString(`\n`)
		case '\r':
			buf.WriteString(`\r`)
		case '\t':
			buf.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(buf, `\u%04x`, r)
			} else {
				buf.WriteRune(r)
			}
		}
	}
	buf.WriteByte('"')
}

// appendJSONB appends JSON text produced by Postgres in jsonb's layout: one space after each colon and comma
// and none elsewhere outside strings (sqlgen writes its objects and lists so already, but to_json writes
// arrays and composite values with no spaces at all; keys already come in jsonb's order), with numbers
// rewritten the way they come out of pg_graphql. pg_graphql reads every result into a serde_json value
// (without arbitrary precision) and hands it back as jsonb, so a number that is not a 64-bit integer becomes
// an f64, is printed shortest-round-trip by ryu ("2.0", "0.15") and is read back by numeric_in: an average of
// 2.0000000000000000 answers 2.0.
func appendJSONB(dst, raw []byte) []byte {
	// Most bytes stay as they are: they are copied in runs, up to the next white space to drop, separator to
	// space out or number to rewrite, rather than one append each. A " : " and a ", " are taken in one step.
	run, n := 0, len(raw)
	for i := 0; i < n; i++ {
		switch c := raw[i]; {
		case c == '"':
			i = closingQuote(raw, i+1)
		case c == ' ' && i+2 < n && raw[i+1] == ':' && raw[i+2] == ' ':
			dst = append(append(dst, raw[run:i]...), ':', ' ')
			i += 2
			run = i + 1
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
			dst = append(dst, raw[run:i]...)
			run = i + 1
		case c == ':' || c == ',':
			if i+1 < n && raw[i+1] == ' ' {
				i++ // spaced already: the run goes on
				continue
			}
			dst = append(append(dst, raw[run:i+1]...), ' ')
			run = i + 1
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < n && raw[j] >= '0' && raw[j] <= '9' {
				j++
			}
			if j-i > 18 || j < n && numberByte[raw[j]] || c == '-' {
				// Not a plain integer of at most 18 digits (a fraction, an exponent, a long or negative one).
				for j < n && numberByte[raw[j]] {
					j++
				}
				if tok := raw[i:j]; !plainInteger(tok) {
					if text, changed := serdeNumber(string(tok)); changed {
						dst = append(append(dst, raw[run:i]...), text...)
						run = j
					}
				}
			}
			i = j - 1
		}
	}
	return append(dst, raw[min(run, n):]...)
}

// closingQuote is stringEnd for the short strings of an answer (keys, most values), where the call to
// IndexByte costs more than it saves: eight bytes at a time, looking for a quote or a backslash in a word (the
// lowest byte that is one of them is found exactly; a backslash leaves the rest to stringEnd).
func closingQuote(raw []byte, from int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	j := from
	for ; j+8 <= len(raw); j += 8 {
		x := binary.LittleEndian.Uint64(raw[j:])
		q, b := x^(ones*'"'), x^(ones*'\\')
		if m := ((q-ones)&^q | (b-ones)&^b) & highs; m != 0 {
			if k := j + bits.TrailingZeros64(m)/8; raw[k] == '"' {
				return k
			}
			return stringEnd(raw, from)
		}
	}
	for ; j < len(raw); j++ {
		switch raw[j] {
		case '"':
			return j
		case '\\':
			return stringEnd(raw, from)
		}
	}
	return len(raw)
}

// numberByte marks the bytes that continue a JSON number token.
var numberByte = func() (t [256]bool) {
	for _, c := range []byte("0123456789.eE+-") {
		t[c] = true
	}
	return t
}()

// stringEnd returns the index of the quote that closes the string starting at from (or len(raw)): the next
// quote not escaped by an odd run of backslashes, found with IndexByte rather than byte by byte.
func stringEnd(raw []byte, from int) int {
	for {
		k := bytes.IndexByte(raw[from:], '"')
		if k < 0 {
			return len(raw)
		}
		q := from + k
		backslashes := 0
		for b := q - 1; b >= from && raw[b] == '\\'; b-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return q
		}
		from = q + 1
	}
}

// plainInteger reports, without allocating, a token that serdeNumber leaves alone for sure: an integer of at
// most 18 digits.
func plainInteger(tok []byte) bool {
	if len(tok) > 0 && tok[0] == '-' {
		tok = tok[1:]
		if len(bytes.TrimLeft(tok, "0")) == 0 {
			return false // a negative zero ("-0", and "-00" as serdeNumber reads it), which numeric reads as 0
		}
	}
	if len(tok) == 0 || len(tok) > 18 {
		return false
	}
	for _, c := range tok {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// serdeNumber returns the text a JSON number token ends up as after pg_graphql's serde_json and numeric round
// trip, and false when it stays as it is (integers that fit in 64 bits).
func serdeNumber(tok string) (string, bool) {
	if !strings.ContainsAny(tok, ".eE") {
		if i, err := strconv.ParseInt(tok, 10, 64); err == nil {
			if i == 0 && tok[0] == '-' {
				return "0", true // float's -0: numeric, and so jsonb, has no negative zero
			}
			return "", false
		}
		if _, err := strconv.ParseUint(tok, 10, 64); err == nil {
			return "", false
		}
	}
	f, err := strconv.ParseFloat(tok, 64)
	if err != nil {
		return "", false
	}
	if f == 0 {
		return "0.0", tok != "0.0"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	// Shortest round-trip digits d1.d2...dn and exponent e: the value is 0.d1...dn * 10^kk with kk = e + 1.
	mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
	digits := strings.Replace(mant, ".", "", 1)
	e, _ := strconv.Atoi(exp)
	kk, n := e+1, len(digits)
	var out string
	switch {
	case kk > 16:
		// ryu switches to exponent notation, which numeric_in reads back as a plain integer.
		out = digits + strings.Repeat("0", kk-n)
	case kk >= n:
		out = digits + strings.Repeat("0", kk-n) + ".0"
	case kk > 0:
		out = digits[:kk] + "." + digits[kk:]
	default:
		out = "0." + strings.Repeat("0", -kk) + digits
	}
	out = sign + out
	return out, out != tok
}
