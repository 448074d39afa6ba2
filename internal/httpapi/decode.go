package httpapi

import (
	"encoding/json"
	"unicode/utf8"
)

// decodeRequest reads a POST body into req as json.Unmarshal does. The bodies clients send are read here
// without reflection: one object with the known keys spelled exactly, each once; strings with the common
// escapes; variables and extensions kept as their raw JSON. Anything else (other keys or spellings, \u
// escapes, control characters, malformed JSON) goes to json.Unmarshal, whose result and error it then is.
func decodeRequest(body []byte, req *wireRequest) error {
	var fast wireRequest
	if decodeRequestFast(body, &fast) {
		*req = fast
		return nil
	}
	return json.Unmarshal(body, req)
}

// decodeRequestFast is decodeRequest's reader; false when it leaves the body to json.Unmarshal.
func decodeRequestFast(b []byte, req *wireRequest) bool {
	d := requestDecoder{b: b}
	if !d.skip('{') {
		return false
	}
	var seen [6]bool
	if d.peek() == '}' {
		d.i++
		return d.end()
	}
	for {
		key, ok := d.plainString()
		if !ok || !d.skip(':') {
			return false
		}
		field := -1
		switch key {
		case "query":
			field = 0
		case "operationName":
			field = 1
		case "variables":
			field = 2
		case "extensions":
			field = 3
		case "documentId":
			field = 4
		case "doc_id":
			field = 5
		}
		if field < 0 || seen[field] {
			return false
		}
		seen[field] = true
		switch field {
		case 0, 1, 4, 5:
			s, null, ok := d.stringOrNull()
			if !ok {
				return false
			}
			if !null {
				*[...]*string{&req.Query, &req.OperationName, nil, nil, &req.DocumentID, &req.DocID}[field] = s
			}
		default:
			raw, ok := d.rawValue()
			if !ok {
				return false
			}
			if field == 2 {
				req.Variables = raw
			} else {
				req.Extensions = raw
			}
		}
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return d.end()
		default:
			return false
		}
	}
}

type requestDecoder struct {
	b []byte
	i int
}

func (d *requestDecoder) space() {
	for d.i < len(d.b) && (d.b[d.i] == ' ' || d.b[d.i] == '\n' || d.b[d.i] == '\t' || d.b[d.i] == '\r') {
		d.i++
	}
}

// peek is the next byte after white space, 0 at the end.
func (d *requestDecoder) peek() byte {
	d.space()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

func (d *requestDecoder) skip(c byte) bool {
	if d.peek() != c {
		return false
	}
	d.i++
	return true
}

// end reports whether only white space follows.
func (d *requestDecoder) end() bool {
	d.space()
	return d.i == len(d.b)
}

// plainString reads a string of printable ASCII without escapes (a key).
func (d *requestDecoder) plainString() (string, bool) {
	if d.peek() != '"' {
		return "", false
	}
	for j := d.i + 1; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			s := string(d.b[d.i+1 : j])
			d.i = j + 1
			return s, true
		case c < 0x20 || c == '\\' || c >= utf8.RuneSelf:
			return "", false
		}
	}
	return "", false
}

// stringOrNull reads a string, or null. Escapes other than \u are unescaped; UTF-8 must be valid.
func (d *requestDecoder) stringOrNull() (s string, null, ok bool) {
	switch d.peek() {
	case 'n':
		if len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null" {
			d.i += 4
			return "", true, true
		}
		return "", false, false
	case '"':
	default:
		return "", false, false
	}
	start := d.i + 1
	var out []byte // nil until the first escape
	ascii := true
	for j := start; j < len(d.b); j++ {
		c := d.b[j]
		switch {
		case c == '"':
			d.i = j + 1
			if !ascii && !utf8.Valid(d.b[start:j]) {
				return "", false, false
			}
			if out == nil {
				return string(d.b[start:j]), false, true
			}
			return string(out), false, true
		case c == '\\':
			if out == nil {
				out = append(make([]byte, 0, len(d.b)-start), d.b[start:j]...)
			}
			if j+1 >= len(d.b) {
				return "", false, false
			}
			j++
			switch e := d.b[j]; e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'n':
				out = append(out, '\n')
			case 't':
				out = append(out, '\t')
			case 'r':
				out = append(out, '\r')
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			default:
				return "", false, false // \u and malformed escapes
			}
		case c < 0x20:
			return "", false, false
		default:
			if c >= utf8.RuneSelf {
				ascii = false
			}
			if out != nil {
				out = append(out, c)
			}
		}
	}
	return "", false, false
}

// rawValue returns the next value when it is an object, an array or null, as it is: the end of an object or
// array is found by counting brackets outside strings, and json.Valid checks it. Other values (numbers,
// strings) are left to json.Unmarshal.
func (d *requestDecoder) rawValue() (json.RawMessage, bool) {
	d.space()
	start, end := d.i, -1
	if start >= len(d.b) {
		return nil, false
	}
	switch d.b[start] {
	case '{', '[':
		depth := 0
		for j := start; j < len(d.b) && end < 0; j++ {
			switch d.b[j] {
			case '"':
				for j++; j < len(d.b) && d.b[j] != '"'; j++ {
					if d.b[j] == '\\' {
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
		if len(d.b)-start >= 4 && string(d.b[start:start+4]) == "null" {
			end = start + 4
		}
	}
	if end < 0 || !json.Valid(d.b[start:end]) {
		return nil, false
	}
	d.i = end
	return d.b[start:end], true
}
