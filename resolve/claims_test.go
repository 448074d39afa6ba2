package resolve

import (
	"context"
	"testing"
)

// claimsFixture has a row for each way a policy may read the caller's claims: auth.uid(), auth.jwt(), and the
// legacy per-claim setting request.jwt.claim.sub that PostgREST set before v10.
const claimsFixture = `
	create table doc(id int primary key, owner uuid, email text, legacy_owner text);
	comment on table doc is e'@graphql({"features": ["subscriptions"]})';
	alter table doc enable row level security;
	grant select on doc to authenticated;
	create policy by_uid on doc for select to authenticated using (owner = auth.uid());
	create policy by_jwt on doc for select to authenticated using (email = auth.jwt()->>'email');
	create policy by_legacy_setting on doc for select to authenticated
	  using (legacy_owner = current_setting('request.jwt.claim.sub', true));
	insert into doc values
	  (1, '11111111-1111-1111-1111-111111111111', null, null),
	  (2, null, 'alice@example.com', null),
	  (3, null, null, '11111111-1111-1111-1111-111111111111'),
	  (4, '22222222-2222-2222-2222-222222222222', 'bob@example.com', '22222222-2222-2222-2222-222222222222');`

// TestClaimSettings checks what policies see of the claims with the legacy per-claim settings off (the default)
// and on, for a request and for a subscription's refresh (one transaction per subscriber, then multiplexed in
// one statement): auth.uid() and auth.jwt() work both ways, a policy reading request.jwt.claim.sub only when
// they are on, and nobody sees another's rows.
func TestClaimSettings(t *testing.T) {
	const query = `{ docCollection(orderBy: [{id: AscNullsLast}]) { edges { node { id } } } }`
	alice := Session{Role: "authenticated", SearchPath: []string{"public"},
		Claims: map[string]any{"role": "authenticated", "sub": "11111111-1111-1111-1111-111111111111", "email": "alice@example.com"}}
	nobody := Session{Role: "authenticated", SearchPath: []string{"public"},
		Claims: map[string]any{"role": "authenticated", "sub": "33333333-3333-3333-3333-333333333333", "email": "nobody@example.com"}}
	const none = `{"data": {"docCollection": {"edges": []}}}`
	for _, tc := range []struct {
		legacy bool
		want   string
	}{
		{false, `{"data": {"docCollection": {"edges": [{"node": {"id": 1}}, {"node": {"id": 2}}]}}}`},
		{true, `{"data": {"docCollection": {"edges": [{"node": {"id": 1}}, {"node": {"id": 2}}, {"node": {"id": 3}}]}}}`},
	} {
		d := newTestDB(t, claimsFixture)
		for _, mode := range []StatementMode{StatementsPrepared, StatementsUnnamed} {
			d.engine = NewEngine(Options{LegacyClaimSettings: tc.legacy, StatementMode: mode})
			if got := string(d.engine.ExecuteAs(context.Background(), d.conn, alice, Request{Query: query})); got != tc.want {
				t.Errorf("legacy %v, %s: request\n got: %s\nwant: %s", tc.legacy, mode, got, tc.want)
			}
			if got := string(d.engine.ExecuteAs(context.Background(), d.conn, nobody, Request{Query: query})); got != none {
				t.Errorf("legacy %v, %s: request of another user after alice's: %s", tc.legacy, mode, got)
			}
			// The first refresh prepares the query (a transaction per subscriber) in the prepared mode, the
			// second runs as one statement; the unnamed mode multiplexes from the start.
			for round := range 2 {
				r, err := d.engine.RefreshLive(context.Background(), d.conn, Request{Query: "subscription " + query}, []Session{nobody, alice, nobody})
				if err != nil {
					t.Fatal(err)
				}
				if len(r.Answers) != 3 {
					t.Fatalf("%d answers", len(r.Answers))
				}
				for i, want := range []string{none, tc.want, none} {
					if got := string(r.Answers[i].Body); got != want {
						t.Errorf("legacy %v, %s, refresh %d (%d statements): subscriber %d\n got: %s\nwant: %s", tc.legacy, mode, round, r.Statements, i, got, want)
					}
				}
			}
		}
	}
}
