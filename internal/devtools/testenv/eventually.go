package testenv

import (
	"testing"
	"time"
)

// Eventually retries check until it returns "" or d has passed, and then fails t with check's last complaint:
// for what another process or server does in its own time (a schema reload, a replica's replay).
func Eventually(t testing.TB, d time.Duration, check func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		complaint := check()
		if complaint == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", d, complaint)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
