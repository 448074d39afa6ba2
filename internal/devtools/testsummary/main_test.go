package main

import (
	"strings"
	"testing"
)

// A stream as `go test -json` writes it: a passing package, a package with a failing and a skipped test, a
// package without tests, and a package that does not build.
const stream = `{"Action":"start","Package":"example.com/a"}
{"Action":"output","Package":"example.com/a","Output":"pgtest: PostgreSQL 17.4 (server_version_num 170004)\n"}
{"Action":"run","Package":"example.com/a","Test":"TestOK"}
{"Action":"output","Package":"example.com/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"example.com/a","Test":"TestOK","Output":"    a_test.go:9: quiet when passing\n"}
{"Action":"pass","Package":"example.com/a","Test":"TestOK","Elapsed":0.01}
{"Action":"output","Package":"example.com/a","Output":"PASS\n"}
{"Action":"pass","Package":"example.com/a","Elapsed":0.5}
{"Action":"output","Package":"example.com/b","Output":"pgtest: PostgreSQL 17.4 (server_version_num 170004)\n"}
{"Action":"run","Package":"example.com/b","Test":"TestBroken"}
{"Action":"output","Package":"example.com/b","Test":"TestBroken","Output":"=== RUN   TestBroken\n"}
{"Action":"output","Package":"example.com/b","Test":"TestBroken","Output":"    b_test.go:12: got 1, want 2\n"}
{"Action":"output","Package":"example.com/b","Test":"TestBroken","Output":"--- FAIL: TestBroken (0.00s)\n"}
{"Action":"fail","Package":"example.com/b","Test":"TestBroken","Elapsed":0}
{"Action":"run","Package":"example.com/b","Test":"TestBrowser"}
{"Action":"output","Package":"example.com/b","Test":"TestBrowser","Output":"=== RUN   TestBrowser\n"}
{"Action":"output","Package":"example.com/b","Test":"TestBrowser","Output":"    helpers.go:14: chromium not found: browser tests need it\n"}
{"Action":"output","Package":"example.com/b","Test":"TestBrowser","Output":"--- SKIP: TestBrowser (0.00s)\n"}
{"Action":"skip","Package":"example.com/b","Test":"TestBrowser","Elapsed":0}
{"Action":"run","Package":"example.com/b","Test":"TestQuietSkip"}
{"Action":"output","Package":"example.com/b","Test":"TestQuietSkip","Output":"--- SKIP: TestQuietSkip (0.00s)\n"}
{"Action":"skip","Package":"example.com/b","Test":"TestQuietSkip","Elapsed":0}
{"Action":"output","Package":"example.com/b","Output":"FAIL\n"}
{"Action":"fail","Package":"example.com/b","Elapsed":1.25}
{"Action":"skip","Package":"example.com/c"}
{"ImportPath":"example.com/d [example.com/d.test]","Action":"build-output","Output":"d/d.go:3:1: syntax error\n"}
{"ImportPath":"example.com/d [example.com/d.test]","Action":"build-fail"}
go vet said something
`

func TestSummary(t *testing.T) {
	var out strings.Builder
	failed := summarize(strings.NewReader(stream), &out)
	got := out.String()
	if !failed {
		t.Error("a failing test and a failed build were not reported as a failure")
	}
	for _, want := range []string{
		"ok  \texample.com/a\t0.500s\n",
		"    b_test.go:12: got 1, want 2\n--- FAIL: TestBroken (0.00s)\n",
		"FAIL\texample.com/b\t1.250s\n",
		"?   \texample.com/c\t[no test files]\n",
		"d/d.go:3:1: syntax error\n",
		"go vet said something\n",
		"\nPostgreSQL 17.4 ran the tests of example.com/a example.com/b\n",
		"\n2 tests skipped:\n",
		"SKIP example.com/b TestBrowser: helpers.go:14: chromium not found: browser tests need it\n",
		"SKIP example.com/b TestQuietSkip: (no reason given)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "quiet when passing") {
		t.Errorf("a passing test's output is shown:\n%s", got)
	}
}

func TestSummaryOfAPassingRun(t *testing.T) {
	var out strings.Builder
	if summarize(strings.NewReader(strings.SplitN(stream, `{"Action":"run","Package":"example.com/b"`, 2)[0]), &out) {
		t.Errorf("a passing run was reported as failed:\n%s", out.String())
	}
	if strings.Contains(out.String(), "skipped") {
		t.Errorf("a run without skips lists skips:\n%s", out.String())
	}
}
