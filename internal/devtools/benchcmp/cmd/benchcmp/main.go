// Command benchcmp runs the side-by-side HTTP comparison of `make bench` (see package benchcmp): it starts its
// own PostgreSQL, loads the dataset, starts pgreflect, the ceiling and PostGraphile v4 and v5 as separate
// processes, checks that they answer alike, drives them interleaved, runs the cost curves of pgreflect and the
// ceiling, and writes BENCHMARKS.md, a JSON file and the charts.
//
//	benchcmp [-duration 20s] [-rounds 4] [-pgreflect bin/pgreflect] [-go-bench file]
//	benchcmp ceiling    (the ceiling server; benchcmp starts itself this way)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/devtools/benchcmp"
	"github.com/pgreflect/pgreflect/internal/devtools/benchdata"
)

func main() {
	var err error
	if len(os.Args) > 1 && os.Args[1] == "ceiling" {
		err = runCeiling(os.Args[2:])
	} else {
		err = run(os.Args[1:])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcmp:", err)
		os.Exit(1)
	}
}

type options struct {
	duration, warmup time.Duration
	rounds, conns    int
	poolSize         int
	accounts         int
	pgreflectBin     string
	postgraphileDir  string
	postgraphile5Dir string
	outDir           string
	resultsDir       string
	goBench          string
	note             string
	findings         string
	contenders       []string
	// queries, when set, limits the run to these queries (by name); pgreflectFlags are added to pgreflect's
	// command line, so that one setting can be measured against the ceiling (e.g. "--pool-share 1").
	queries        []string
	pgreflectFlags []string
	slowClients    bool
	// curves runs issue 18's cost curves; curveQuery is the connections curve's query, curveDuration each
	// point's measured time.
	curves        bool
	curveQuery    string
	curveDuration time.Duration
	// args is the command line, for BENCHMARKS.md.
	args []string
}

func parseOptions(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("benchcmp", flag.ContinueOnError)
	durationDefault := 16 * time.Second
	if v := os.Getenv("BENCH_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return o, fmt.Errorf("BENCH_DURATION: %w", err)
		}
		durationDefault = d
	}
	accountsDefault := benchdata.Full
	if v := os.Getenv("BENCH_ACCOUNTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return o, fmt.Errorf("BENCH_ACCOUNTS: %w", err)
		}
		accountsDefault = n
	}
	var contenders, queries, pgreflectFlags string
	fs.DurationVar(&o.duration, "duration", durationDefault, "measured time per contender and query, split into the rounds (env BENCH_DURATION)")
	fs.IntVar(&o.rounds, "rounds", 8, "rounds: each runs every query on every contender once (pgreflect and the ceilings back to back)")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured load per contender and query before the rounds")
	fs.IntVar(&o.conns, "conns", 16, "concurrent connections of the load generator")
	fs.IntVar(&o.poolSize, "pool-size", 8, "database connections of pgreflect and of the ceiling (the same for both)")
	fs.IntVar(&o.accounts, "accounts", accountsDefault, "accounts of the dataset (blogs 2x, posts 20x; env BENCH_ACCOUNTS)")
	fs.StringVar(&o.pgreflectBin, "pgreflect", "bin/pgreflect", "the pgreflect binary (make build)")
	fs.StringVar(&o.postgraphileDir, "postgraphile-dir", "testdata/bench/postgraphile", "PostGraphile v4's npm project (npm ci runs there when node_modules is missing)")
	fs.StringVar(&o.postgraphile5Dir, "postgraphile5-dir", "testdata/bench/postgraphile5", "PostGraphile v5's npm project, with its Node 22 (npm ci runs there when node_modules is missing)")
	fs.StringVar(&o.outDir, "out", ".", "directory of BENCHMARKS.md")
	fs.StringVar(&o.resultsDir, "results", "bench", "directory of results.json and results.png")
	fs.StringVar(&o.goBench, "go-bench", "", "output of `go test -bench` to include in BENCHMARKS.md")
	fs.StringVar(&o.note, "note", "", "a paragraph for BENCHMARKS.md about what this run stands for")
	fs.StringVar(&o.findings, "findings", "bench/findings.md", "hand-written findings (profiles, EXPLAIN) appended to BENCHMARKS.md when the file exists")
	fs.StringVar(&contenders, "contenders", "pgreflect,ceiling,ceiling-duties,postgraphile,postgraphile5", "comma-separated contenders (postgraphile is v4; ceiling-duties is the ceiling doing pgreflect's per-request duties too)")
	fs.StringVar(&queries, "queries", "", "comma-separated queries to measure (default: all)")
	fs.StringVar(&pgreflectFlags, "pgreflect-flags", "", "space-separated flags added to pgreflect's command line, e.g. \"--pool-share 1\"")
	fs.BoolVar(&o.slowClients, "slow-clients", true, "also run the slow-clients scenario on pgreflect")
	fs.BoolVar(&o.curves, "curves", true, "also run the cost curves (rows per response, concurrent connections) on pgreflect and the ceiling")
	fs.StringVar(&o.curveQuery, "curve-query", "Q2", "the query of the connections curve")
	var curveDuration time.Duration
	fs.DurationVar(&curveDuration, "curve-duration", 0, "measured time per contender and level of a curve, split into the rounds (default: -duration / 2, at least 4s)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.contenders = strings.Split(contenders, ",")
	if queries != "" {
		o.queries = strings.Split(queries, ",")
	}
	o.pgreflectFlags = strings.Fields(pgreflectFlags)
	o.curveDuration = curveDuration
	if o.rounds < 1 || o.conns < 1 || o.duration < time.Duration(o.rounds)*100*time.Millisecond ||
		o.curveDuration != 0 && o.curveDuration < time.Duration(o.rounds)*100*time.Millisecond {
		return o, errors.New("need at least 1 round, 1 connection and 100ms per round (of -duration and -curve-duration)")
	}
	if o.curveDuration <= 0 {
		o.curveDuration = max(4*time.Second, o.duration/2)
	}
	o.args = args
	return o, nil
}

