package httpapi

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The request reader must read every body as encoding/json does, and take the usual ones itself.
func TestDecodeRequestReadsAsEncodingJSON(t *testing.T) {
	fast := []string{
		`{"query":"{ a }"}`,
		`{"query": "query Q($n: Int!) {\n  a(first: $n) { b }\n}\t", "operationName": "Q", "variables": {"n": 1, "s": "x\"}"}}`,
		` { "operationName" : null , "query":"{ \"\\\/\b\f\r }", "variables": null, "extensions": {"persistedQuery": {"version": 1, "sha256Hash": "ab"}} } `,
		`{"documentId":"sha256:ab","doc_id":"x","variables":[1,{"a":[]}]}`,
		`{"query":"é ünïcode ✓"}`,
		`{}`,
	}
	slow := []string{
		`{"Query":"{ a }"}`,                     // another spelling
		`{"query":"a","query":"b"}`,             // twice: the last wins
		`{"query":"\u00e9\ud83d\ude00 \ud800"}`, // \u escapes, a lone surrogate
		"{\"query\":\"\xff\"}",                  // invalid UTF-8 becomes U+FFFD
		`{"query":"a","other":1}`,               // unknown keys are ignored
		`{"variables":"{}"}`, `{"variables":1}`, // other values
		`{"query":"a"} x`, `{"query":"a"`, `{"query":"a\x01"}`, `{"variables":{]}`, `{"variables":{"a":}}`,
		`[]`, `null`, ``, `{"query":1}`, `{"query":"\q"}`,
	}
	for _, body := range append(fast, slow...) {
		var want, got wireRequest
		wantErr := json.Unmarshal([]byte(body), &want)
		gotErr := decodeRequest([]byte(body), &got)
		if (wantErr == nil) != (gotErr == nil) || !reflect.DeepEqual(normalRequest(want), normalRequest(got)) {
			t.Errorf("%s:\n got %+v, %v\nwant %+v, %v", body, got, gotErr, want, wantErr)
		}
	}
	for _, body := range fast {
		if !decodeRequestFast([]byte(body), &wireRequest{}) {
			t.Errorf("not read by the fast path: %s", body)
		}
	}
	for _, body := range slow {
		if decodeRequestFast([]byte(body), &wireRequest{}) {
			t.Errorf("read by the fast path: %s", body)
		}
	}
}

// normalRequest makes empty raw values nil, as the two readers may leave either.
func normalRequest(r wireRequest) wireRequest {
	if len(r.Variables) == 0 {
		r.Variables = nil
	}
	if len(r.Extensions) == 0 {
		r.Extensions = nil
	}
	return r
}

func FuzzDecodeRequest(f *testing.F) {
	f.Add([]byte(`{"query": "query Q($n: Int!) {\n a(first: $n) }", "operationName": "Q", "variables": {"n": 1}}`))
	f.Add([]byte(`{"operationName":null,"extensions":{"persistedQuery":{"version":1}},"doc_id":"x"}`))
	f.Add([]byte(`{"variables":[{"a":"]}"}],"query":"\u00e9\\"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var want, got wireRequest
		wantErr := json.Unmarshal(body, &want)
		gotErr := decodeRequest(body, &got)
		if (wantErr == nil) != (gotErr == nil) || !reflect.DeepEqual(normalRequest(want), normalRequest(got)) {
			t.Errorf("%q:\n got %+v, %v\nwant %+v, %v", body, got, gotErr, want, wantErr)
		}
	})
}
