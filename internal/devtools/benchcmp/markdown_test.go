package benchcmp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The Go benchmarks' section says what traces cost when they are off, against a request over HTTP, and when
// they are on, against off.
func TestMarkdownTracingOff(t *testing.T) {
	lines := GoBenchmarkLines(strings.NewReader(`pkg: github.com/pgreflect/pgreflect/httpapi
BenchmarkGraphQLOverHTTP-2   	   10000	    250000 ns/op	   12000 B/op	     150 allocs/op
BenchmarkTracingOff/none-2   	867873843	         2.748 ns/op	       0 B/op	       0 allocs/op
BenchmarkTracingOff/off-2    	126562342	        18.92 ns/op	       0 B/op	       0 allocs/op
BenchmarkTracing-2   	     100	  33052191 ns/op	    163553 ns/req-off	    178075 ns/req-sampled	    174796 ns/req-unsampled	         1.089 sampled/off	         1.069 unsampled/off
`))
	path := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	if err := (&Results{GoBenchmarks: lines}).WriteMarkdown(path, "", ""); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"- OpenTelemetry off: 19 ns a request, 0.008% of `BenchmarkGraphQLOverHTTP` (target < 0.1%)",
		"nothing sampled 1.07, every request sampled 1.09\n",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("no line %q in\n%s", want, md)
		}
	}
}
