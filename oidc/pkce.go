package oidc

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"strings"
)

// PKCE challenge methods as stored in auth.flow_state.
const (
	MethodS256  = "s256"
	MethodPlain = "plain"
)

// ParseChallengeMethod normalises a code_challenge_method (case-insensitive); ok is false for anything else.
func ParseChallengeMethod(m string) (method string, ok bool) {
	switch strings.ToLower(m) {
	case MethodS256:
		return MethodS256, true
	case MethodPlain:
		return MethodPlain, true
	}
	return "", false
}

// ValidChallenge reports whether a code challenge has RFC 7636's form: 43 to 128 unreserved characters.
func ValidChallenge(c string) bool {
	if len(c) < 43 || len(c) > 128 {
		return false
	}
	for i := 0; i < len(c); i++ {
		b := c[i]
		if !(b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '-' || b == '.' || b == '_' || b == '~') {
			return false
		}
	}
	return true
}

// VerifyChallenge checks a code verifier against the stored challenge in constant time.
func VerifyChallenge(method, challenge, verifier string) bool {
	var got string
	switch method {
	case MethodS256:
		sum := sha256.Sum256([]byte(verifier))
		got = base64.RawURLEncoding.EncodeToString(sum[:])
	case MethodPlain:
		got = verifier
	default:
		return false
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(challenge)) == 1
}
