package auth

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
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

// TestAuthenticate tries each way a request's credentials can fail, and each way its role is chosen.
func TestAuthenticate(t *testing.T) {
	keys, err := NewKeys("a-secret-of-at-least-32-characters-long")
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewKeys("another-secret-of-at-least-32-characters")
	if err != nil {
		t.Fatal(err)
	}
	anonKey, _ := keys.SignAPIKey("anon", "ref")
	serviceKey, _ := keys.SignAPIKey("service_role", "ref")
	apiKeys := APIKeys{Anon: anonKey, ServiceRole: serviceKey}
	future := time.Now().Add(time.Hour).Unix()
	sign := func(k *Keys, claims jwt.MapClaims) string {
		s, err := k.Sign(claims)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	user := sign(keys, jwt.MapClaims{"role": "authenticated", "sub": "u1", "exp": future})
	noRole := sign(keys, jwt.MapClaims{"sub": "u2", "exp": future})
	for _, c := range []struct {
		name, key, authorization string
		wantRole, wantRefusal    string
	}{
		{"no key", "", "Bearer " + user, "", MsgNoAPIKey},
		{"unknown key", "not-a-key", "Bearer " + user, "", MsgInvalidAPIKey},
		{"a user's token as the key", user, "", "", MsgInvalidAPIKey},
		{"the anon key alone", anonKey, "", "anon", ""},
		{"the service key alone", serviceKey, "", "service_role", ""},
		{"another scheme", anonKey, "Basic " + user, "", MsgBearerRequired},
		{"bearer without token", anonKey, "Bearer ", "", MsgBearerRequired},
		{"a user's token", anonKey, "Bearer " + user, "authenticated", ""},
		{"no role claim: the key's role", anonKey, "Bearer " + noRole, "anon", ""},
		{"no role claim with the service key", serviceKey, "bearer " + noRole, "service_role", ""},
		{"role claim not a string", anonKey, "Bearer " + sign(keys, jwt.MapClaims{"role": 42, "exp": future}), "", MsgRoleClaim},
		{"empty role claim", anonKey, "Bearer " + sign(keys, jwt.MapClaims{"role": "", "exp": future}), "", MsgRoleClaim},
		{"another project's token", anonKey, "Bearer " + sign(other, jwt.MapClaims{"role": "service_role", "exp": future}), "", "signature"},
		{"expired token", anonKey, "Bearer " + sign(keys, jwt.MapClaims{"role": "service_role", "exp": time.Now().Add(-time.Hour).Unix()}), "", "expired"},
	} {
		caller, refusal := apiKeys.Authenticate(c.key, c.authorization, NewTokenCache(keys, 8))
		if c.wantRefusal == "" && refusal != "" || !strings.Contains(refusal, c.wantRefusal) {
			t.Errorf("%s: refusal %q, want %q", c.name, refusal, c.wantRefusal)
		}
		if caller.Role != c.wantRole {
			t.Errorf("%s: role %q, want %q", c.name, caller.Role, c.wantRole)
		}
		if c.wantRole != "" && (caller.Claims == nil || !strings.HasPrefix(caller.EncodedClaims, "{")) {
			t.Errorf("%s: claims %v, encoded %q", c.name, caller.Claims, caller.EncodedClaims)
		}
	}
}
