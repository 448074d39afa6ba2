package httpapi

import (
	"encoding/json"

	"github.com/pgreflect/pgreflect/internal/plainjson"
)

// decodeRequest reads a POST body into req as json.Unmarshal does. The bodies clients send are read with
// package plainjson: one object with the known keys spelled exactly, each once; strings with the common
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
func decodeRequestFast(body []byte, req *wireRequest) bool {
	r := plainjson.Reader{Data: body}
	if !r.Byte('{') {
		return false
	}
	if r.Byte('}') {
		return r.End()
	}
	var seen [6]bool // a key given twice is json.Unmarshal's to read: the last one wins there
	for {
		key, ok := r.Key()
		if !ok || !r.Byte(':') {
			return false
		}
		var text *string
		var raw *json.RawMessage
		field := -1
		switch string(key) {
		case "query":
			field, text = 0, &req.Query
		case "operationName":
			field, text = 1, &req.OperationName
		case "documentId":
			field, text = 2, &req.DocumentID
		case "doc_id":
			field, text = 3, &req.DocID
		case "variables":
			field, raw = 4, &req.Variables
		case "extensions":
			field, raw = 5, &req.Extensions
		}
		if field < 0 || seen[field] {
			return false
		}
		seen[field] = true
		if text != nil {
			ok = r.Literal("null") || r.String(text)
		} else {
			*raw, ok = r.Raw()
		}
		if !ok {
			return false
		}
		switch {
		case r.Byte(','):
		case r.Byte('}'):
			return r.End()
		default:
			return false
		}
	}
}
