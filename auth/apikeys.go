package auth

import (
	"crypto/subtle"
	"net/http"

	"github.com/golang-jwt/jwt/v5"
)

// APIKeys are the project's API keys, which every API request must present (Supabase's gateway checks them).
type APIKeys struct {
	Anon, ServiceRole string
}

// The gateway's answers (401) to a missing or unknown key, and the API's to credentials past the key.
const (
	MsgNoAPIKey      = "No API key found in request"
	MsgInvalidAPIKey = "Invalid API key"
	// MsgBearerRequired: an Authorization header that is not "Bearer <JWT>".
	MsgBearerRequired = "Authorization header must be Bearer <JWT>"
	// MsgRoleClaim: a role claim that is there but says nothing usable (not a string, or empty).
	MsgRoleClaim = "JWT role claim must be a non-empty string"
)

// APIKeyFromRequest reads the key from the apikey header, or the apikey query parameter as the gateway also
// accepts.
func APIKeyFromRequest(r *http.Request) string {
	// The header's canonical spelling: Get would make it of "apikey" anew for every request.
	if k := r.Header.Get("Apikey"); k != "" {
		return k
	}
	return r.URL.Query().Get("apikey")
}

// Role names the role a key stands for, "anon" or "service_role", or "" when it is not one of the project's
// keys. The comparison takes the same time whichever key matches.
func (k APIKeys) Role(key string) string {
	role := ""
	if k.Anon != "" && subtle.ConstantTimeCompare([]byte(key), []byte(k.Anon)) == 1 {
		role = "anon"
	}
	if k.ServiceRole != "" && subtle.ConstantTimeCompare([]byte(key), []byte(k.ServiceRole)) == 1 {
		role = "service_role"
	}
	return role
}

// KeyRole is the gateway's check of a presented key: the role it stands for, or the refusal (401) of a missing
// or unknown key.
func (k APIKeys) KeyRole(key string) (role, refusal string) {
	if key == "" {
		return "", MsgNoAPIKey
	}
	if role = k.Role(key); role == "" {
		return "", MsgInvalidAPIKey
	}
	return role, ""
}

// TokenVerifier checks a JWT and returns its claims, also encoded as JSON (TokenCache).
type TokenVerifier interface {
	Verify(token string) (claims jwt.MapClaims, encoded string, err error)
}

// Caller is who a request's credentials say it acts as: the role its statements run as and the JWT claims
// they see.
type Caller struct {
	Role          string
	Claims        jwt.MapClaims
	EncodedClaims string
}

// Authenticate is the one reading of an API request's credentials, wherever they come from (HTTP headers, a
// subscription's connection_init payload): the API key names a role; the bearer token of authorization, when
// there is one, is the JWT, else the key itself is (the keys are JWTs); the JWT must verify; its role claim
// chooses the role, and only an absent claim falls back to the key's role, as PostgREST's anonymous role does
// (a claim that is there but unusable is a broken or forged token, not an anonymous one). refusal is the 401
// message for the client when the credentials do not hold. Whether the role may be assumed is the caller's
// question: it needs the database.
func (k APIKeys) Authenticate(key, authorization string, tokens TokenVerifier) (c Caller, refusal string) {
	keyRole, refusal := k.KeyRole(key)
	if refusal != "" {
		return Caller{}, refusal
	}
	token := key
	if authorization != "" {
		bearer, ok := ParseBearer(authorization)
		if !ok {
			return Caller{}, MsgBearerRequired
		}
		token = bearer
	}
	claims, encoded, err := tokens.Verify(token)
	if err != nil {
		return Caller{}, err.Error()
	}
	role := keyRole
	if v, present := claims["role"]; present {
		name, isString := v.(string)
		if !isString || name == "" {
			return Caller{}, MsgRoleClaim
		}
		role = name
	}
	return Caller{Role: role, Claims: claims, EncodedClaims: encoded}, ""
}
