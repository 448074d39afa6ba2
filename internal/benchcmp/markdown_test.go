package benchcmp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The Go benchmarks' section says what traces cost when they are off, against a request over HTTP.
func TestMarkdownTracingOff(t *testing.T) {
	lines := GoBenchmarkLines(strings.NewReader(`pkg: github.com/pgreflect/pgreflect/httpapi
BenchmarkGraphQLOverHTTP-2   	   10000	    250000 ns/op	   12000 B/op	     150 allocs/op
BenchmarkTracingOff/none-2   	867873843	         2.748 ns/op	       0 B/op	       0 allocs/op
BenchmarkTracingOff/off-2    	126562342	        18.92 ns/op	       0 B/op	       0 allocs/op
`))
	path := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	if err := (&Results{GoBenchmarks: lines}).WriteMarkdown(path, "", ""); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "- OpenTelemetry off: 19 ns a request, 0.008% of `BenchmarkGraphQLOverHTTP` (target < 0.1%)"; !strings.Contains(string(md), want) {
		t.Errorf("no line %q in\n%s", want, md)
	}
}
