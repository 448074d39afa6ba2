package authapi

import (
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// The bucket: n at once, then one every window/n; and the map of addresses stays bounded under a flood of
// addresses, forgetting refilled ones first.
func TestRateLimiterBucketAndBound(t *testing.T) {
	l := newRateLimiter(3, 300*time.Second)
	now := time.Unix(1_000_000, 0)
	for i := range 3 {
		if !l.allow("a", now) {
			t.Fatalf("request %d refused", i+1)
		}
	}
	if l.allow("a", now) {
		t.Fatal("fourth request at once allowed")
	}
	if !l.allow("b", now) {
		t.Fatal("another address refused")
	}
	if l.allow("a", now.Add(99*time.Second)) || !l.allow("a", now.Add(101*time.Second)) {
		t.Fatal("the bucket does not refill one request per 100 s")
	}
	if l.retryAfter() != "100" {
		t.Errorf("Retry-After %s", l.retryAfter())
	}
	for i := range 3 * maxRateLimitClients {
		l.allow("flood-"+strconv.Itoa(i), now.Add(200*time.Second))
		if len(l.clients) > maxRateLimitClients {
			t.Fatalf("%d addresses remembered", len(l.clients))
		}
	}
	if newRateLimiter(0, time.Minute) != nil {
		t.Error("a limit of 0 is not off")
	}
}

func TestClientAddress(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "192.0.2.7:5555"
	if got := clientAddress(r, ""); got != "192.0.2.7" {
		t.Errorf("peer: %s", got)
	}
	if got := clientAddress(r, "X-Forwarded-For"); got != "192.0.2.7" {
		t.Errorf("header configured but absent: %s", got)
	}
	r.Header.Add("X-Forwarded-For", "6.6.6.6, 198.51.100.3")
	if got := clientAddress(r, "X-Forwarded-For"); got != "198.51.100.3" {
		t.Errorf("forwarded: %s", got)
	}
}
