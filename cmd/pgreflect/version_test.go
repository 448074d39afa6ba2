package main

import (
	"bytes"
	"context"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestVersion(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"version"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	// A test binary has no -X version and no module version: the fallback names itself.
	if !regexp.MustCompile(`^pgreflect (devel|devel-[0-9a-f]+(-dirty)?) \(go1\.[0-9.]+[^,]*, [a-z0-9]+/[a-z0-9]+\)\n$`).MatchString(out.String()) {
		t.Errorf("version without -X: %q", out.String())
	}
	// Issue 22: `pgreflect --version` was an unknown command.
	for _, flag := range []string{"--version", "-v"} {
		var flagOut bytes.Buffer
		if code := run([]string{flag}, &flagOut, &errOut); code != 0 || flagOut.String() != out.String() {
			t.Errorf("pgreflect %s: exit %d, %q; want 0 and %q", flag, code, flagOut.String(), out.String())
		}
	}
	saved := version
	t.Cleanup(func() { version = saved })
	version = "v1.2.3-4-gabcdef0"
	out.Reset()
	run([]string{"version"}, &out, &errOut)
	if !strings.HasPrefix(out.String(), "pgreflect v1.2.3-4-gabcdef0 (") {
		t.Errorf("version with -X: %q", out.String())
	}
}

func TestServerFlags(t *testing.T) {
	for _, args := range [][]string{{"--log-format", "xml"}, {"--log-level", "verbose"}, {"--log-level", "WARN+1"}, {"--pool-size", "-1"}, {"--read-timeout", "-1s"}, {"--statement-mode", "named"}} {
		fs := newFlagSet("serve", &bytes.Buffer{})
		f := addServerFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		if err := f.check(); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	fs := newFlagSet("serve", &bytes.Buffer{})
	f := addServerFlags(fs)
	if err := fs.Parse([]string{"--log-format", "text", "--pool-size", "5", "--statement-mode", "unnamed"}); err != nil || f.check() != nil {
		t.Fatal(err)
	}
	if f.statementMode != "unnamed" {
		t.Errorf("statement mode %q", f.statementMode)
	}
	var logs bytes.Buffer
	f.logger(&logs).Info("serving", slog.String("addr", "127.0.0.1:1"))
	if !strings.Contains(logs.String(), "level=INFO msg=serving addr=127.0.0.1:1") {
		t.Errorf("text log: %q", logs.String())
	}
	f.logFormat = "json"
	logs.Reset()
	f.logger(&logs).Info("serving", "grace", 10*time.Second, slog.Group("limits", slog.Duration("read_timeout", 1500*time.Millisecond)))
	if !strings.HasPrefix(logs.String(), `{"time":`) || !strings.Contains(logs.String(), `"msg":"serving"`) {
		t.Errorf("json log: %q", logs.String())
	}
	// Issue 22: JSON logs printed durations as nanoseconds (10000000000) where text logs print 10s.
	if !strings.Contains(logs.String(), `"grace":"10s"`) || !strings.Contains(logs.String(), `"limits":{"read_timeout":"1.5s"}`) {
		t.Errorf("json log durations: %q", logs.String())
	}
}

// --log-level: in both formats a line below the level is not written, one at or above it is; the default writes
// info lines (a request line per request) but not debug ones.
func TestLogLevelFlag(t *testing.T) {
	for _, tc := range []struct {
		args        []string
		wrote, left slog.Level
	}{
		{nil, slog.LevelInfo, slog.LevelDebug},
		{[]string{"--log-level", "debug"}, slog.LevelDebug, slog.LevelDebug - 1},
		{[]string{"--log-level", "warn"}, slog.LevelWarn, slog.LevelInfo},
		{[]string{"--log-level", "error", "--log-format", "json"}, slog.LevelError, slog.LevelWarn},
		{[]string{"--log-level", "warn", "--log-format", "json"}, slog.LevelWarn, slog.LevelInfo},
	} {
		fs := newFlagSet("serve", &bytes.Buffer{})
		f := addServerFlags(fs)
		if err := fs.Parse(tc.args); err != nil || f.check() != nil {
			t.Fatalf("%v: %v %v", tc.args, err, f.check())
		}
		var logs bytes.Buffer
		logger := f.logger(&logs)
		logger.Log(context.Background(), tc.left, "left out")
		logger.Log(context.Background(), tc.wrote, "written")
		if out := logs.String(); strings.Contains(out, "left out") || !strings.Contains(out, "written") {
			t.Errorf("%v: %q, want only the %s line", tc.args, out, tc.wrote)
		}
	}
}
