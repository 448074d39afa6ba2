package authapi

import (
	"net/http"
	"strings"
	"testing"
)

// The management API pushes a manifest (all or none) and lists the trusted documents, behind the
// management token like the rest of it.
func TestManagementTrustedDocuments(t *testing.T) {
	w := newWorld(t, nil)
	url := w.inst.apiURL + "/v1/projects/" + tRef + "/graphql/documents"
	token := map[string]string{"Authorization": "Bearer " + tMgmtToken}
	apollo := `{"format":"apollo-persisted-query-manifest","version":1,"operations":[
		{"id":"a1","name":"A","type":"query","body":"query A { __typename }"},
		{"id":"b2","name":"B","type":"query","body":"query B { __typename }"}]}`
	if r := w.do(http.MethodPost, url, apollo, nil); r.status != http.StatusUnauthorized {
		t.Errorf("without the token: %d %s", r.status, r.raw)
	}
	if r := w.do(http.MethodPost, url, apollo, token); r.status != http.StatusCreated || r.body["added"] != float64(2) || r.body["pushed"] != float64(2) {
		t.Fatalf("push: %d %s", r.status, r.raw)
	}
	if r := w.do(http.MethodPost, url, `{"a1": "query A { other: __typename }", "c3": "{ c: __typename }"}`, token); r.status != http.StatusBadRequest ||
		!strings.Contains(r.str("message"), `document "a1": the document id is already trusted with another text`) {
		t.Errorf("an id reused: %d %s", r.status, r.raw)
	}
	if r := w.do(http.MethodPost, url, `["not a manifest"]`, token); r.status != http.StatusBadRequest || !strings.Contains(r.str("message"), "manifest") {
		t.Errorf("not a manifest: %d %s", r.status, r.raw)
	}
	r := w.do(http.MethodGet, url, nil, token)
	if r.status != http.StatusOK || len(r.body) != 2 || r.str("a1") != "query A { __typename }" || r.str("b2") != "query B { __typename }" {
		t.Errorf("list (c3 of the refused push must not be there): %d %s", r.status, r.raw)
	}
}
