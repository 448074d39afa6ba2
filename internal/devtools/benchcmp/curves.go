package benchcmp

import (
	"fmt"
	"strings"
)

// The cost curves of issue 18: how pgreflect and the ceiling scale with the size of an answer and with the
// number of concurrent connections, each point measured with the server's and Postgres' CPU so that a bend
// can be put down to the one that ran out.

// CurveRowLevels are the answer sizes of the rows curve; CurveConnectionLevels the concurrency of the
// connections curve.
var (
	CurveRowLevels        = []int{1, 100, 1000, 10000}
	CurveConnectionLevels = []int{1, 16, 64, 256}
)

// CurveSQL lets one request answer the rows curve's largest size: pg_graphql answers at most max_rows rows
// per page (30 unless a directive says otherwise), so account gets a directive of its own.
const CurveSQL = `comment on table public.account is e'@graphql({"max_rows": 10000})'`

// RowsQuery is the rows curve's request: the first n accounts with two more columns (anon). All sizes share
// the operation name, so that the ceiling serves them with one statement.
func RowsQuery(n int) Query {
	return Query{
		Name:        "Rows",
		Description: "the first n accounts: `accountCollection(first: $n) { edges { node { id email userId: user_id } } }` (anon)",
		As:          AsAnon,
		PgGraphQL: `query Rows($n: Int!) { accountCollection(first: $n) {
  edges { node { id email userId: user_id } } } }`,
		CeilingSQL: `select json_build_object('accountCollection', json_build_object('edges', coalesce(json_agg(
  json_build_object('node', json_build_object('id', a.id, 'email', a.email, 'userId', a.user_id)) order by a.id),
  '[]')))
from (select id, email, user_id from public.account order by id limit $1) a`,
		CeilingArgs: func(vars map[string]any) []any { return []any{vars["n"]} },
		Variant:     func(int) (map[string]any, int) { return map[string]any{"n": n}, 0 },
	}
}

// Curve is one cost curve: a contender's points at each level.
type Curve struct {
	Name string `json:"name"`
	// Level says what the levels count ("rows per response", "concurrent connections").
	Level string `json:"level"`
	// Query is what every point sends, with how many connections (Connections, 0 when that is the level).
	Query       string       `json:"query"`
	Connections int          `json:"connections,omitempty"`
	Seconds     float64      `json:"seconds_per_point"`
	Points      []CurvePoint `json:"points"`
}

// CurvePoint is one contender at one level.
type CurvePoint struct {
	Contender   string  `json:"contender"`
	Level       int     `json:"level"`
	Requests    int     `json:"requests"`
	Errors      int     `json:"errors"`
	FirstError  string  `json:"first_error,omitempty"`
	ReqPerSec   float64 `json:"req_per_sec"`
	BytesPerSec float64 `json:"bytes_per_sec"`
	P50Ms       float64 `json:"p50_ms"`
	P99Ms       float64 `json:"p99_ms"`
	// ServerCores and PostgresCores are CPU seconds per second of wall time: how many of the machine's cores
	// the server process and the cluster kept busy.
	ServerCores   float64 `json:"server_cores"`
	PostgresCores float64 `json:"postgres_cores"`
	// LoadCores is the same of the load generator (benchcmp itself), which shares the CPUs with both.
	LoadCores float64 `json:"load_generator_cores"`
}

// Point finds a contender's point at a level.
func (c *Curve) Point(contender string, level int) *CurvePoint {
	for i := range c.Points {
		if c.Points[i].Contender == contender && c.Points[i].Level == level {
			return &c.Points[i]
		}
	}
	return nil
}

// levels are the curve's levels in the order first measured.
func (c *Curve) levels() []int {
	var out []int
	seen := map[int]bool{}
	for _, p := range c.Points {
		if !seen[p.Level] {
			seen[p.Level] = true
			out = append(out, p.Level)
		}
	}
	return out
}

// contenders are the curve's contenders in the order first measured.
func (c *Curve) contenders() []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range c.Points {
		if !seen[p.Contender] {
			seen[p.Contender] = true
			out = append(out, p.Contender)
		}
	}
	return out
}

// Bends describes, per contender, how much each step of the curve gained over the one before (in the
// curve's measure: bytes per second for rows, requests per second for connections), and what kept the CPUs
// busy at the last level: the figures from which a reader sees where the curve flattens and who ran out.
func (c *Curve) Bends(measure func(CurvePoint) float64, unit string) []string {
	var out []string
	levels := c.levels()
	for _, name := range c.contenders() {
		var steps []string
		var last *CurvePoint
		for i, l := range levels {
			p := c.Point(name, l)
			if p == nil {
				continue
			}
			if i > 0 && last != nil && measure(*last) > 0 {
				steps = append(steps, fmt.Sprintf("%s→%s ×%.2f", levelLabel(last.Level), levelLabel(l), measure(*p)/measure(*last)))
			}
			last = p
		}
		if last == nil {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s %s; at %s the server kept %.2f cores busy, Postgres %.2f, the load generator %.2f",
			name, unit, strings.Join(steps, ", "), levelLabel(last.Level), last.ServerCores, last.PostgresCores, last.LoadCores))
	}
	return out
}

func levelLabel(n int) string {
	if n >= 1000 && n%1000 == 0 {
		return fmt.Sprintf("%d,000", n/1000)
	}
	return fmt.Sprint(n)
}

// ratios is pgreflect's measure over the ceiling's at each level, empty when either is missing throughout.
func (c *Curve) ratios(measure func(CurvePoint) float64) string {
	var out []string
	for _, l := range c.levels() {
		p, ce := c.Point("pgreflect", l), c.Point("ceiling", l)
		if p == nil || ce == nil || measure(*ce) == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%.2f at %s", measure(*p)/measure(*ce), levelLabel(l)))
	}
	return strings.Join(out, ", ")
}
