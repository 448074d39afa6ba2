package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

// asymmetricKey is one key of signing_keys_path: its kid, algorithm and key (private when it signs).
type asymmetricKey struct {
	kid    string
	alg    string
	method jwt.SigningMethod
	public crypto.PublicKey
	signer crypto.Signer // nil for verify-only keys
}

// WithSigningKeys returns a copy of k that also knows the asymmetric keys of a JWK array, the format of the
// Supabase CLI's signing_keys_path (and GOTRUE_JWT_KEYS): ES256 (P-256) and RS256 keys, each with a kid. The
// key whose key_ops contains "sign" signs user access tokens (the first private key if none says so); at most
// one key may be marked for signing. Public keys verify only. API keys stay HS256 with the secret.
func (k *Keys) WithSigningKeys(jwkArray []byte) (*Keys, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(jwkArray, &raw); err != nil {
		return nil, fmt.Errorf("signing keys: want a JSON array of JWKs: %w", err)
	}
	out := &Keys{secret: k.secret, byKid: map[string]*asymmetricKey{}}
	var firstPrivate *asymmetricKey
	for i, r := range raw {
		var jwk jose.JSONWebKey
		if err := jwk.UnmarshalJSON(r); err != nil {
			return nil, fmt.Errorf("signing key %d: %w", i, err)
		}
		var ops struct {
			KeyOps []string `json:"key_ops"`
		}
		_ = json.Unmarshal(r, &ops)
		key, err := newAsymmetricKey(jwk)
		if err != nil {
			return nil, fmt.Errorf("signing key %d: %w", i, err)
		}
		if _, dup := out.byKid[key.kid]; dup {
			return nil, fmt.Errorf("signing key %d: duplicate kid %q", i, key.kid)
		}
		out.byKid[key.kid] = key
		if slices.Contains(ops.KeyOps, "sign") {
			if key.signer == nil {
				return nil, fmt.Errorf("signing key %q has key_ops sign but no private part", key.kid)
			}
			if out.signer != nil {
				return nil, errors.New("signing keys: more than one key has key_ops sign")
			}
			out.signer = key
		}
		if key.signer != nil && firstPrivate == nil {
			firstPrivate = key
		}
	}
	if out.signer == nil {
		out.signer = firstPrivate
	}
	if out.signer == nil {
		return nil, errors.New("signing keys: no private key to sign with")
	}
	return out, nil
}

// WithSigningKeysFile reads a signing_keys_path file and calls WithSigningKeys.
func (k *Keys) WithSigningKeysFile(path string) (*Keys, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read signing keys: %w", err)
	}
	return k.WithSigningKeys(data)
}

func newAsymmetricKey(jwk jose.JSONWebKey) (*asymmetricKey, error) {
	if jwk.KeyID == "" {
		return nil, errors.New("a kid is required")
	}
	key := &asymmetricKey{kid: jwk.KeyID}
	switch pk := jwk.Key.(type) {
	case *ecdsa.PrivateKey:
		key.public, key.signer = &pk.PublicKey, pk
	case *ecdsa.PublicKey:
		key.public = pk
	case *rsa.PrivateKey:
		key.public, key.signer = &pk.PublicKey, pk
	case *rsa.PublicKey:
		key.public = pk
	default:
		return nil, fmt.Errorf("unsupported key type %T (ES256 and RS256 keys are supported)", jwk.Key)
	}
	switch pub := key.public.(type) {
	case *ecdsa.PublicKey:
		if pub.Curve != elliptic.P256() {
			return nil, errors.New("only P-256 EC keys (ES256) are supported")
		}
		key.alg, key.method = "ES256", jwt.SigningMethodES256
	case *rsa.PublicKey:
		if pub.N.BitLen() < 2048 {
			return nil, errors.New("RSA keys must have at least 2048 bits")
		}
		key.alg, key.method = "RS256", jwt.SigningMethodRS256
	}
	if jwk.Algorithm != "" && jwk.Algorithm != key.alg {
		return nil, fmt.Errorf("alg %q does not fit the key (want %s)", jwk.Algorithm, key.alg)
	}
	return key, nil
}

// SignUser signs a user access token: with the asymmetric signing key and its kid when one is configured,
// otherwise HS256 with the project secret (no kid).
func (k *Keys) SignUser(claims jwt.Claims) (string, error) {
	if k.signer == nil {
		return k.Sign(claims)
	}
	t := jwt.NewWithClaims(k.signer.method, claims)
	t.Header["kid"] = k.signer.kid
	return t.SignedString(k.signer.signer)
}

// validMethods are the algorithms Verify accepts: HS256 always, plus those of the configured keys.
func (k *Keys) validMethods() []string {
	methods := []string{jwt.SigningMethodHS256.Alg()}
	for _, key := range k.byKid {
		if !slices.Contains(methods, key.alg) {
			methods = append(methods, key.alg)
		}
	}
	return methods
}

// verificationKey picks the key for a token as Supabase Auth does: the asymmetric key named by kid, else the
// secret for HS256. A token whose algorithm does not fit the chosen key is rejected.
func (k *Keys) verificationKey(t *jwt.Token) (any, error) {
	if kid, _ := t.Header["kid"].(string); kid != "" {
		if key, ok := k.byKid[kid]; ok {
			if t.Method.Alg() != key.alg {
				return nil, fmt.Errorf("algorithm %s does not fit key %q", t.Method.Alg(), kid)
			}
			return key.public, nil
		}
	}
	if t.Method.Alg() == jwt.SigningMethodHS256.Alg() {
		return k.secret, nil
	}
	return nil, fmt.Errorf("no key for algorithm %s", t.Method.Alg())
}

// JWKS is the public key set served at /auth/v1/.well-known/jwks.json. HMAC secrets are never listed, so with
// only the project secret it is empty.
func (k *Keys) JWKS() map[string]any {
	keys := []jose.JSONWebKey{}
	for _, kid := range slices.Sorted(maps.Keys(k.byKid)) {
		key := k.byKid[kid]
		keys = append(keys, jose.JSONWebKey{Key: key.public, KeyID: kid, Algorithm: key.alg, Use: "sig"})
	}
	return map[string]any{"keys": keys}
}
