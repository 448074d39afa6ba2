package live

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/pgreflect/pgreflect/resolve"
)

// BenchmarkCohortRefresh compares refreshing 1,000 subscribers of one live query (one cohort) in one statement,
// the same cohort in one round trip of one short transaction per subscriber's claims (the fallback), and
// answering each of them as a request of its own, which is what a server without multiplexing does at every
// poll.
func BenchmarkCohortRefresh(b *testing.B) {
	d := newDBFor(b)
	ctx := context.Background()
	const subscribers = 1000
	sessions := make([]resolve.Session, subscribers)
	for i := range sessions {
		user := uuid.New()
		sessions[i] = userSession(user)
		if _, err := d.admin.Exec(ctx, `insert into note (owner, body) select $1, 'note ' || n from generate_series(1, 3) n`, user); err != nil {
			b.Fatal(err)
		}
	}
	engine := resolve.NewEngine(resolve.Options{})
	req := resolve.Request{Query: noteSubscription}
	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Release()
	query := resolve.Request{Query: `{ noteCollection { edges { node { body } } } }`}
	b.Run(fmt.Sprintf("cohort of %d", subscribers), func(b *testing.B) {
		// The first refresh on a connection prepares the query, one transaction per subscriber.
		if _, err := engine.RefreshLive(ctx, conn.Conn(), req, sessions); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			r, err := engine.RefreshLive(ctx, conn.Conn(), req, sessions)
			if err != nil || len(r.Answers) != subscribers || r.Statements != 1 {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/subscribers, "µs/subscriber")
	})
	// Without the function the engine falls back to a transaction per subscriber.
	if _, err := d.admin.Exec(ctx, `revoke execute on function pgreflect.live_refresh(text[], text[], text[], text[]) from public`); err != nil {
		b.Fatal(err)
	}
	b.Run(fmt.Sprintf("cohort of %d, a transaction each", subscribers), func(b *testing.B) {
		engine := resolve.NewEngine(resolve.Options{})
		for b.Loop() {
			r, err := engine.RefreshLive(ctx, conn.Conn(), req, sessions)
			if err != nil || len(r.Answers) != subscribers || r.Statements != subscribers {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/subscribers, "µs/subscriber")
	})
	b.Run(fmt.Sprintf("%d requests", subscribers), func(b *testing.B) {
		for b.Loop() {
			for _, s := range sessions {
				engine.ExecuteAs(ctx, conn.Conn(), s, query)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/subscribers, "µs/subscriber")
	})
}
