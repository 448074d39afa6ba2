// Package resolve answers GraphQL requests the way pg_graphql does: it parses the request with gqlparser,
// validates it against the schema generated for the caller's role, plans it, compiles the plan to SQL with
// sqlgen and runs it in one pipelined round trip, returning pg_graphql's response body.
//
// It is a library: a Go program can resolve a request on any pgx connection, inside its own transaction, as
// that session's current role and search path (Engine.Execute). The HTTP server uses Engine.Answer, which
// switches to the request's role and JWT claims inside the request's own transaction.
//
// The engine owns its data sources when it is given them (Options.Pool, Options.Replicas): Route tells a request's
// operation from its parsed document and picks the source to run it on (queries on the read replicas, in turn),
// and Start follows the schema changes pgreflect's setup announces, reloading each replica's schemas once it
// has replayed the change (sources.go, watch.go, replicas.go). An engine without them needs neither.
//
// A request goes through four stages, and the file names say which stage a file belongs to. compile.go
// drives the first three and keeps their outcome per schema, document and variables:
//
//   - parse: parse.go (gqlparser, the operation, fragment cycles, variables) and limits.go (what one document
//     may ask, checked as planning starts).
//   - plan: plan_selection.go (the request, and what graphql-js's execution does before it resolves a field:
//     collecting fields through fragments and @skip/@include, argument values), plan.go (root plans,
//     connections, records, pages and cursors) and the other plan_*.go: root fields (plan_root.go), filters (plan_filter.go, plan_related.go, plan_composite.go), input values
//     (plan_coerce.go) and writes (plan_mutation.go, plan_nested.go, plan_upsert.go). Answers known without
//     the database (__typename, introspection.go) are planned as values.
//   - SQL: sqlgen renders the plans (compile.go's compiledFromPlans).
//   - execute: session.go (role and claims prelude, statement timeout), pipeline.go (one round trip on
//     prepared statements, stmtcache.go), then compile.go's respond writes the body; errors.go and
//     messages.go hold every failure a client sees.
//
// live.go, multiplex.go and stream.go answer subscriptions (RefreshLive), many subscribers in one round trip.
//
// The plan types live in sqlgen, not here: a plan is sqlgen's input, and sqlgen is public and golden-tested on
// plans, so the types must be importable from outside resolve. A package of their own would add a public
// package without exporting one name fewer. That the plans sqlgen's goldens render are the ones this package
// builds is resolve's TestPlansRenderSQLGoldens.
//
// Each stage calls only forward, into messages.go when it fails, and into limits.go's checks at the stage
// boundaries (the document's as planning starts, the parameters' once the SQL is made): the selections and argument values are
// read by the planner as it walks the schema's types, since which fragments apply depends on the type it is
// at, so they are the plan stage's first file rather than the parse stage's last.
package resolve
