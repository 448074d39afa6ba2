// Package fixturetest serves realistic schemas (testdata/fixtures/*.sql: a Supabase-style app, a DVD rental
// store, a multi-schema SaaS) through the whole server and compares its answers, and the schema each role
// sees (SDL), with golden files. It holds only tests; `go test ./internal/devtools/fixturetest -update`
// rewrites the golden files.
package fixturetest
