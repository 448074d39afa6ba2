package auth

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
	lru "github.com/hashicorp/golang-lru/v2"
)

// TokenCache remembers tokens it has verified, so that the same token sent again (the anon key on every
// request, a user's access token for an hour) is not parsed and its signature checked again, as PostgREST's
// JWT cache does. An entry serves until the token would fail verification by its expiry, and at most MaxAge.
// It keeps the claims encoded as JSON too, as request.jwt.claims takes them, so that a request does not
// encode them again. Failures are not remembered. Safe for concurrent use; the claims it returns are shared
// and must not be modified.
type TokenCache struct {
	keys   *Keys
	maxAge time.Duration
	now    func() time.Time
	tokens *lru.Cache[string, cachedToken]
}

type cachedToken struct {
	claims  jwt.MapClaims
	encoded string
	until   time.Time
}

// TokenCacheMaxAge bounds how long a verified token is trusted without looking at it again.
const TokenCacheMaxAge = 5 * time.Minute

// NewTokenCache returns a cache of at most size tokens verified with keys.
func NewTokenCache(keys *Keys, size int) *TokenCache {
	c, err := lru.New[string, cachedToken](max(size, 1))
	if err != nil {
		panic(err) // size >= 1
	}
	return &TokenCache{keys: keys, maxAge: TokenCacheMaxAge, now: time.Now, tokens: c}
}

// Verify is Keys.Verify, answered from the cache when the token was verified before and is still good; encoded
// is the claims as JSON.
func (c *TokenCache) Verify(token string) (claims jwt.MapClaims, encoded string, err error) {
	now := c.now()
	if t, ok := c.tokens.Get(token); ok && now.Before(t.until) {
		return t.claims, t.encoded, nil
	}
	claims, err = c.keys.verifyAt(token, c.now)
	if err != nil {
		c.tokens.Remove(token)
		return nil, "", err
	}
	b, err := json.Marshal(claims)
	if err != nil {
		return nil, "", fmt.Errorf("encode the claims: %w", err)
	}
	until := now.Add(c.maxAge)
	if exp, err := claims.GetExpirationTime(); err == nil && exp != nil && exp.Add(ClockSkew).Before(until) {
		until = exp.Add(ClockSkew)
	}
	c.tokens.Add(token, cachedToken{claims: claims, encoded: string(b), until: until})
	return claims, string(b), nil
}
