package testenv

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// NPMInstall installs the npm packages of dir (npm ci with a package-lock.json, else npm install). An install
// newer than package-lock.json is kept, so that only the first test of a run pays for it. Without npm it
// skips t, or fails it under CI.
func NPMInstall(t testing.TB, dir string) {
	t.Helper()
	lock := filepath.Join(dir, "package-lock.json")
	installed := filepath.Join(dir, "node_modules", ".package-lock.json")
	if li, err := os.Stat(lock); err == nil {
		if ii, err := os.Stat(installed); err == nil && !ii.ModTime().Before(li.ModTime()) {
			return
		}
	}
	npm := LookPath(t, "installing the JavaScript packages of "+dir+" needs it", "npm")
	args := []string{"install", "--no-audit", "--no-fund"}
	if _, err := os.Stat(lock); err == nil {
		args = []string{"ci", "--no-audit", "--no-fund"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
}
