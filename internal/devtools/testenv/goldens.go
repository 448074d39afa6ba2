package testenv

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Goldens are the golden files of a package's tests, in one directory, with a note of the ones the tests ask
// for: a case renamed or removed leaves its golden file behind, read by nothing and checking nothing, and a
// full run of the package names it (AfterRun).
type Goldens struct {
	dir, pattern string
	mu           sync.Mutex
	read         map[string]bool
}

// NewGoldens keeps the golden files of dir that match pattern (filepath.Match, e.g. "*.golden").
func NewGoldens(dir, pattern string) *Goldens {
	return &Goldens{dir: dir, pattern: pattern, read: map[string]bool{}}
}

// Path is the path of the golden file name, noted as one a test reads (or writes with -update).
func (g *Goldens) Path(name string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.read[name] = true
	return filepath.Join(g.dir, name)
}

// Check compares got with the golden file name, or with update writes got there instead: the one way the
// packages' tests that share golden files read and rewrite them.
func (g *Goldens) Check(t testing.TB, name, got string, update bool) {
	t.Helper()
	path := g.Path(name)
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (-update rewrites it; read the diff): %s", path, firstDifference(string(want), got))
	}
}

// firstDifference shows the first line where two texts differ.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d\nwant: %s\n got: %s", i+1, wl, gl)
		}
	}
	return ""
}

// Orphans are the golden files no test has asked for so far.
func (g *Goldens) Orphans() ([]string, error) {
	files, err := filepath.Glob(filepath.Join(g.dir, g.pattern))
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var orphans []string
	for _, f := range files {
		if !g.read[filepath.Base(f)] {
			orphans = append(orphans, f)
		}
	}
	slices.Sort(orphans)
	return orphans, nil
}

// AfterRun is for TestMain, given the exit code of the run (m.Run, pgtest.Main): after a passing run of every
// test (no -run or -skip, which leave goldens unread for good reason) it names the orphans and fails the run.
func (g *Goldens) AfterRun(code int) int {
	return g.afterRun(os.Stderr, code, !flagSet("test.run") && !flagSet("test.skip"))
}

func (g *Goldens) afterRun(w io.Writer, code int, full bool) int {
	if code != 0 || !full {
		return code
	}
	orphans, err := g.Orphans()
	if err != nil {
		fmt.Fprintf(w, "goldens: %v\n", err)
		return 1
	}
	for _, f := range orphans {
		fmt.Fprintf(w, "FAIL: golden file %s is read by no test: remove it, or the test that lost it\n", f)
	}
	if len(orphans) > 0 {
		return 1
	}
	return code
}

func flagSet(name string) bool {
	f := flag.Lookup(name)
	return f != nil && f.Value.String() != ""
}
