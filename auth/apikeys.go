package auth

import (
	"crypto/subtle"
	"net/http"
)

// APIKeys are the project's API keys, which every API request must present (Supabase's gateway checks them).
type APIKeys struct {
	Anon, ServiceRole string
}

// The gateway's answers (401) to a missing or unknown key.
const (
	MsgNoAPIKey      = "No API key found in request"
	MsgInvalidAPIKey = "Invalid API key"
)

// APIKeyFromRequest reads the key from the apikey header, or the apikey query parameter as the gateway also
// accepts.
func APIKeyFromRequest(r *http.Request) string {
	if k := r.Header.Get("apikey"); k != "" {
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
