package testenv

import (
	"os/exec"
	"testing"
)

// fakeT records what a test would do instead of doing it.
type fakeT struct {
	testing.TB
	skipped, failed bool
}

func (f *fakeT) Helper()           {}
func (f *fakeT) Skip(args ...any)  { f.skipped = true }
func (f *fakeT) Fatal(args ...any) { f.failed = true }

func TestMissingToolSkipsLocallyAndFailsUnderCI(t *testing.T) {
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		f := &fakeT{}
		if p := LookPath(f, "the test needs it", "pgreflect-no-such-tool"); p != "" {
			t.Fatalf("CI=%q: found %q", ci, p)
		}
		if f.skipped != (ci == "") || f.failed != (ci != "") {
			t.Errorf("CI=%q: skipped %v, failed %v", ci, f.skipped, f.failed)
		}
	}
}

func TestPresentToolIsFound(t *testing.T) {
	want, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal("no sh on PATH")
	}
	t.Setenv("CI", "true")
	f := &fakeT{}
	if got := LookPath(f, "the test needs it", "pgreflect-no-such-tool", "sh"); got != want || f.skipped || f.failed {
		t.Errorf("got %q (skipped %v, failed %v), want %q", got, f.skipped, f.failed, want)
	}
}
