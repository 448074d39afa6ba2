package auth

import (
	"net/http/httptest"
	"testing"
)

func TestBearerToken(t *testing.T) {
	for header, want := range map[string]string{
		"Bearer abc": "abc", "bearer  abc ": "abc", "BEARER abc": "abc",
		"": "", "Bearer": "", "Bearer   ": "", "Basic abc": "", "Bearerabc": "",
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if header != "" {
			r.Header.Set("Authorization", header)
		}
		got, ok := BearerToken(r)
		if got != want || ok != (want != "") {
			t.Errorf("%q: got %q, %v; want %q", header, got, ok, want)
		}
	}
}

func TestSecretDigest(t *testing.T) {
	d := NewSecretDigest("s3cret")
	if !d.IsSet() || !d.Matches("s3cret") || d.Matches("s3cre") || d.Matches("s3cret ") || d.Matches("") {
		t.Error("the digest of a secret must match exactly the secret")
	}
	none := NewSecretDigest("")
	if none.IsSet() || none.Matches("") || none.Matches("x") {
		t.Error("the digest of no secret must match nothing, the empty string included")
	}
}
