// Package auth holds the project's credentials and end-user records: API keys, JWT signing and verification,
// users, identities, sessions and refresh tokens.
package auth

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Keys signs and verifies the project's JWTs. API keys (anon, service_role) and, by default, user access tokens
// are HS256 with the project's JWT secret, as in Supabase. With asymmetric signing keys (WithSigningKeys) user
// access tokens are signed by the key marked for signing, with its kid, and tokens of every listed key verify.
type Keys struct {
	secret []byte
	// signer signs user access tokens; nil means HS256 with secret.
	signer *asymmetricKey
	// byKid holds the public half of every asymmetric key.
	byKid map[string]*asymmetricKey
}

// MinSecretLength is the shortest JWT secret accepted (Supabase asks for at least 32 characters).
const MinSecretLength = 32

// NewKeys returns the key set for a JWT secret.
func NewKeys(secret string) (*Keys, error) {
	if len(secret) < MinSecretLength {
		return nil, fmt.Errorf("JWT secret must be at least %d characters", MinSecretLength)
	}
	return &Keys{secret: []byte(secret)}, nil
}

// apiKeyLifetime matches the hosted platform's keys (about ten years).
const apiKeyLifetime = 10 * 365 * 24 * time.Hour

// SignAPIKey makes an API key for a role: an HS256 JWT with Supabase's hosted payload.
func (k *Keys) SignAPIKey(role, ref string) (string, error) {
	now := time.Now()
	claims := jwt.MapClaims{
		"iss":  "supabase",
		"ref":  ref,
		"role": role,
		"iat":  now.Unix(),
		"exp":  now.Add(apiKeyLifetime).Unix(),
	}
	return k.Sign(claims)
}

// Sign signs claims with the project secret (HS256).
func (k *Keys) Sign(claims jwt.Claims) (string, error) {
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(k.secret)
}

// ErrInvalidToken wraps every verification failure.
var ErrInvalidToken = errors.New("invalid JWT")

// ClockSkew is the leeway on a token's exp, nbf and iat, for clocks of issuers that run a little ahead or
// behind; PostgREST, which Supabase's gateway puts in front of the database, allows the same 30 seconds.
const ClockSkew = 30 * time.Second

// Verify checks a token's signature, expiry and issue time and returns its claims. Only the algorithms the
// project signs with are accepted: a token with alg "none" or an algorithm that does not fit the key is
// rejected, and so is a token issued in the future (beyond ClockSkew), which only a forger or a broken clock
// makes.
func (k *Keys) Verify(token string) (jwt.MapClaims, error) { return k.verifyAt(token, time.Now) }

func (k *Keys) verifyAt(token string, now func() time.Time) (jwt.MapClaims, error) {
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(token, claims, k.verificationKey, jwt.WithValidMethods(k.validMethods()),
		jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithLeeway(ClockSkew), jwt.WithTimeFunc(now))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	return claims, nil
}

const secretAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// RandomSecret returns a new 48-character JWT secret.
func RandomSecret() (string, error) { return randomString(48, secretAlphabet) }

// NewProjectRef returns a new 20-character project reference (lower-case letters, as Supabase's).
func NewProjectRef() (string, error) { return randomString(20, "abcdefghijklmnopqrstuvwxyz") }

func randomString(n int, alphabet string) (string, error) {
	b := make([]byte, n)
	max := big.NewInt(int64(len(alphabet)))
	for i := range b {
		v, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", fmt.Errorf("random: %w", err)
		}
		b[i] = alphabet[v.Int64()]
	}
	return string(b), nil
}
