package live

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the hub's Prometheus metrics; with no registerer they are counted but not served.
type metrics struct {
	subscriptions, cohorts   prometheus.Gauge
	refreshes, evaluations   prometheus.Counter
	statements               prometheus.Counter
	pushes, droppedConsumers prometheus.Counter
	refreshSeconds           prometheus.Histogram
	// The counters again, readable (Stats).
	nRefreshes, nEvaluations, nStatements, nPushes, nDrops atomic.Int64
	replicaRefreshes                                       atomic.Int64
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		subscriptions: prometheus.NewGauge(prometheus.GaugeOpts{Name: "pgreflect_live_subscriptions",
			Help: "Subscriptions held by this instance."}),
		cohorts: prometheus.NewGauge(prometheus.GaugeOpts{Name: "pgreflect_live_cohorts",
			Help: "Distinct (document, variables, role, search path) among the subscriptions: one statement each."}),
		refreshes: prometheus.NewCounter(prometheus.CounterOpts{Name: "pgreflect_live_refreshes_total",
			Help: "Cohort refreshes: one round trip each."}),
		evaluations: prometheus.NewCounter(prometheus.CounterOpts{Name: "pgreflect_live_evaluations_total",
			Help: "Executions of a cohort's query: one per distinct set of claims refreshed."}),
		statements: prometheus.NewCounter(prometheus.CounterOpts{Name: "pgreflect_live_statements_total",
			Help: "Statements that executed cohorts' queries: one per refresh when its subscribers are multiplexed."}),
		pushes: prometheus.NewCounter(prometheus.CounterOpts{Name: "pgreflect_live_pushes_total",
			Help: "Answers pushed to subscribers (only those that differ from the last one sent)."}),
		droppedConsumers: prometheus.NewCounter(prometheus.CounterOpts{Name: "pgreflect_live_dropped_consumers_total",
			Help: "Subscription connections closed because the client did not read its messages in time."}),
		refreshSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pgreflect_live_refresh_duration_seconds",
			Help:    "Time of one cohort refresh: connection, round trip and pushes.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}}),
	}
	if reg != nil {
		reg.MustRegister(m.subscriptions, m.cohorts, m.refreshes, m.evaluations, m.statements, m.pushes, m.droppedConsumers, m.refreshSeconds)
	}
	return m
}

func (m *metrics) refreshed(d time.Duration, evaluations, statements int) {
	m.refreshes.Inc()
	m.refreshSeconds.Observe(d.Seconds())
	m.evaluations.Add(float64(evaluations))
	m.statements.Add(float64(statements))
	m.nRefreshes.Add(1)
	m.nEvaluations.Add(int64(evaluations))
	m.nStatements.Add(int64(statements))
}

func (m *metrics) pushed() {
	m.pushes.Inc()
	m.nPushes.Add(1)
}

// ConsumerDropped counts a subscriber connection closed for not reading in time.
func (h *Hub) ConsumerDropped() {
	h.metrics.droppedConsumers.Inc()
	h.metrics.nDrops.Add(1)
}
