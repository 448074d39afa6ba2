// Package plainjson reads the plain JSON that pgreflect's hot path sees nearly always (the bodies GraphQL
// clients POST) without encoding/json's reflection and second scan. It reads only what it can read exactly as
// encoding/json would: strings with the one-letter escapes in valid UTF-8, null, and objects and arrays kept as
// raw text. Anything else makes a
// method report false, and the caller hands the whole input to encoding/json, which reads it (or says why not).
package plainjson

import (
	"encoding/binary"
	"encoding/json"
	"unicode/utf8"
)

// Reader reads values from Data one after another; At is where the next one starts.
type Reader struct {
	Data []byte
	At   int
}

// Space skips white space.
func (r *Reader) Space() {
	for r.At < len(r.Data) && (r.Data[r.At] == ' ' || r.Data[r.At] == '\n' || r.Data[r.At] == '\t' || r.Data[r.At] == '\r') {
		r.At++
	}
}

// Peek is the next byte after white space, 0 at the end.
func (r *Reader) Peek() byte {
	r.Space()
	if r.At < len(r.Data) {
		return r.Data[r.At]
	}
	return 0
}

// Byte reads b, after white space.
func (r *Reader) Byte(b byte) bool {
	if r.Peek() != b || r.At == len(r.Data) {
		return false
	}
	r.At++
	return true
}

// End reports whether only white space is left.
func (r *Reader) End() bool {
	r.Space()
	return r.At == len(r.Data)
}

// Literal reads word (true, false, null), after white space.
func (r *Reader) Literal(word string) bool {
	r.Space()
	if len(r.Data)-r.At >= len(word) && string(r.Data[r.At:r.At+len(word)]) == word {
		r.At += len(word)
		return true
	}
	return false
}

// String reads a string into v: valid UTF-8 without control characters, its escapes one letter each (\u
// escapes, which encoding/json may replace, are left to it).
func (r *Reader) String(v *string) bool {
	if !r.Byte('"') {
		return false
	}
	start := r.At
	var out []byte // nil until the first escape: most strings are a slice of Data
	ascii := true
	for {
		run := r.At
		r.skipPlain()
		if out != nil {
			out = append(out, r.Data[run:r.At]...)
		}
		if r.At == len(r.Data) {
			return false
		}
		switch c := r.Data[r.At]; {
		case c == '"':
			if !ascii && !utf8.Valid(r.Data[start:r.At]) {
				return false
			}
			if out == nil {
				*v = string(r.Data[start:r.At])
			} else {
				*v = string(out)
			}
			r.At++
			return true
		case c == '\\':
			if out == nil {
				out = append(make([]byte, 0, len(r.Data)-start), r.Data[start:r.At]...)
			}
			if r.At++; r.At == len(r.Data) || unescape[r.Data[r.At]] == 0 {
				return false
			}
			out = append(out, unescape[r.Data[r.At]])
		case c < 0x20:
			return false
		default: // not ASCII
			ascii = false
			if out != nil {
				out = append(out, c)
			}
		}
		r.At++
	}
}

// Key reads a string without escapes, as an object's keys nearly always are, and returns its text: a slice of
// Data, which a switch on string(key) reads without copying. False for any other string.
func (r *Reader) Key() ([]byte, bool) {
	if !r.Byte('"') {
		return nil, false
	}
	start := r.At
	r.skipPlain()
	if r.At == len(r.Data) || r.Data[r.At] != '"' {
		return nil, false
	}
	r.At++
	return r.Data[start : r.At-1], true
}

// skipPlain moves At past printable ASCII other than the quote and the backslash, eight bytes at a time while
// it can: most of a GraphQL document is such text.
func (r *Reader) skipPlain() {
	for r.At+8 <= len(r.Data) && !anySpecial(binary.LittleEndian.Uint64(r.Data[r.At:])) {
		r.At += 8
	}
	for r.At < len(r.Data) && plainByte(r.Data[r.At]) {
		r.At++
	}
}

func plainByte(c byte) bool { return c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' }

// anySpecial reports whether one of w's eight bytes is not a plainByte. With no byte at 0x80 or above, a byte
// below 0x20, or equal to the quote or the backslash (zero after the xor), is the only one whose subtraction
// leaves its top bit set or borrows from the byte above it: the test is exact.
func anySpecial(w uint64) bool {
	const ones, tops = 0x0101010101010101, 0x8080808080808080
	if w&tops != 0 {
		return true
	}
	return ((w-ones*0x20)|(w^(ones*'"')-ones)|(w^(ones*'\\')-ones))&tops != 0
}

// unescape is the byte each one-letter escape stands for, 0 where a letter is not one.
var unescape = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// Raw reads an object, an array or null as its text, a slice of Data: the end of an object or array is found
// by counting brackets outside strings, and json.Valid checks what lies between.
func (r *Reader) Raw() (json.RawMessage, bool) {
	r.Space()
	start, end := r.At, -1
	if start == len(r.Data) {
		return nil, false
	}
	switch r.Data[start] {
	case '{', '[':
		depth := 0
		for j := start; j < len(r.Data) && end < 0; j++ {
			switch r.Data[j] {
			case '"':
				for j++; j < len(r.Data) && r.Data[j] != '"'; j++ {
					if r.Data[j] == '\\' {
						j++
					}
				}
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					end = j + 1
				}
			}
		}
	case 'n':
		if r.Literal("null") {
			return r.Data[start:r.At], true
		}
		return nil, false
	}
	if end < 0 || !json.Valid(r.Data[start:end]) {
		return nil, false
	}
	r.At = end
	return r.Data[start:end], true
}
