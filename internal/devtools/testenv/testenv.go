// Package testenv decides what a test does when a tool it needs is not installed. On a developer's machine it
// skips, so `go test` works with only Go and PostgreSQL; under CI (the CI variable set, as every CI service
// does) it fails, because a skipped test passes unnoticed and CI installs every tool (.ci/run).
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// CI reports whether the tests run under continuous integration.
func CI() bool { return os.Getenv("CI") != "" }

// LookPath returns the first of names found (a bare name on PATH, or a path). When none is, it skips t, or
// fails it under CI; need says what the test needs the tool for.
func LookPath(t testing.TB, need string, names ...string) string {
	t.Helper()
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	Missing(t, "%s is not installed; %s", names[0], need)
	return ""
}

// Missing skips t for a missing tool, or fails it under CI.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if CI() {
		t.Fatal(msg + " (CI is set: CI must run this test, so a missing tool fails it)")
		return
	}
	t.Skip(msg)
}
