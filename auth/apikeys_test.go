package auth

import (
	"net/http/httptest"
	"testing"
)

func TestAPIKeyRoles(t *testing.T) {
	k := APIKeys{Anon: "anon-key", ServiceRole: "service-key"}
	for key, want := range map[string]string{"anon-key": "anon", "service-key": "service_role", "anon-ke": "", "": "", "anon-key ": ""} {
		if got := k.Role(key); got != want {
			t.Errorf("Role(%q) = %q, want %q", key, got, want)
		}
	}
	if (APIKeys{}).Role("") != "" {
		t.Error("an empty key matched an unset key")
	}
	r := httptest.NewRequest("GET", "/x?apikey=from-query", nil)
	if got := APIKeyFromRequest(r); got != "from-query" {
		t.Errorf("query key = %q", got)
	}
	r.Header.Set("APIKEY", "from-header")
	if got := APIKeyFromRequest(r); got != "from-header" {
		t.Errorf("header key = %q", got)
	}
}