func run(args []string) error {
	o, err := parseOptions(args)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b := &bench{o: o, started: time.Now(), loadStart: benchcmp.LoadAverage()}
	defer b.close()
	steps := []struct {
		name string
		run  bool
		step func(context.Context) error
	}{
		{"start: PostgreSQL, dataset, servers", true, b.start},
		{"check: same rows from every contender", true, b.check},
		{"queries: warm-up and rounds", true, b.measure},
		{"slow clients", o.slowClients, b.measureSlowClients},
		{"cost curves", o.curves, b.measureCurves},
	}
	for _, s := range steps {
		if !s.run {
			continue
		}
		t0 := time.Now()
		if err := s.step(ctx); err != nil {
			return err
		}
		b.phases = append(b.phases, benchcmp.Phase{Name: s.name, Seconds: time.Since(t0).Seconds()})
	}
	return b.report(ctx)
}

// runCeiling serves the ceiling until SIGTERM; its settings come from the environment so that no secret is
// on a command line.
func runCeiling(args []string) error {
	fs := flag.NewFlagSet("ceiling", flag.ContinueOnError)
	port := fs.Int("port", 0, "HTTP port on 127.0.0.1")
	accounts := fs.Int("accounts", benchdata.Full, "accounts of the dataset (for the requests' variants)")
	poolSize := fs.Int("pool-size", 8, "database connections")
	duties := fs.Bool("duties", false, "do pgreflect's per-request duties too (request line, metrics, request id, headers, deadlines, statement timeout)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveCeiling(ctx, *port, *accounts, *poolSize, *duties, os.Getenv("BENCH_DATABASE_URL"), os.Getenv("BENCH_JWT_SECRET"),
		auth.APIKeys{Anon: os.Getenv("BENCH_ANON_KEY"), ServiceRole: os.Getenv("BENCH_SERVICE_ROLE_KEY")})
}

// userURL is the cluster's URL of database db for another role (the cluster trusts loopback connections).
func userURL(superURL, user string) string {
	u, _ := url.Parse(superURL)
	u.User = url.User(user)
	return u.String()
}

func commandOutput(name string, args ...string) string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

func mustAbs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}
