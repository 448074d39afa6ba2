package benchcmp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
)

// Results are one run of the comparison, as written to the JSON file and rendered into BENCHMARKS.md.
type Results struct {
	Date       string       `json:"date"`
	Machine    Machine      `json:"machine"`
	Setup      Setup        `json:"setup"`
	Commands   []string     `json:"commands"`
	Queries    []QueryInfo  `json:"queries"`
	Contenders []string     `json:"contenders"`
	Checks     []string     `json:"checks"`
	Cells      []Cell       `json:"cells"`
	Ratios     []Ratio      `json:"ratios"`
	PeakRSS    []ProcessRSS `json:"peak_rss"`
	// SlowClients is issue 21's scenario, when pgreflect ran.
	SlowClients *SlowClients `json:"slow_clients,omitempty"`
	// Curves are issue 18's cost curves (pgreflect beside the ceiling), when they ran.
	Curves []Curve `json:"curves,omitempty"`
	// Phases are how long each part of the comparison took, to keep make bench's total time in view.
	Phases []Phase `json:"phases,omitempty"`
	// GoBenchmarks are the result lines of `go test -bench` from the same `make bench`.
	GoBenchmarks []string `json:"go_benchmarks,omitempty"`
	// Findings is hand-written Markdown (what profiles and EXPLAIN showed), kept beside the results.
	Findings string `json:"-"`
}

// Machine describes where the run happened.
type Machine struct {
	CPUs        int    `json:"cpus"`
	CPUModel    string `json:"cpu_model"`
	MemoryBytes int64  `json:"memory_bytes"`
	Kernel      string `json:"kernel"`
	Go          string `json:"go"`
	PostgreSQL  string `json:"postgresql"`
	Node        string `json:"node"`
	// LoadBefore and LoadAfter are /proc/loadavg when the run started and ended: other work on the machine.
	LoadBefore string `json:"loadavg_before"`
	LoadAfter  string `json:"loadavg_after"`
}

// Setup is how the run was configured.
type Setup struct {
	Accounts         int     `json:"accounts"`
	Blogs            int     `json:"blogs"`
	Posts            int     `json:"posts"`
	Connections      int     `json:"connections"`
	PoolSize         int     `json:"pool_size"`
	Rounds           int     `json:"rounds"`
	SlotSeconds      float64 `json:"slot_seconds"`
	WarmupSeconds    float64 `json:"warmup_seconds"`
	Variants         int     `json:"variants"`
	DataLoadSeconds  float64 `json:"data_load_seconds"`
	PostgresSettings string  `json:"postgres_settings"`
}

// QueryInfo names a query.
type QueryInfo struct {
	Name          string `json:"name"`
	Description   string `json:"description"`
	PgGraphQL     string `json:"pg_graphql"`
	PostGraphile  string `json:"postgraphile"`
	PostGraphile5 string `json:"postgraphile5,omitempty"`
}

// Cell is one contender on one query, summed over the rounds.
type Cell struct {
	Contender  string  `json:"contender"`
	Query      string  `json:"query"`
	Requests   int     `json:"requests"`
	Errors     int     `json:"errors"`
	FirstError string  `json:"first_error,omitempty"`
	Seconds    float64 `json:"seconds"`
	ReqPerSec  float64 `json:"req_per_sec"`
	// RoundReqPerSec is the req/s of each round's slot, in round order.
	RoundReqPerSec []float64 `json:"round_req_per_sec,omitempty"`
	P50Ms          float64   `json:"p50_ms"`
	P99Ms          float64   `json:"p99_ms"`
	// ServerCPUus and PostgresCPUus are CPU microseconds per request of the server process and of all the
	// cluster's processes (/proc utime+stime).
	ServerCPUus   float64 `json:"server_cpu_us_per_req"`
	PostgresCPUus float64 `json:"postgres_cpu_us_per_req"`
	// PgTimeus is pg_stat_statements' execution plus planning time per request.
	PgTimeus         float64 `json:"pg_exec_plus_plan_us_per_req"`
	StatementsPerReq float64 `json:"statements_per_req"`
	PlansPerReq      float64 `json:"plans_per_req"`
	// MainPlansPerCall is plans/calls of the statement that took the most time: ~1 when Postgres plans it on
	// every execution, ~0 when it reuses a plan.
	MainPlansPerCall float64 `json:"main_statement_plans_per_call"`
	MainStatement    string  `json:"main_statement"`
	// Statements are the cell's statements by pg_stat_statements, most time first.
	Statements  []StatementStat `json:"statements"`
	ServerRSSMB float64         `json:"server_rss_mb"`
}

// StatementStat is one statement's pg_stat_statements figures over a cell's rounds.
type StatementStat struct {
	Query string `json:"query"`
	Calls int64  `json:"calls"`
	Plans int64  `json:"plans"`
	// Ms is total_exec_time + total_plan_time.
	Ms float64 `json:"ms"`
}

