package auth

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// A cached token stops being accepted when it expires, exactly as an uncached one; a forged or altered token is
// never answered from the cache.
func TestTokenCacheHonoursExpiryAndSignature(t *testing.T) {
	keys, err := NewKeys("a-secret-of-at-least-thirty-two-characters")
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Now()
	cache := NewTokenCache(keys, 8)
	cache.now = func() time.Time { return clock }
	token, err := keys.Sign(jwt.MapClaims{"role": "authenticated", "sub": "u1", "iat": clock.Unix(), "exp": clock.Add(time.Minute).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		claims, encoded, err := cache.Verify(token)
		if err != nil || claims["sub"] != "u1" {
			t.Fatalf("verify %d: %v %v", i, claims, err)
		}
		if want, _ := json.Marshal(claims); encoded != string(want) {
			t.Fatalf("verify %d: encoded %s, want %s", i, encoded, want)
		}
	}
	clock = clock.Add(time.Minute + ClockSkew - time.Second)
	if _, _, err := cache.Verify(token); err != nil {
		t.Fatalf("within the clock skew after exp: %v", err)
	}
	clock = clock.Add(2 * time.Second)
	if _, _, err := cache.Verify(token); err == nil {
		t.Fatal("an expired token was answered from the cache")
	}
	// A token with its signature altered is refused even though its claims were cached under the real one.
	other, _ := keys.Sign(jwt.MapClaims{"role": "anon", "iat": clock.Unix(), "exp": clock.Add(time.Hour).Unix()})
	if _, _, err := cache.Verify(other); err != nil {
		t.Fatal(err)
	}
	forged := other[:len(other)-2] + "AA"
	if forged == other {
		forged = other[:len(other)-2] + "BB"
	}
	if _, _, err := cache.Verify(forged); err == nil {
		t.Fatal("a token with a broken signature was accepted")
	}
}
