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
	lines := GoBenchmarkLines(strings.NewReader(`pkg: github.com/pgreflect/pgreflect/internal/httpapi
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

// The cost curves come out as a table per curve, with each step's gain, the CPU at the last level, and
// pgreflect's ratio to the ceiling at every level.
func TestMarkdownCurves(t *testing.T) {
	r := &Results{Machine: Machine{CPUs: 2}, Setup: Setup{PoolSize: 8}, Curves: []Curve{{
		Name: "connections", Level: "concurrent connections", Query: "Q2", Seconds: 1,
		Points: []CurvePoint{
			{Contender: "pgreflect", Level: 1, ReqPerSec: 1000, BytesPerSec: 2e6, P99Ms: 2, ServerCores: 0.3, PostgresCores: 0.4},
			{Contender: "ceiling", Level: 1, ReqPerSec: 1250, BytesPerSec: 2.5e6, P99Ms: 1.5, ServerCores: 0.2, PostgresCores: 0.5},
			{Contender: "pgreflect", Level: 16, ReqPerSec: 4000, BytesPerSec: 8e6, P99Ms: 9, ServerCores: 0.7, PostgresCores: 0.9, LoadCores: 0.25},
			{Contender: "ceiling", Level: 16, ReqPerSec: 5000, BytesPerSec: 1e7, P99Ms: 7, ServerCores: 0.5, PostgresCores: 1.1},
		},
	}}}
	dir := t.TempDir()
	path := filepath.Join(dir, "BENCHMARKS.md")
	if err := r.WriteMarkdown(path, "", "bench/results.png"); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"![requests per second by concurrent connections](bench/curve-connections.png)",
		"| 16 | pgreflect | 4000 | 8.00 | 2000 | 0.00 | 9.00 | 0.70 | 0.90 | 0.25 | 0 |",
		"- pgreflect: req/s 1→16 ×4.00; at 16 the server kept 0.70 cores busy, Postgres 0.90, the load generator 0.25\n",
		"- pgreflect/ceiling req/s: 0.80 at 1, 0.80 at 16\n",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("no %q in\n%s", want, md)
		}
	}
	if err := r.WriteCurveCharts(dir); err != nil {
		t.Fatal(err)
	}
	for _, c := range CurveCharts["connections"] {
		if fi, err := os.Stat(filepath.Join(dir, c.File)); err != nil || fi.Size() == 0 {
			t.Errorf("chart %s: %v", c.File, err)
		}
	}
}

// Each query's ratio to the ceiling comes with its value in each round (the slots of one round run seconds
// apart), lowest first, so that a reader sees how far the machine moved it within the run.
func TestMarkdownRatioPerRound(t *testing.T) {
	r := &Results{Queries: []QueryInfo{{Name: "Q1"}}, Cells: []Cell{
		{Contender: "pgreflect", Query: "Q1", ReqPerSec: 900, RoundReqPerSec: []float64{1000, 800, 950}, P99Ms: 2},
		{Contender: "ceiling", Query: "Q1", ReqPerSec: 1000, RoundReqPerSec: []float64{1000, 1000, 1000}, P99Ms: 2},
	}}
	r.ComputeRatios()
	if got := r.Ratios[0].RoundsVsCeiling; len(got) != 3 || got[0] != 1 || got[1] != 0.8 || got[2] != 0.95 {
		t.Fatalf("ratios per round %v, want [1 0.8 0.95]", got)
	}
	path := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	if err := r.WriteMarkdown(path, "", ""); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "| Q1 | 0.90 (missed) | 0.80 0.95 1.00 | 1.00 (met) |"; !strings.Contains(string(md), want) {
		t.Errorf("no %q in\n%s", want, md)
	}
}
