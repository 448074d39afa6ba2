package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// BearerToken returns the token of an "Authorization: Bearer <token>" header, the scheme in any case and the
// token trimmed; ok is false when the header is absent, names another scheme, or carries no token.
func BearerToken(r *http.Request) (token string, ok bool) {
	return ParseBearer(r.Header.Get("Authorization"))
}

// ParseBearer reads the token of an Authorization value "Bearer <token>" (the scheme in any case), as it comes
// in a header or in a WebSocket's connection_init payload.
func ParseBearer(authorization string) (token string, ok bool) {
	scheme, rest, found := strings.Cut(authorization, " ")
	token = strings.TrimSpace(rest)
	if !found || !strings.EqualFold(scheme, "bearer") || token == "" {
		return "", false
	}
	return token, true
}

// SecretDigest is the SHA-256 of a secret that requests present (the management token): a presented value is
// compared with it in constant time whatever its length, and the secret itself need not be kept. The digest
// of no secret matches nothing.
type SecretDigest struct {
	sum [sha256.Size]byte
	set bool
}

// NewSecretDigest digests secret; an empty secret gives the digest that matches nothing.
func NewSecretDigest(secret string) SecretDigest {
	if secret == "" {
		return SecretDigest{}
	}
	return SecretDigest{sum: sha256.Sum256([]byte(secret)), set: true}
}

// IsSet reports whether there is a secret to match.
func (d SecretDigest) IsSet() bool { return d.set }

// Matches reports whether presented is the secret.
func (d SecretDigest) Matches(presented string) bool {
	p := sha256.Sum256([]byte(presented))
	return subtle.ConstantTimeCompare(p[:], d.sum[:]) == 1 && d.set
}
