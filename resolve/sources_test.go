package resolve

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
)

// routedDatabases returns the login role's pools of a primary and of its replica's stand-in (testenv.ReadOnlyDB:
// an answer shows where its request ran, and a mutation that reached the replica would fail), and a superuser
// connection to each that may write.
func routedDatabases(t testing.TB) (primary, replica *pgxpool.Pool, primaryAdmin, replicaAdmin *pgx.Conn) {
	t.Helper()
	primaryURL, primaryAdmin := testenv.SetupDB(t, testenv.RoutedSchema("on the primary"))
	replicaURL := testenv.ReadOnlyDB(t, testenv.RoutedSchema("on the replica"))
	replicaAdmin, err := pgx.Connect(t.Context(), replicaURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { replicaAdmin.Close(context.Background()) })
	if _, err := replicaAdmin.Exec(t.Context(), "set default_transaction_read_only = off"); err != nil {
		t.Fatal(err)
	}
	return testenv.LoginPool(t, primaryURL), testenv.LoginPool(t, replicaURL), primaryAdmin, replicaAdmin
}

// routedAnswer routes req as e does and answers it as anon on a connection of the source chosen.
func routedAnswer(t testing.TB, e *Engine, req Request) (ast.Operation, int, string) {
	t.Helper()
	op, src := e.Route(req)
	conn, err := src.Pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	session := Session{Role: "anon", Claims: map[string]any{"role": "anon"}, SearchPath: []string{"public"}}
	body, err := src.Engine.Answer(t.Context(), conn.Conn(), session, req)
	if err != nil {
		t.Fatal(err)
	}
	return op, src.Replica, string(body)
}

