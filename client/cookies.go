package client

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Cookie storage in the format of Supabase's SSR helpers (@supabase/ssr), so that a Go server and a
// supabase-js page of the same site read each other's cookies: the session is JSON under the storage key
// sb-<first label of the API host>-auth-token, stored as "base64-" + base64url and split into <key>.0,
// <key>.1, ... when it is longer than maxChunkSize; the PKCE verifier is a JSON string under
// <key>-code-verifier.
const (
	base64Prefix = "base64-"
	// maxChunkSize is @supabase/ssr's: a chunk and its attributes stay under the browsers' 4096-byte limit.
	maxChunkSize = 3180
	// sessionCookieMaxAge is @supabase/ssr's default (the longest browsers keep a cookie); the session's own
	// expiry is inside the value.
	sessionCookieMaxAge = 400 * 24 * 60 * 60
	// verifierCookieMaxAge bounds the time between the sign-in redirect and the callback.
	verifierCookieMaxAge = 10 * 60
)

// storageKey is supabase-js's default storage key for a project URL.
func storageKey(baseURL string) string {
	host := "localhost"
	if u, err := url.Parse(baseURL); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	return "sb-" + strings.SplitN(host, ".", 2)[0] + "-auth-token"
}

// encodeCookieValue is @supabase/ssr's "base64url" cookie encoding of a stored value.
func encodeCookieValue(v any) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return base64Prefix + base64.RawURLEncoding.EncodeToString(raw), nil
}

// decodeCookieValue reads a stored value in either encoding @supabase/ssr has written: "base64-" +
// base64url, or the plain JSON of older versions.
func decodeCookieValue(s string, out any) error {
	raw := []byte(s)
	if rest, ok := strings.CutPrefix(s, base64Prefix); ok {
		b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(rest, "="))
		if err != nil {
			return fmt.Errorf("cookie value: %w", err)
		}
		raw = b
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("cookie value: %w", err)
	}
	return nil
}

// splitChunks cuts an encoded value into cookies named key (when it fits) or key.0, key.1, ...
func splitChunks(key, value string) []*http.Cookie {
	if len(value) <= maxChunkSize {
		return []*http.Cookie{{Name: key, Value: value}}
	}
	var out []*http.Cookie
	for i := 0; len(value) > 0; i++ {
		n := min(len(value), maxChunkSize)
		out = append(out, &http.Cookie{Name: key + "." + strconv.Itoa(i), Value: value[:n]})
		value = value[n:]
	}
	return out
}

// joinChunks reassembles a value from the request's cookies: key itself, else key.0, key.1, ... up to the
// first missing chunk.
func joinChunks(r *http.Request, key string) string {
	if c, err := r.Cookie(key); err == nil && c.Value != "" {
		return c.Value
	}
	var b strings.Builder
	for i := 0; ; i++ {
		c, err := r.Cookie(key + "." + strconv.Itoa(i))
		if err != nil || c.Value == "" {
			break
		}
		b.WriteString(c.Value)
	}
	return b.String()
}

// chunkNames lists the request's cookies that hold key or one of its chunks.
func chunkNames(r *http.Request, key string) []string {
	var names []string
	for _, c := range r.Cookies() {
		if c.Name == key {
			names = append(names, c.Name)
		} else if i, ok := strings.CutPrefix(c.Name, key+"."); ok {
			if _, err := strconv.Atoi(i); err == nil {
				names = append(names, c.Name)
			}
		}
	}
	sort.Strings(names)
	return names
}

// cookieStore writes the cookies of one project: Secure, HttpOnly (the browser's scripts never see the
// tokens), SameSite=Lax (sent on the top-level navigation back from the provider), on the whole site.
type cookieStore struct {
	key string
}

func (s cookieStore) attributes(c *http.Cookie, maxAge int) *http.Cookie {
	c.Path = "/"
	c.Secure = true
	c.HttpOnly = true
	c.SameSite = http.SameSiteLaxMode
	c.MaxAge = maxAge
	return c
}

// setValue writes value under key, chunked as needed, and deletes the request's chunks of key that the new
// value no longer uses (a shorter session, or one chunk instead of several).
func (s cookieStore) setValue(w http.ResponseWriter, r *http.Request, key, value string, maxAge int) {
	written := map[string]bool{}
	for _, c := range splitChunks(key, value) {
		written[c.Name] = true
		http.SetCookie(w, s.attributes(c, maxAge))
	}
	for _, name := range chunkNames(r, key) {
		if !written[name] {
			http.SetCookie(w, s.attributes(&http.Cookie{Name: name}, -1))
		}
	}
}

