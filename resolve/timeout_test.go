package resolve

import (
	"testing"
	"time"
)

// A role's statement_timeout comes back as ALTER ROLE stored it; the request's deadline is derived from it.
func TestParseTimeout(t *testing.T) {
	for in, want := range map[string]time.Duration{"8000": 8 * time.Second, "500ms": 500 * time.Millisecond,
		"8s": 8 * time.Second, "1.5min": 90 * time.Second, "2h": 2 * time.Hour, "0": 0, "250us": 250 * time.Microsecond} {
		if got, ok := parseTimeout(in); !ok || got != want {
			t.Errorf("parseTimeout(%q) = %s, %v; want %s", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "fast", "5 fortnights", "-1s"} {
		if got, ok := parseTimeout(bad); ok {
			t.Errorf("parseTimeout(%q) = %s, want not ok", bad, got)
		}
	}
}
