package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// SessionLifetime is how long the login form's cookie opens the console: a working day, after which the token
// is asked for again.
const SessionLifetime = 12 * time.Hour

// Login attempts: an address that gets the token wrong loginAttempts times waits out loginWindow, and so does
// everyone once loginAttemptsAll failures pile up in a window (many addresses, or one behind a proxy that
// shows them all as one). At 20 tries a minute a management token's 160 bits stay out of reach.
const (
	loginAttempts    = 5
	loginAttemptsAll = 20
	loginWindow      = time.Minute
	// maxTrackedAddresses bounds the failure counts kept; past it every address counts as limited until the
	// window ends, which is the safe side.
	maxTrackedAddresses = 4096
)

// sessions issues and checks the console's session cookies: an id and the time of issue, signed with a key
// derived from the management token, so that any instance of the project checks them without shared state.
// One session is revoked by its id (Sign out), every session issued so far by moving notBefore (Sign out
// everywhere); neither needs a new management token. Revocations live in the process: a restart forgets those
// of single sessions, never the expiry.
type sessions struct {
	key []byte
	now func() time.Time

	mu        sync.Mutex
	revoked   map[string]time.Time // session id -> when it would expire anyway
	notBefore time.Time
	failures  map[string]*failureCount
	allFails  failureCount
}

type failureCount struct {
	n     int
	start time.Time
}

func newSessions(token string, now func() time.Time) *sessions {
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte("pgreflect console session v2"))
	return &sessions{key: mac.Sum(nil), now: now, revoked: map[string]time.Time{}, failures: map[string]*failureCount{}}
}

// sessionPayload is 16 random bytes of id and the issue time in Unix seconds.
const sessionPayload = 16 + 8

func (s *sessions) sign(payload []byte) []byte {
	mac := hmac.New(sha256.New, s.key)
	mac.Write(payload)
	return mac.Sum(nil)
}

// issue returns a new session cookie value.
func (s *sessions) issue() (string, error) {
	payload := make([]byte, sessionPayload)
	if _, err := rand.Read(payload[:16]); err != nil {
		return "", err
	}
	binary.BigEndian.PutUint64(payload[16:], uint64(s.now().Unix()))
	return base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(s.sign(payload)), nil
}

// parse checks a cookie value's signature and returns its id and time of issue.
func (s *sessions) parse(value string) (id string, issued time.Time, ok bool) {
	p, sig, found := strings.Cut(value, ".")
	payload, err1 := base64.RawURLEncoding.DecodeString(p)
	mac, err2 := base64.RawURLEncoding.DecodeString(sig)
	if !found || err1 != nil || err2 != nil || len(payload) != sessionPayload || !hmac.Equal(mac, s.sign(payload)) {
		return "", time.Time{}, false
	}
	return string(payload[:16]), time.Unix(int64(binary.BigEndian.Uint64(payload[16:])), 0), true
}

// valid reports whether a cookie value opens the console now: signed, not expired, not revoked.
func (s *sessions) valid(value string) bool {
	id, issued, ok := s.parse(value)
	if !ok {
		return false
	}
	now := s.now()
	if now.Sub(issued) >= SessionLifetime || issued.After(now.Add(time.Minute)) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if issued.Before(s.notBefore) {
		return false
	}
	_, revoked := s.revoked[id]
	return !revoked
}

// revoke ends one session, or with all every session issued until now.
func (s *sessions) revoke(value string, all bool) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if all {
		// Cookies carry whole seconds: a session issued in this second ends too, and the next second's are new.
		s.notBefore = now.Truncate(time.Second).Add(time.Second)
		clear(s.revoked)
		return
	}
	id, issued, ok := s.parse(value)
	if !ok {
		return
	}
	for k, expires := range s.revoked {
		if !now.Before(expires) {
			delete(s.revoked, k) // expired anyway: no longer worth remembering
		}
	}
	s.revoked[id] = issued.Add(SessionLifetime)
}

// allowLogin reports whether addr may try a token now, and if not for how long it waits.
func (s *sessions) allowLogin(addr string) (bool, time.Duration) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if wait := s.allFails.wait(now, loginAttemptsAll); wait > 0 {
		return false, wait
	}
	if f := s.failures[addr]; f != nil {
		if wait := f.wait(now, loginAttempts); wait > 0 {
			return false, wait
		}
	}
	if len(s.failures) >= maxTrackedAddresses {
		return false, loginWindow
	}
	return true, 0
}

// failedLogin counts a wrong token from addr.
func (s *sessions) failedLogin(addr string) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.allFails.add(now)
	for a, f := range s.failures {
		if now.Sub(f.start) >= loginWindow {
			delete(s.failures, a)
		}
	}
	f := s.failures[addr]
	if f == nil {
		if len(s.failures) >= maxTrackedAddresses {
			return // allowLogin refuses everyone until the window ends
		}
		f = &failureCount{}
		s.failures[addr] = f
	}
	f.add(now)
}

func (f *failureCount) add(now time.Time) {
	if now.Sub(f.start) >= loginWindow {
		f.n, f.start = 0, now
	}
	f.n++
}

// wait is how long until the window of a count that reached limit ends; 0 when it has not.
func (f *failureCount) wait(now time.Time, limit int) time.Duration {
	if f.n < limit || now.Sub(f.start) >= loginWindow {
		return 0
	}
	return f.start.Add(loginWindow).Sub(now)
}

// clientAddress is the peer's IP, the unit of the login limit (a forwarding header is the client's to forge).
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
