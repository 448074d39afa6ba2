package testenv

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestGoldensNameTheFilesNoTestRead(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.golden", "b.golden", "c.golden", "input.sql"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g := NewGoldens(dir, "*.golden")
	if p := g.Path("a.golden"); p != filepath.Join(dir, "a.golden") {
		t.Errorf("Path = %s", p)
	}
	g.Path("c.golden")
	g.Path("new.golden") // about to be written by -update: not an orphan, not an error
	orphans, err := g.Orphans()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(dir, "b.golden")}; !slices.Equal(orphans, want) {
		t.Errorf("orphans %v, want %v", orphans, want)
	}
	var out strings.Builder
	if got := g.afterRun(&out, 3, true); got != 3 || out.Len() > 0 {
		t.Errorf("a failing run: code %d, output %q", got, out.String())
	}
	if got := g.afterRun(&out, 0, false); got != 0 || out.Len() > 0 {
		t.Errorf("a run with -run: code %d, output %q", got, out.String())
	}
	if got := g.afterRun(&out, 0, true); got != 1 || !strings.Contains(out.String(), "b.golden is read by no test") {
		t.Errorf("a full run: code %d, output %q", got, out.String())
	}
	g.Path("b.golden")
	out.Reset()
	if got := g.afterRun(&out, 0, true); got != 0 || out.Len() > 0 {
		t.Errorf("every golden read: code %d, output %q", got, out.String())
	}
}
