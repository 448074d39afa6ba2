package auth

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

const testSecret = "super-secret-jwt-token-with-at-least-32-characters-long"

func TestAPIKeyRoundTrip(t *testing.T) {
	k, err := NewKeys(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	key, err := k.SignAPIKey("anon", "abcdefghijklmnopqrst")
	if err != nil {
		t.Fatal(err)
	}
	claims, err := k.Verify(key)
	if err != nil {
		t.Fatal(err)
	}
	if claims["role"] != "anon" || claims["ref"] != "abcdefghijklmnopqrst" || claims["iss"] != "supabase" {
		t.Fatalf("claims = %v", claims)
	}
}

func TestSupabaseCLIDefaultKeyVerifies(t *testing.T) {
	// The anon key the Supabase CLI prints for its default secret must verify unchanged.
	const cliAnon = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6ImFub24iLCJleHAiOjE5ODM4MTI5OTZ9.CRXP1A7WOeoJeXxjNni43kdQwgnWNReilDMblYTn_I0"
	k, _ := NewKeys(testSecret)
	claims, err := k.Verify(cliAnon)
	if err != nil {
		t.Fatal(err)
	}
	if claims["role"] != "anon" {
		t.Fatalf("role = %v", claims["role"])
	}
}

func TestVerifyRejects(t *testing.T) {
	k, _ := NewKeys(testSecret)
	other, _ := NewKeys(strings.Repeat("x", 40))
	good := jwt.MapClaims{"role": "authenticated", "exp": time.Now().Add(time.Hour).Unix()}
	wrongSecret, _ := other.Sign(good)
	expired, _ := k.Sign(jwt.MapClaims{"role": "authenticated", "exp": time.Now().Add(-time.Minute).Unix()})
	noExp, _ := k.Sign(jwt.MapClaims{"role": "authenticated"})
	enc := base64.RawURLEncoding.EncodeToString
	none := enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc([]byte(`{"role":"service_role","exp":9999999999}`)) + "."
	hs512, _ := jwt.NewWithClaims(jwt.SigningMethodHS512, good).SignedString([]byte(testSecret))
	future, _ := k.Sign(jwt.MapClaims{"role": "authenticated", "iat": time.Now().Add(24 * time.Hour).Unix(),
		"exp": time.Now().Add(25 * time.Hour).Unix()})
	pastSkew, _ := k.Sign(jwt.MapClaims{"role": "authenticated", "iat": time.Now().Add(ClockSkew + 10*time.Second).Unix(),
		"exp": time.Now().Add(time.Hour).Unix()})
	for name, tok := range map[string]string{
		"wrong secret": wrongSecret, "expired": expired, "no exp": noExp, "alg none": none,
		"other algorithm": hs512, "garbage": "not.a.jwt", "empty": "",
		"issued tomorrow": future, "issued beyond the clock skew": pastSkew,
	} {
		if _, err := k.Verify(tok); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%s: err = %v, want ErrInvalidToken", name, err)
		}
	}
	// A clock a few seconds ahead of ours is no forgery.
	ahead, _ := k.Sign(jwt.MapClaims{"role": "authenticated", "iat": time.Now().Add(ClockSkew - 10*time.Second).Unix(),
		"exp": time.Now().Add(time.Hour).Unix()})
	if _, err := k.Verify(ahead); err != nil {
		t.Errorf("issued within the clock skew: %v", err)
	}
	if _, err := NewKeys("short"); err == nil {
		t.Error("a short secret was accepted")
	}
}

func TestRandomValues(t *testing.T) {
	ref, err := NewProjectRef()
	if err != nil || len(ref) != 20 || strings.ToLower(ref) != ref {
		t.Fatalf("ref %q err %v", ref, err)
	}
	a, _ := RandomSecret()
	b, _ := RandomSecret()
	if a == b || len(a) < MinSecretLength {
		t.Fatalf("secrets %q %q", a, b)
	}
}
