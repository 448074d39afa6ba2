package browsertest

import (
	"os"
	"strings"
	"testing"

	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
)

// Find returns Debian's chromium, skipping the test when it is missing, unless CI is set.
func Find(t testing.TB) string {
	t.Helper()
	return testenv.LookPath(t, "browser tests need it (apt-get install -y chromium)", "/usr/bin/chromium", "chromium", "chromium-browser")
}

// ScreenshotDir is where screenshots go: PGREFLECT_SCREENSHOT_DIR to keep them as artifacts, else the test's
// temp dir.
func ScreenshotDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("PGREFLECT_SCREENSHOT_DIR"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// CheckNoPageErrors fails t on exceptions, console errors and CSP violations in the pages so far, except
// for lines containing one of the expected strings (requests a page makes on purpose). The browser's own
// request for favicon.ico is always ignored.
func (b *Browser) CheckNoPageErrors(t testing.TB, expected ...string) {
	t.Helper()
next:
	for _, l := range b.PageLogs() {
		for _, e := range append(expected, "favicon.ico") {
			if strings.Contains(l, e) {
				continue next
			}
		}
		t.Errorf("page reported: %s", l)
	}
}
