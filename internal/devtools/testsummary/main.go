// Command testsummary runs `go test -json` with the arguments it is given and prints what a person needs from
// it: a line per package as `go test` prints it, the output of failing tests, and at the end the tests that
// were skipped, each with the reason it gave, so that a run by hand shows what it did not check, and the
// PostgreSQL versions the packages' tests ran on (pgtest reports each), so that a run on another version shows
// that it did. It exits with go test's status.
//
//	go run ./internal/devtools/testsummary -race -count=1 ./...     (make test)
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/pgreflect/pgreflect/pgtest"
)

func main() {
	cmd := exec.Command("go", append([]string{"test", "-json"}, os.Args[1:]...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	failed := summarize(out, os.Stdout)
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		os.Exit(exit.ExitCode())
	case err != nil:
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	case failed:
		os.Exit(1)
	}
}

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string // build output
	Test       string
	Elapsed    float64
	Output     string
}

// skipped is a test that did not run to the end, with what it said.
type skipped struct {
	pkg, test, reason string
}

// summarize reads the event stream from r, writes the summary to w, and reports whether anything failed.
func summarize(r io.Reader, w io.Writer) (failed bool) {
	output := map[string][]string{} // by package + "\x00" + test; a test's output until it ends
	var skips []skipped
	postgres := map[string][]string{} // PostgreSQL version -> the packages whose tests ran on it
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// Not an event (go vet's or the toolchain's own words): pass it on.
			fmt.Fprintln(w, sc.Text())
			continue
		}
		key := e.Package + "\x00" + e.Test
		switch e.Action {
		case "build-output":
			fmt.Fprint(w, e.Output)
		case "build-fail":
			failed = true
		case "output":
			output[key] = append(output[key], e.Output)
			if v, ok := strings.CutPrefix(e.Output, pgtest.VersionLinePrefix); ok && e.Test == "" {
				v = strings.Fields(v)[0]
				postgres[v] = append(postgres[v], e.Package)
			}
		case "pass":
			delete(output, key)
			if e.Test == "" {
				fmt.Fprintf(w, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
			}
		case "skip":
			if e.Test != "" {
				skips = append(skips, skipped{e.Package, e.Test, skipReason(output[key])})
			} else {
				fmt.Fprintf(w, "?   \t%s\t[no test files]\n", e.Package)
			}
			delete(output, key)
		case "fail":
			failed = true
			// What the test (or the package, outside its tests) printed shows only when it fails.
			said := strings.Join(output[key], "")
			fmt.Fprint(w, said)
			if e.Test == "" && !strings.Contains(said, "FAIL\t"+e.Package+" ") {
				fmt.Fprintf(w, "FAIL\t%s\t%.3fs\n", e.Package, e.Elapsed)
			}
			delete(output, key)
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(w, "testsummary: reading go test's output:", err)
		failed = true
	}
	versions := slices.Sorted(maps.Keys(postgres))
	for _, v := range versions {
		fmt.Fprintf(w, "\nPostgreSQL %s ran the tests of %s\n", v, strings.Join(postgres[v], " "))
	}
	if len(skips) > 0 {
		// Under CI (CI set), a test that lacks a tool it needs fails instead of skipping.
		fmt.Fprintf(w, "\n%d tests skipped:\n", len(skips))
		for _, s := range skips {
			fmt.Fprintf(w, "SKIP %s %s: %s\n", s.pkg, s.test, s.reason)
		}
	}
	return failed
}

// skipReason is what a skipped test logged: its log lines without the "=== RUN" and "--- SKIP" framing.
func skipReason(lines []string) string {
	var said []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		said = append(said, t)
	}
	if len(said) == 0 {
		return "(no reason given)"
	}
	return strings.Join(said, " ")
}