// remove deletes key and its chunks.
func (s cookieStore) remove(w http.ResponseWriter, r *http.Request, key string) {
	for _, name := range chunkNames(r, key) {
		http.SetCookie(w, s.attributes(&http.Cookie{Name: name}, -1))
	}
}

func (s cookieStore) verifierKey() string { return s.key + "-code-verifier" }

// supabase-js 2.119+ also keeps each PKCE flow's verifier in a slot of its own, <key>-flow-<id>-code-verifier,
// listed in <key>-flows-code-verifier, and (with its experimental appendPkceFlowIdToRedirects) names the
// flow in the redirect's sb_flow_id parameter, so that sign-ins started in two tabs do not overwrite each
// other's verifier.
const flowIDParam = "sb_flow_id"

var flowIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{8,64}$`)

func (s cookieStore) flowVerifierKey(flowID string) string {
	return s.key + "-flow-" + flowID + "-code-verifier"
}

func (s cookieStore) flowIndexKey() string { return s.key + "-flows-code-verifier" }

// verifier reads the PKCE verifier of the flow (its slot when flowID is set, as supabase-js does, else the
// fixed cookie). supabase-js stores "<verifier>/PASSWORD_RECOVERY" for password recovery, which has no place
// in provider sign-in, so only the part before a slash counts.
func (s cookieStore) verifier(r *http.Request, flowID string) string {
	key := s.verifierKey()
	if flowID != "" {
		key = s.flowVerifierKey(flowID)
	}
	var v string
	if decodeCookieValue(joinChunks(r, key), &v) != nil {
		return ""
	}
	v, _, _ = strings.Cut(v, "/")
	return v
}

func (s cookieStore) saveVerifier(w http.ResponseWriter, r *http.Request, verifier string) error {
	v, err := encodeCookieValue(verifier)
	if err != nil {
		return fmt.Errorf("encode verifier cookie: %w", err)
	}
	s.setValue(w, r, s.verifierKey(), v, verifierCookieMaxAge)
	return nil
}

// removeVerifier deletes the flow's verifier once it has been used: the fixed cookie when it was the one
// used or holds the same verifier, and the flow's slot (named by flowID, or found by its value when the
// redirect did not name the flow) with its entry in the index.
func (s cookieStore) removeVerifier(w http.ResponseWriter, r *http.Request, flowID, verifier string) {
	if flowID == "" || s.verifier(r, "") == verifier {
		s.remove(w, r, s.verifierKey())
	}
	if flowID != "" {
		s.remove(w, r, s.flowVerifierKey(flowID))
	}
	var index []string
	if decodeCookieValue(joinChunks(r, s.flowIndexKey()), &index) != nil {
		return
	}
	kept := slices.DeleteFunc(slices.Clone(index), func(id string) bool {
		if id == flowID {
			return true
		}
		if verifier == "" || !flowIDPattern.MatchString(id) || s.verifier(r, id) != verifier {
			return false
		}
		s.remove(w, r, s.flowVerifierKey(id))
		return true
	})
	switch {
	case len(kept) == len(index):
	case len(kept) == 0:
		s.remove(w, r, s.flowIndexKey())
	default:
		if v, err := encodeCookieValue(kept); err == nil {
			s.setValue(w, r, s.flowIndexKey(), v, sessionCookieMaxAge)
		}
	}
}

// session reads the request's session; nil when there is none or it cannot be read.
func (s cookieStore) session(r *http.Request) *Session {
	v := joinChunks(r, s.key)
	if v == "" {
		return nil
	}
	var sess Session
	if decodeCookieValue(v, &sess) != nil || sess.AccessToken == "" || sess.RefreshToken == "" {
		return nil
	}
	return &sess
}

func (s cookieStore) saveSession(w http.ResponseWriter, r *http.Request, sess *Session) error {
	v, err := encodeCookieValue(sess)
	if err != nil {
		return fmt.Errorf("encode session cookie: %w", err)
	}
	s.setValue(w, r, s.key, v, sessionCookieMaxAge)
	return nil
}
