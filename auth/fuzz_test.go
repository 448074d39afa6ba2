package auth

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// FuzzVerify feeds arbitrary tokens to the verifier and to the API-key lookup. Without the secret no input can
// be a valid token, so every one must be refused with ErrInvalidToken (and never panic); and a string that is
// not byte for byte one of the project's keys names no role. The seeds are near misses: expired, unsigned,
// other algorithms, a foreign secret, a header claiming a key id.
func FuzzVerify(f *testing.F) {
	k, err := NewKeys(testSecret)
	if err != nil {
		f.Fatal(err)
	}
	other, _ := NewKeys(strings.Repeat("y", 40))
	future := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	good := jwt.MapClaims{"role": "service_role", "exp": future}
	wrongSecret, _ := other.Sign(good)
	expired, _ := k.Sign(jwt.MapClaims{"role": "authenticated", "exp": 1})
	noExp, _ := k.Sign(jwt.MapClaims{"role": "authenticated"})
	hs512, _ := jwt.NewWithClaims(jwt.SigningMethodHS512, good).SignedString([]byte(testSecret))
	enc := base64.RawURLEncoding.EncodeToString
	none := enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc([]byte(`{"role":"service_role","exp":9999999999}`)) + "."
	kid := enc([]byte(`{"alg":"RS256","kid":"x","typ":"JWT"}`)) + "." + enc([]byte(`{"role":"service_role","exp":9999999999}`)) + ".c2ln"
	for _, seed := range []string{wrongSecret, expired, noExp, hs512, none, kid, "", "a.b.c", "...", "eyJ.eyJ.eyJ"} {
		f.Add(seed)
	}
	anon, err := k.SignAPIKey("anon", "abcdefghijklmnopqrst")
	if err != nil {
		f.Fatal(err)
	}
	keys := APIKeys{Anon: anon, ServiceRole: "service-role-key"}
	f.Fuzz(func(t *testing.T, token string) {
		if claims, err := k.Verify(token); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%q verified without the secret: %v, %v", token, claims, err)
		}
		role := keys.Role(token)
		switch {
		case token == anon && role == "anon", token == "service-role-key" && role == "service_role":
		case token != anon && token != "service-role-key" && role == "":
		default:
			t.Errorf("%q names role %q", token, role)
		}
	})
}

// FuzzSigningKeys parses arbitrary JWK arrays as signing keys (the file behind auth.signing_keys_path): an
// error or a key set that signs and verifies its own tokens, never a panic.
func FuzzSigningKeys(f *testing.F) {
	for _, seed := range []string{
		`[{"kty":"oct","k":"c2VjcmV0","kid":"a"}]`,
		`[{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","kid":"ec"}]`,
		`[{"kty":"RSA","n":"AQAB","e":"AQAB","kid":"r"}]`,
		`[]`, `{}`, `null`, `[1]`, `[{"kty":"EC"}]`,
	} {
		f.Add([]byte(seed))
	}
	base, err := NewKeys(testSecret)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, jwks []byte) {
		keys, err := base.WithSigningKeys(jwks)
		if err != nil {
			return
		}
		tok, err := keys.SignUser(jwt.MapClaims{"role": "authenticated", "exp": time.Now().Add(time.Hour).Unix()})
		if err != nil {
			return
		}
		if _, err := keys.Verify(tok); err != nil {
			t.Errorf("a key set from %s does not verify its own token: %v", jwks, err)
		}
	})
}