// Routing follows the operation of the parsed document, never the look of its text: a query goes to the
// replica, whatever words its comments and strings hold; a mutation goes to the primary, even behind a
// fragment named query, and an operation name chooses between the two. An embedder gets it with no HTTP
// server: the engine built with a primary and a replica.
func TestRouteFollowsTheParsedOperation(t *testing.T) {
	primary, replica, primaryAdmin, _ := routedDatabases(t)
	e := NewEngine(Options{Pool: primary, Replicas: []*pgxpool.Pool{replica}})
	const items = `itemCollection(orderBy: [{id: AscNullsLast}]) { edges { node { name } } }`
	const both = `query Q { ` + items + ` } mutation M { insertIntoitemCollection(objects: [{id: 3, name: "by name"}]) { affectedCount } }`
	cases := []struct {
		name      string
		req       Request
		op        ast.Operation
		onReplica bool
		answer    string
	}{
		{"shorthand query", Request{Query: `{ ` + items + ` }`}, ast.Query, true, "on the replica"},
		{"mutation in a comment", Request{Query: "# mutation {\n{ " + items + " }"}, ast.Query, true, "on the replica"},
		{"mutation in a string", Request{Query: `query Q($s: String = "mutation { x }") { ` + items + ` }`}, ast.Query, true, "on the replica"},
		{"mutation in a block string", Request{Query: `query Q($s: String = """ \""" mutation { x """) { ` + items + ` }`}, ast.Query, true, "on the replica"},
		{"mutation behind a fragment named query",
			Request{Query: `fragment query on itemInsertResponse { affectedCount } mutation { insertIntoitemCollection(objects: [{id: 2, name: "fragment"}]) { ...query } }`},
			ast.Mutation, false, `"affectedCount": 1`},
		{"operation name picks the query", Request{Query: both, OperationName: "Q"}, ast.Query, true, "on the replica"},
		{"operation name picks the mutation", Request{Query: both, OperationName: "M"}, ast.Mutation, false, `"affectedCount": 1`},
		{"a document that does not parse", Request{Query: `mutation {`}, ast.Query, true, `"errors"`},
		{"an operation name the document lacks", Request{Query: both, OperationName: "X"}, ast.Query, true, `"errors"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for range 2 { // parsed, then remembered
				op, replica, body := routedAnswer(t, e, c.req)
				if op != c.op || (replica == 1) != c.onReplica || !strings.Contains(body, c.answer) {
					t.Fatalf("%s on replica %d (0: the primary), answered %s; want %s on the replica %v, answering %s",
						op, replica, body, c.op, c.onReplica, c.answer)
				}
				if c.op == ast.Mutation {
					break // the row is there now
				}
			}
		})
	}
	var names string
	if err := primaryAdmin.QueryRow(t.Context(), "select string_agg(name, ', ' order by id) from item").Scan(&names); err != nil {
		t.Fatal(err)
	}
	if names != "on the primary, fragment, by name" {
		t.Errorf("the primary's rows after the mutations: %s", names)
	}
}

// A started engine reloads its replica's schemas when the primary announces a schema change, once the replica
// has replayed it (the stand-in, no standby, has at once), and only then: a change of the replica's database
// alone is announced to nobody. Starting reloads them too, since changes may have come before the watch did.
func TestStartedEngineFollowsThePrimarysChanges(t *testing.T) {
	primary, replica, primaryAdmin, replicaAdmin := routedDatabases(t)
	e := NewEngine(Options{Pool: primary, Replicas: []*pgxpool.Pool{replica}})
	ask := func(field string) string {
		t.Helper()
		op, onReplica, body := routedAnswer(t, e, Request{Query: `{ itemCollection { edges { node { ` + field + ` } } } }`})
		if op != ast.Query || onReplica != 1 {
			t.Fatalf("a query went to source %d as %s", onReplica, op)
		}
		return body
	}
	change := func(conn *pgx.Conn, column string) {
		t.Helper()
		if _, err := conn.Exec(t.Context(), "alter table item add column "+column+" text"); err != nil {
			t.Fatal(err)
		}
	}
	const noted = `{"data": {"itemCollection": {"edges": [{"node": {"%s": null}}]}}}`
	if got := ask("note"); !strings.Contains(got, "Unknown field") {
		t.Fatalf("before the change: %s", got)
	}
	change(replicaAdmin, "note")
	if got := ask("note"); !strings.Contains(got, "Unknown field") {
		t.Fatalf("an engine not started reloaded the replica's schema untold: %s", got)
	}
	if err := e.Start(t.Context(), WatchOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	testenv.Eventually(t, 5*time.Second, func() string {
		if got := ask("note"); got != fmt.Sprintf(noted, "note") {
			return "after the start, the replica answers " + got
		}
		return ""
	})

	change(replicaAdmin, "remark")
	time.Sleep(200 * time.Millisecond) // what an announcement to the engine would take to arrive
	if got := ask("remark"); !strings.Contains(got, "Unknown field") {
		t.Fatalf("the replica's schema was reloaded with no change announced on the primary: %s", got)
	}
	change(primaryAdmin, "remark")
	testenv.Eventually(t, 5*time.Second, func() string {
		if got := ask("remark"); got != fmt.Sprintf(noted, "remark") {
			return "after the primary's change, the replica answers " + got
		}
		return ""
	})
	e.Close()
	if err := e.Start(t.Context(), WatchOptions{}); err != nil {
		t.Errorf("started again after Close: %v", err)
	}
}

// An engine not started has nothing that waits for its replicas to replay a change: Invalidate, and the narrower
// invalidations after a GRANT or a change of some relations, drop each replica's schemas at once.
func TestInvalidateReloadsReplicasAtOnceWhenNotStarted(t *testing.T) {
	primary, replica, _, replicaAdmin := routedDatabases(t)
	e := NewEngine(Options{Pool: primary, Replicas: []*pgxpool.Pool{replica}})
	for _, c := range []struct {
		column     string
		invalidate func()
	}{
		{"note", e.Invalidate},
		{"remark", e.InvalidatePrivileges},
		{"comment", func() { e.InvalidateRelations(nil) }},
	} {
		req := Request{Query: `{ itemCollection { edges { node { ` + c.column + ` } } } }`}
		if _, onReplica, got := routedAnswer(t, e, req); onReplica != 1 || !strings.Contains(got, "Unknown field") {
			t.Fatalf("before the change, source %d answered %s", onReplica, got)
		}
		if _, err := replicaAdmin.Exec(t.Context(), "alter table item add column "+c.column+" text"); err != nil {
			t.Fatal(err)
		}
		if _, _, got := routedAnswer(t, e, req); !strings.Contains(got, "Unknown field") {
			t.Fatalf("the replica's schema was reloaded untold: %s", got)
		}
		c.invalidate()
		want := fmt.Sprintf(`{"data": {"itemCollection": {"edges": [{"node": {"%s": null}}]}}}`, c.column)
		if _, _, got := routedAnswer(t, e, req); got != want {
			t.Errorf("after the change of %s and its invalidation, the replica answers %s", c.column, got)
		}
	}
}

// BenchmarkRoute is what routing adds to each request: a remembered document's operation (hit), and the
// parse of one not seen before (miss), for a query of the size clients send.
func BenchmarkRoute(b *testing.B) {
	const query = `query Todos($first: Int, $after: Cursor) { todoCollection(first: $first, after: $after,
		orderBy: [{id: AscNullsLast}]) { edges { cursor node { id title done owner { id name } } } pageInfo { hasNextPage endCursor } } }`
	e := NewEngine(Options{})
	b.Run("hit", func(b *testing.B) {
		for b.Loop() {
			if op, _ := e.Route(Request{Query: query, OperationName: "Todos"}); op != ast.Query {
				b.Fatal(op)
			}
		}
	})
	b.Run("miss", func(b *testing.B) {
		for b.Loop() {
			if op := parsedOperation(Request{Query: query, OperationName: "Todos"}); op != ast.Query {
				b.Fatal(op)
			}
		}
	})
}

// When the primary does not say where its WAL is, the follower reloads the replicas' schemas at once and keeps
// doing so until it does: a replica that lags would otherwise load the old catalog again and keep it until the
// next change.
func TestFollowerReloadsReplicasUntilThePrimaryAnswers(t *testing.T) {
	primary, err := pgxpool.New(t.Context(), "postgres://nobody@127.0.0.1:1/none?connect_timeout=1") // nothing listens on port 1
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Close()
	replica := NewEngine(Options{})
	f := newReplicaFollower(primary, []*Engine{replica}, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { f.run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	before := replica.schemas.Generation()
	f.changedSchema()
	testenv.Eventually(t, 10*time.Second, func() string {
		if n := replica.schemas.Generation() - before; n < 3 {
			return fmt.Sprintf("the replica's schemas were dropped %d times, want a first time and again after that", n)
		}
		return ""
	})
}
