package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

func jwkJSON(t *testing.T, key any, kid string, ops ...string) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(jose.JSONWebKey{Key: key, KeyID: kid})
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) > 0 {
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		m["key_ops"] = ops
		b, _ = json.Marshal(m)
	}
	return b
}

func TestAsymmetricSigningKeys(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rs, _ := rsa.GenerateKey(rand.Reader, 2048)
	base, _ := NewKeys(testSecret)
	arr, _ := json.Marshal([]json.RawMessage{
		jwkJSON(t, rs, "rsa-old", "verify"),
		jwkJSON(t, ec, "ec-current", "sign", "verify"),
	})
	path := filepath.Join(t.TempDir(), "signing_keys.json")
	if err := os.WriteFile(path, arr, 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := base.WithSigningKeysFile(path)
	if err != nil {
		t.Fatal(err)
	}
	claims := jwt.MapClaims{"sub": "u", "role": "authenticated", "exp": time.Now().Add(time.Hour).Unix()}
	tok, err := k.SignUser(claims)
	if err != nil {
		t.Fatal(err)
	}
	parsed, _, _ := jwt.NewParser().ParseUnverified(tok, jwt.MapClaims{})
	if parsed.Header["alg"] != "ES256" || parsed.Header["kid"] != "ec-current" {
		t.Errorf("header %v", parsed.Header)
	}
	if c, err := k.Verify(tok); err != nil || c["sub"] != "u" {
		t.Errorf("ES256 token: %v %v", c, err)
	}
	// A token of the older RSA key still verifies; HS256 tokens (API keys) too.
	old := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	old.Header["kid"] = "rsa-old"
	oldTok, _ := old.SignedString(rs)
	if _, err := k.Verify(oldTok); err != nil {
		t.Errorf("RS256 token of a listed key: %v", err)
	}
	anon, _ := k.SignAPIKey("anon", "ref")
	if _, err := k.Verify(anon); err != nil {
		t.Errorf("HS256 API key: %v", err)
	}
	// Without the keys, the ES256 token does not verify.
	if _, err := base.Verify(tok); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("ES256 token accepted without the key: %v", err)
	}

	// Algorithm confusion and foreign keys are rejected.
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	forged := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	forged.Header["kid"] = "ec-current"
	forgedTok, _ := forged.SignedString(other)
	unknown := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	unknown.Header["kid"] = "nobody"
	unknownTok, _ := unknown.SignedString(ec)
	// HS256 with the public key bytes as secret, under the EC kid.
	confused := jwt.NewWithClaims(jwt.SigningMethodHS256, claims)
	confused.Header["kid"] = "ec-current"
	pubJSON, _ := json.Marshal(jose.JSONWebKey{Key: &ec.PublicKey})
	confusedTok, _ := confused.SignedString(pubJSON)
	wrongAlg := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	wrongAlg.Header["kid"] = "ec-current"
	wrongAlgTok, _ := wrongAlg.SignedString(rs)
	for name, tok := range map[string]string{"other key": forgedTok, "unknown kid": unknownTok, "hs256 under ec kid": confusedTok, "rs256 under ec kid": wrongAlgTok} {
		if _, err := k.Verify(tok); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%s: accepted (%v)", name, err)
		}
	}

	// The JWKS lists both public keys and no private or secret material.
	doc, _ := json.Marshal(k.JWKS())
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(doc, &set); err != nil || len(set.Keys) != 2 {
		t.Fatalf("jwks %s: %v", doc, err)
	}
	for _, key := range set.Keys {
		if !key.IsPublic() || key.Use != "sig" || (key.KeyID == "ec-current") != (key.Algorithm == "ES256") {
			t.Errorf("jwks key %+v", key)
		}
	}
	if strings.Contains(string(doc), `"d"`) || strings.Contains(string(doc), testSecret) {
		t.Errorf("jwks leaks private material: %s", doc)
	}
	if empty, _ := json.Marshal(base.JWKS()); string(empty) != `{"keys":[]}` {
		t.Errorf("HS256-only jwks: %s", empty)
	}
}

func TestSigningKeysRejected(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ec2, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	base, _ := NewKeys(testSecret)
	arr := func(keys ...json.RawMessage) []byte { b, _ := json.Marshal(keys); return b }
	for name, data := range map[string][]byte{
		"not an array":   []byte(`{"kty":"EC"}`),
		"no kid":         arr(jwkJSON(t, ec, "")),
		"public only":    arr(jwkJSON(t, &ec.PublicKey, "pub")),
		"two signers":    arr(jwkJSON(t, ec, "a", "sign"), jwkJSON(t, ec2, "b", "sign")),
		"duplicate kid":  arr(jwkJSON(t, ec, "a"), jwkJSON(t, ec2, "a")),
		"P-384":          arr(jwkJSON(t, p384, "p384")),
		"small RSA":      arr(jwkJSON(t, small, "small")),
		"sign on public": arr(jwkJSON(t, ec, "a"), jwkJSON(t, &ec2.PublicKey, "b", "sign")),
	} {
		if _, err := base.WithSigningKeys(data); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