// Ratio compares pgreflect with the others on one query.
type Ratio struct {
	Query string `json:"query"`
	// ThroughputVsCeiling is pgreflect's req/s over the ceiling's (target ≥ 0.95).
	ThroughputVsCeiling float64 `json:"throughput_vs_ceiling"`
	// RoundsVsCeiling is the same ratio in each round, of two slots run within seconds of each other: their
	// spread shows how far the machine moved the ratio within the run.
	RoundsVsCeiling []float64 `json:"rounds_throughput_vs_ceiling,omitempty"`
	// P99VsCeiling is pgreflect's p99 over the ceiling's (target ≤ 1.2).
	P99VsCeiling float64 `json:"p99_vs_ceiling"`
	// ThroughputVsDuties and P99VsDuties are the same against the ceiling doing pgreflect's per-request duties
	// too (Ceiling.WithDuties): what the engine alone costs.
	ThroughputVsDuties float64 `json:"throughput_vs_ceiling_duties"`
	P99VsDuties        float64 `json:"p99_vs_ceiling_duties"`
	// ThroughputVsPostGraphile is pgreflect's req/s over PostGraphile v4's.
	ThroughputVsPostGraphile float64 `json:"throughput_vs_postgraphile"`
	// ThroughputVsPostGraphile5 is pgreflect's req/s over PostGraphile v5's (target ≥ 3 on Q2–Q5).
	ThroughputVsPostGraphile5 float64 `json:"throughput_vs_postgraphile5"`
}

// Phase is one part of a run and its wall time.
type Phase struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// ProcessRSS is a server's peak resident memory over the run.
type ProcessRSS struct {
	Contender string  `json:"contender"`
	PeakMB    float64 `json:"peak_mb"`
}

// Cell finds a contender's cell for a query.
func (r *Results) Cell(contender, query string) *Cell {
	for i := range r.Cells {
		if r.Cells[i].Contender == contender && r.Cells[i].Query == query {
			return &r.Cells[i]
		}
	}
	return nil
}

// ComputeRatios fills Ratios from the cells.
func (r *Results) ComputeRatios() {
	r.Ratios = nil
	div := func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return a / b
	}
	for _, q := range r.Queries {
		p, c, g := r.Cell("pgreflect", q.Name), r.Cell("ceiling", q.Name), r.Cell("postgraphile", q.Name)
		g5, d := r.Cell("postgraphile5", q.Name), r.Cell("ceiling-duties", q.Name)
		if p == nil {
			continue
		}
		ratio := Ratio{Query: q.Name}
		if c != nil {
			ratio.ThroughputVsCeiling = div(p.ReqPerSec, c.ReqPerSec)
			ratio.P99VsCeiling = div(p.P99Ms, c.P99Ms)
			if len(p.RoundReqPerSec) == len(c.RoundReqPerSec) {
				for i, rate := range p.RoundReqPerSec {
					ratio.RoundsVsCeiling = append(ratio.RoundsVsCeiling, div(rate, c.RoundReqPerSec[i]))
				}
			}
		}
		if d != nil {
			ratio.ThroughputVsDuties = div(p.ReqPerSec, d.ReqPerSec)
			ratio.P99VsDuties = div(p.P99Ms, d.P99Ms)
		}
		if g != nil {
			ratio.ThroughputVsPostGraphile = div(p.ReqPerSec, g.ReqPerSec)
		}
		if g5 != nil {
			ratio.ThroughputVsPostGraphile5 = div(p.ReqPerSec, g5.ReqPerSec)
		}
		r.Ratios = append(r.Ratios, ratio)
	}
}

// WriteJSON writes the results to path.
func (r *Results) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// DescribeMachine reads the processor, memory and kernel from /proc.
func DescribeMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "model name" {
				m.CPUModel = strings.TrimSpace(value)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				m.MemoryBytes = kb << 10
			}
		}
	}
	m.LoadAfter = LoadAverage()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

// LoadAverage is the first three fields of /proc/loadavg.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// GoBenchmarkLines keeps the result lines of `go test -bench` output, with the package each belongs to.
func GoBenchmarkLines(r io.Reader) []string {
	var out []string
	pkg := ""
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimPrefix(rest, "github.com/pgreflect/pgreflect/")
			continue
		}
		if benchLine.MatchString(line) {
			out = append(out, fmt.Sprintf("%-14s %s", pkg, strings.Join(strings.Fields(line), " ")))
		}
	}
	return out
}

// goBenchMetric finds a metric (such as "ns/op") of a benchmark in the kept lines.
func goBenchMetric(lines []string, name, unit string) (float64, bool) {
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) < 3 || !strings.HasPrefix(f[1], name) {
			continue
		}
		if rest := strings.TrimPrefix(f[1], name); rest != "" && !regexp.MustCompile(`^-\d+$`).MatchString(rest) {
			continue
		}
		for i := 3; i < len(f); i++ {
			if f[i] == unit {
				v, err := strconv.ParseFloat(f[i-1], 64)
				return v, err == nil
			}
		}
	}
	return 0, false
}
