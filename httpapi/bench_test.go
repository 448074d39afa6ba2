package httpapi

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkGraphQLOverHTTP is pg_graphql's published benchmark request (`accountCollection(first: 1)`, which
// upstream measured at 2,205 req/s through PostgREST on 4 vCPU) sent by parallel clients over loopback HTTP,
// through API-key and JWT checks, the role switch and the database. ns/op is wall time per request across all
// clients, so 1e9/ns_per_op is requests per second on this machine.
func BenchmarkGraphQLOverHTTP(b *testing.B) {
	f := newFixture(b, `create table account(id serial primary key, email text not null);
		insert into account(email) select 'user' || i || '@example.com' from generate_series(1, 100) i;`)
	body := `{"query": "{ accountCollection(first: 1) { edges { node { id } } } }", "variables": {}}`
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.ReportAllocs()
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/graphql/v1", strings.NewReader(body))
			req.Header.Set("apikey", f.anon)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(got) != `{"data": {"accountCollection": {"edges": [{"node": {"id": 1}}]}}}` {
				b.Errorf("%d %s", resp.StatusCode, got)
				return
			}
		}
	})
}
