package console

import (
	"encoding/json"
	"net/http"
	"regexp"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/pgreflect/pgreflect/auth"
)

// TokenLifetime is how long a token minted for GraphiQL's "Run as" lasts: long enough to try queries, short
// enough that one copied out of the page is soon worthless.
const TokenLifetime = 15 * time.Minute

// MintFunc signs an access token for role, and for a user (sub and email) when role is authenticated, valid
// for ttl.
type MintFunc func(role, sub, email string, ttl time.Duration) (string, error)

// Minter signs with the project's JWT secret (HS256, which the API always accepts) and Supabase's claims of
// a user access token. The console gets the function, never the secret.
func Minter(keys *auth.Keys) MintFunc {
	return func(role, sub, email string, ttl time.Duration) (string, error) {
		now := time.Now()
		claims := jwt.MapClaims{"role": role, "iat": now.Unix(), "exp": now.Add(ttl).Unix()}
		if sub != "" {
			claims["sub"], claims["aud"], claims["is_anonymous"] = sub, "authenticated", false
		}
		if email != "" {
			claims["email"] = email
		}
		return keys.Sign(claims)
	}
}

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// serveToken answers GET api/token?role=...&sub=...&email=...: a short-lived access token for GraphiQL's
// "Run as". Who may call it may read the service_role key already (api/credentials), which is more.
func (h *handler) serveToken(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	setSecurityHeaders(hdr)
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("Content-Type", contentTypes[".json"])
	fail := func(status int, msg string) {
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
	}
	if h.opts.MintToken == nil {
		fail(http.StatusNotFound, "this server mints no tokens for the console")
		return
	}
	q := r.URL.Query()
	role, sub, email := q.Get("role"), q.Get("sub"), q.Get("email")
	switch role {
	case "anon", "service_role":
		sub, email = "", ""
	case "authenticated":
		if !uuidPattern.MatchString(sub) {
			fail(http.StatusBadRequest, "role authenticated needs the user's ID (a UUID) as sub")
			return
		}
		if len(email) > 320 {
			fail(http.StatusBadRequest, "email is too long")
			return
		}
	default:
		fail(http.StatusBadRequest, "role must be anon, authenticated or service_role")
		return
	}
	token, err := h.opts.MintToken(role, sub, email, TokenLifetime)
	if err != nil {
		fail(http.StatusInternalServerError, "could not sign the token")
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": token, "expires_in": int(TokenLifetime.Seconds())})
}
