package sqlgen

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// goldens are the SQL of goldenCases, one file per case. resolve's TestPlansRenderSQLGoldens compiles a GraphQL
// request of the same name against a real schema into the same file: each plan here is the one resolve builds.
var goldens = testenv.NewGoldens(filepath.Join("..", "testdata", "sqlgen"), "*.sql")

func TestMain(m *testing.M) { os.Exit(goldens.AfterRun(m.Run())) }

func str(s string) *string { return &s }

var account = Relation{Schema: "public", Name: "account"}
var blog = Relation{Schema: "public", Name: "blog"}
var post = Relation{Schema: "public", Name: "blog_post"}
var comment = Relation{Schema: "public", Name: "comment"}

func accountNode() *Node {
	return &Node{Fields: []NodeField{
		{Key: "nodeId", NodeID: &NodeID{Relation: account, PK: []string{"id"}}},
		{Key: "id", Column: &Column{Name: "id", Output: OutNumber}},
		{Key: "balance", Column: &Column{Name: "balance", Output: OutText}},
		{Key: "__typename", Typename: "Account"},
	}}
}

// goldenCases are plans covering every construct the generator emits, written as resolve builds them (a change
// of the planner shows first in resolve's test, then here).
var goldenCases = map[string]func(Server) Statement{
	"connection_forward": func(s Server) Statement {
		return Query(s, []RootField{{Connection: &Connection{
			Source: Source{Relation: &account},
			Filter: And{Compare{Column: "email", Op: "=", Value: str("a@x.com"), Cast: "character varying(255)"},
				Or{And{In{Column: "id", Values: []*string{str("1"), str("2")}, Cast: "integer"}}, And{IsNull{Column: "email", Negate: true}}},
				Not{X: And{Compare{Column: "name", Op: "ilike", Value: str("%a%"), Cast: "text"}}}},
			Order:  []Order{{Column: "name", Cast: "text", Desc: true, NullsFirst: true}, {Column: "id", Cast: "integer", NotNull: true}},
			Cursor: []*string{nil, str("4")},
			Limit:  3, Offset: 2,
			Fields: []ConnectionField{
				{Key: "edges", Edges: &Edges{Fields: []EdgeField{{Key: "cursor", Cursor: true}, {Key: "node", Node: accountNode()}}}},
				{Key: "pageInfo", PageInfo: []PageInfoField{{Key: "startCursor", Kind: PageStartCursor}, {Key: "endCursor", Kind: PageEndCursor},
					{Key: "hasNextPage", Kind: PageHasNext}, {Key: "hasPreviousPage", Kind: PageHasPrevious}}},
				{Key: "totalCount", TotalCount: true},
			},
		}}})
	},
	"connection_backward_nested": func(s Server) Statement {
		node := accountNode()
		node.Fields = append(node.Fields, NodeField{Key: "blogCollection", Connection: &Connection{
			Source: Source{Relation: &blog}, Join: []Join{{Child: "owner_id", Parent: "id"}},
			Order: []Order{{Column: "id", Cast: "integer", NotNull: true}}, Limit: 30,
			Fields: []ConnectionField{{Key: "edges", Edges: &Edges{Fields: []EdgeField{{Key: "node", Node: &Node{Fields: []NodeField{
				{Key: "owner", Record: &Record{Source: Source{Relation: &account}, Join: []Join{{Child: "id", Parent: "owner_id"}}, Joinable: true,
					Node: &Node{Fields: []NodeField{{Key: "id", Column: &Column{Name: "id", Output: OutNumber}}}}}},
			}}}}}}},
		}})
		return Query(s, []RootField{{Connection: &Connection{
			Source: Source{Relation: &account}, Order: []Order{{Column: "id", Cast: "integer", NotNull: true}},
			Cursor: []*string{str("10")}, Backward: true, Limit: 2,
			Fields: []ConnectionField{
				{Key: "edges", Edges: &Edges{Fields: []EdgeField{{Key: "node", Node: node}}}},
				{Key: "pageInfo", PageInfo: []PageInfoField{{Key: "hasNextPage", Kind: PageHasNext}, {Key: "hasPreviousPage", Kind: PageHasPrevious}}},
			},
		}}})
	},
	// A cursor whose value is not NULL on a nullable column where NULLs sort after it: pg_graphql's condition
	// leaves the NULL rows out, the exactPaging feature counts them.
	"cursor_nulls_after_value":       func(s Server) Statement { return nullsAfterCursor(s, false) },
	"cursor_nulls_after_value_exact": func(s Server) Statement { return nullsAfterCursor(s, true) },
	"aggregate_and_list_filter": func(s Server) Statement {
		return Query(s, []RootField{{Connection: &Connection{
			Source: Source{Relation: &account},
			Filter: And{ArrayCompare{Column: "tags", Op: "@>", Values: []*string{str("a"), str(`b"c`)}, Cast: "text[]"}},
			Order:  []Order{{Column: "id", Cast: "integer", NotNull: true}}, Limit: 30,
			Fields: []ConnectionField{{Key: "aggregate", Aggregate: []AggregateField{
				{Key: "count", Count: true},
				{Key: "sum", Group: "sum", Columns: []AggregateColumn{{Key: "id", Column: "id"}}},
				{Key: "avg", Group: "avg", Columns: []AggregateColumn{{Key: "id", Column: "id"}}},
			}}},
		}}})
	},
	"record_and_function": func(s Server) Statement {
		return Query(s, []RootField{
			{Record: &Record{Source: Source{Relation: &account}, Filter: And{Compare{Column: "id", Op: "=", Value: str("1"), Cast: "integer"}},
				Node: &Node{Fields: []NodeField{
					{Key: "status", Column: &Column{Name: "status", Output: OutQuotedEnum, EnumLabels: map[string]string{"b": "B", "a": "A"}}},
					{Key: "meta", Column: &Column{Name: "meta", Output: OutJSONText}},
					{Key: "fullName", Scalar: &Call{Function: Relation{Schema: "public", Name: "full_name"}, RowArg: true}},
				}}}},
			{Scalar: &Call{Function: Relation{Schema: "public", Name: "add"}, Output: OutText,
				Args: []Arg{{Name: "a", Value: str("1"), Cast: `"pg_catalog"."int8"`}, {Name: "b", Array: true, Values: []*string{str("2")}, Cast: `"pg_catalog"."int8"[]`}}}},
			{Record: &Record{Source: Source{Call: &Call{Function: Relation{Schema: "public", Name: "newest"}}}, SkipNullRow: true,
				Node: &Node{Fields: []NodeField{{Key: "id", Column: &Column{Name: "id", Output: OutNumber}}}}}},
		})
	},
	"related_filter": func(s Server) Statement {
		toPosts := []Join{{Child: "blog_id", Parent: "id"}}
		return Query(s, []RootField{{Connection: &Connection{
			Source: Source{Relation: &blog},
			Filter: And{
				Or{And{Related{Relation: post, Join: toPosts, Quantifier: Every,
					Filter: And{Compare{Column: "title", Op: "like", Value: str("%x%"), Cast: "text"}}}},
					And{Not{X: And{Related{Relation: post, Join: toPosts, Quantifier: None}}}}},
				Related{Relation: account, Join: []Join{{Child: "id", Parent: "owner_id"}},
					Filter: And{Compare{Column: "email", Op: "=", Value: str("a@x.com"), Cast: "character varying(255)"}}},
			},
			Order:  []Order{{Column: "id", Cast: "integer", NotNull: true}},
			Limit:  30,
			Fields: []ConnectionField{{Key: "edges", Edges: &Edges{Fields: []EdgeField{{Key: "node", Node: &Node{Fields: []NodeField{{Key: "id", Column: &Column{Name: "id", Output: OutNumber}}}}}}}}},
		}}})
	},
	"related_order_and_distinct": func(s Server) Statement {
		ownerEmail := &RelatedValue{Relation: blog, Join: []Join{{Child: "id", Parent: "blog_id"}},
			Next: &RelatedValue{Relation: account, Join: []Join{{Child: "id", Parent: "owner_id"}}, Column: "email"}}
		return Query(s, []RootField{{Connection: &Connection{
			Source:   Source{Relation: &post},
			Distinct: &Distinct{Columns: []string{"blog_id"}, PK: []string{"id"}},
			Order: []Order{{Column: "email", Cast: "character varying(255)", Related: ownerEmail},
				{Column: "count", Cast: "bigint", NotNull: true, Desc: true,
					Related: &RelatedValue{Relation: comment, Join: []Join{{Child: "post_id", Parent: "id"}}, Aggregate: "count"}},
				{Column: "id", Cast: "integer", NotNull: true}},
			Cursor:      []*string{str("a@x.com"), str("2"), str("7")},
			ExactPaging: true, // as resolve plans every order by related values
			Limit:       2,
			Fields: []ConnectionField{
				{Key: "edges", Edges: &Edges{Fields: []EdgeField{{Key: "cursor", Cursor: true}}}},
				{Key: "pageInfo", PageInfo: []PageInfoField{{Key: "hasPreviousPage", Kind: PageHasPrevious}}},
				{Key: "totalCount", TotalCount: true},
			},
		}}})
	},
	"composite": func(s Server) Statement {
		return Query(s, []RootField{{Connection: &Connection{Source: Source{Relation: &account},
			Filter: And{OnComposite{Column: "address", X: And{Compare{Column: "city", Op: "=", Value: str("Oslo"), Cast: "text"},
				IsNull{Column: "zip", Negate: true}}}},
			Order: []Order{{Column: "id", Cast: "integer", NotNull: true}}, Limit: 30,
			Fields: []ConnectionField{{Key: "edges", Edges: &Edges{Fields: []EdgeField{{Key: "node", Node: &Node{Fields: []NodeField{
				{Key: "address", Composite: &CompositeValue{Column: "address", Node: &Node{Fields: []NodeField{
					{Key: "city", Column: &Column{Name: "city"}}, {Key: "big", Column: &Column{Name: "big", Output: OutText}},
					{Key: "__typename", Typename: "Address"}}}}}}}}}}}},
		}}})
	},
	"insert": func(s Server) Statement {
		return MutationStatement(s, &Mutation{Relation: account, Columns: []string{"email", "name"},
			Rows: [][]Value{{{Value: str("a@x.com"), Cast: "character varying(255)"}, {Default: true}},
				{{Value: nil, Cast: "character varying(255)"}, {Value: str("n"), Cast: "text"}}},
			Fields: []MutationField{{Key: "affectedCount", AffectedCount: true}, {Key: "records", Records: accountNode()}}})
	},
	// One row: the answer made in RETURNING, a computed field given the written row whole.
	"insert_one": func(s Server) Statement {
		node := accountNode()
		node.Fields = append(node.Fields, NodeField{Key: "fullName", Scalar: &Call{Function: Relation{Schema: "public", Name: "full_name"}, RowArg: true}})
		return MutationStatement(s, &Mutation{Relation: account, Columns: []string{"email"},
			Rows:   [][]Value{{{Value: str("a@x.com"), Cast: "character varying(255)"}}},
			Fields: []MutationField{{Key: "affectedCount", AffectedCount: true}, {Key: "records", Records: node}, {Key: "__typename", Typename: "AccountInsertResponse"}}})
	},
	"upsert": func(s Server) Statement {
		u := MutationStatement(s, &Mutation{Relation: account, Columns: []string{"email", "name"},
			Rows: [][]Value{{{Value: str("a@x.com"), Cast: "character varying(255)"}, {Value: str("n"), Cast: "text"}}},
			OnConflict: &OnConflict{Target: []string{"email"}, Update: []string{"name", "email"},
				Filter: And{Compare{Column: "name", Op: "<>", Value: str("keep"), Cast: "text"}}},
			Fields: []MutationField{{Key: "affectedCount", AffectedCount: true}}})
		n := MutationStatement(s, &Mutation{Relation: account, Columns: []string{"email"},
			Rows:       [][]Value{{{Value: str("a@x.com"), Cast: "character varying(255)"}}},
			OnConflict: &OnConflict{Target: []string{"email"}, Update: []string{}},
			Fields:     []MutationField{{Key: "affectedCount", AffectedCount: true}}})
		return Statement{SQL: u.SQL + ";\n" + n.SQL, Args: append(u.Args, n.Args...)}
	},
	"nested_insert": func(s Server) Statement {
		toPost := []Join{{Child: "post_id", Parent: "id"}}
		postWithComments := &InsertObject{Relation: post, Columns: []string{"title"}, Values: []Value{{Value: str("p"), Cast: "text"}},
			Parents: []InsertLink{{Join: []Join{{Child: "blog_id", Parent: "id"}},
				Object: &InsertObject{Relation: blog, Columns: []string{"owner_id", "name"},
					Values: []Value{{Value: str("1"), Cast: "integer"}, {Value: str("b"), Cast: "text"}}}}},
			Children: []InsertLink{
				{Join: toPost, Object: &InsertObject{Relation: comment, Columns: []string{"body"}, Values: []Value{{Value: str("c1"), Cast: "text"}}}},
				{Join: toPost, Object: &InsertObject{Relation: comment}},
			}}
		// Returning: the role reads some columns of blog_post, not the table.
		return MutationStatement(s, &Mutation{Relation: post, Returning: []string{"id", "blog_id", "title"},
			Objects: []*InsertObject{postWithComments, {Relation: post, Columns: []string{"blog_id", "title"},
				Values: []Value{{Value: str("1"), Cast: "integer"}, {Value: str("q"), Cast: "text"}}}},
			Fields: []MutationField{{Key: "affectedCount", AffectedCount: true},
				{Key: "records", Records: &Node{Fields: []NodeField{{Key: "title", Column: &Column{Name: "title"}}}}}}})
	},
	// One post with two comments: Postgres runs the inserts in the order written unasked (the answer reads the
	// post, the comments, which no one reads, run last), so there is no written count; the comments, siblings
	// without relations of their own, are one insert, DEFAULT where one sets no column the other sets.
	"nested_insert_in_order": func(s Server) Statement {
		toPost := []Join{{Child: "post_id", Parent: "id"}}
		return MutationStatement(s, &Mutation{Relation: post, Returning: []string{"id", "blog_id", "title"},
			Objects: []*InsertObject{{Relation: post, Columns: []string{"blog_id", "title"},
				Values: []Value{{Value: str("1"), Cast: "integer"}, {Value: str("p"), Cast: "text"}},
				Children: []InsertLink{
					{Join: toPost, Object: &InsertObject{Relation: comment, Columns: []string{"body"}, Values: []Value{{Value: str("c1"), Cast: "text"}}}},
					{Join: toPost, Object: &InsertObject{Relation: comment}},
				}}},
			Fields: []MutationField{{Key: "records", Records: &Node{Fields: []NodeField{{Key: "title", Column: &Column{Name: "title"}}}}}}})
	},
	// Filters that fix a unique key: the statement alone, its answer made in RETURNING.
	"update_and_delete_one": func(s Server) Statement {
		u := MutationStatement(s, &Mutation{Relation: account, Set: []Assignment{{Column: "name", Value: Value{Value: str("n"), Cast: "text"}}},
			Filter: And{Compare{Column: "id", Op: "=", Value: str("1"), Cast: "integer"}}, AtMost: 1, TooMany: "update impacts too many records",
			PK: []string{"id"}, OneRow: true,
			Fields: []MutationField{{Key: "affectedCount", AffectedCount: true}, {Key: "records", Records: &Node{Fields: []NodeField{{Key: "email", Column: &Column{Name: "email"}}}}}}})
		d := MutationStatement(s, &Mutation{Relation: account, Delete: true, AtMost: 1, TooMany: "delete impacts too many records", PK: []string{"id"},
			Filter: And{Compare{Column: "email", Op: "=", Value: str("a@x.com"), Cast: "character varying(255)"}}, OneRow: true,
			Fields: []MutationField{{Key: "__typename", Typename: "AccountDeleteResponse"}}})
		return Statement{SQL: u.SQL + ";\n" + d.SQL, Args: append(u.Args, d.Args...)}
	},
	"update_and_delete": func(s Server) Statement {
		u := MutationStatement(s, &Mutation{Relation: account, Set: []Assignment{{Column: "email", Value: Value{Value: str("b@x.com"), Cast: "character varying(255)"}}},
			Filter: And{Compare{Column: "id", Op: "<", Value: str("5"), Cast: "integer"}}, AtMost: 1, TooMany: "update impacts too many records",
			PK:     []string{"id"},
			Fields: []MutationField{{Key: "records", Records: &Node{Fields: []NodeField{{Key: "email", Column: &Column{Name: "email"}}}}}}})
		d := MutationStatement(s, &Mutation{Relation: account, Delete: true, AtMost: 2, TooMany: "delete impacts too many records", PK: []string{"id"},
			Fields: []MutationField{{Key: "__typename", Typename: "AccountDeleteResponse"}}})
		return Statement{SQL: u.SQL + ";\n" + d.SQL, Args: append(u.Args, d.Args...)}
	},
}

func render(st Statement) string { return testenv.SQLText(st.SQL, st.Args) }

func TestGolden(t *testing.T) {
	for name, build := range goldenCases {
		t.Run(name, func(t *testing.T) {
			got := render(build(Server{}))
			if again := render(build(Server{})); again != got {
				t.Fatal("generation is not deterministic")
			}
			goldens.Check(t, name+".sql", got, *update)
		})
	}
}

// A server with JSON_SCALAR gets the same statements with every value written into JSON through it instead of
// to_json, which answers alike (resolve's TestJSONTextAsPostgresRendersIt compares on every version).
func TestJSONScalarWhereToJSONWas(t *testing.T) {
	replaced := 0
	for name, build := range goldenCases {
		plain := render(build(Server{}))
		replaced += strings.Count(plain, "coalesce(to_json(")
		want := strings.ReplaceAll(plain, "coalesce(to_json(", "coalesce(json_scalar(")
		if got := render(build(Server{JSONScalar: true})); got != want {
			t.Errorf("%s with JSON_SCALAR:\n%s\nwant\n%s", name, got, want)
		}
	}
	if replaced == 0 {
		t.Fatal("no golden statement writes a value through to_json: this test shows nothing")
	}
}

func TestIdentifiersAreQuotedAndValuesBound(t *testing.T) {
	evil := `x"; drop table account; --`
	st := Query(Server{}, []RootField{{Record: &Record{
		Source: Source{Relation: &Relation{Schema: evil, Name: evil}},
		Filter: Compare{Column: evil, Op: "=", Value: str(evil), Cast: "text"},
		Node:   &Node{Fields: []NodeField{{Key: evil, Column: &Column{Name: evil}}}},
	}}})
	if strings.Contains(st.SQL, `x";`) {
		t.Fatalf("an identifier escaped its quotes:\n%s", st.SQL)
	}
	if !strings.Contains(st.SQL, `"x""; drop table account; --"`) {
		t.Fatalf("identifier not quoted:\n%s", st.SQL)
	}
	for _, a := range st.Args {
		if a == evil {
			return
		}
	}
	t.Fatalf("value not bound as a parameter: %v", st.Args)
}

func TestTooManyFailure(t *testing.T) {
	cases := []struct {
		code, message, want string
		ok                  bool
	}{
		{"22P02", `invalid input syntax for type integer: "pgreflect atMost: update impacts too many records"`, "update impacts too many records", true},
		// lc_messages in another language translates the text around the quoted value, and its quotes.
		{"22P02", `ungültige Eingabesyntax für Typ integer: »pgreflect atMost: delete impacts too many records«`, "delete impacts too many records", true},
		{"22P02", `invalid input syntax for type integer: "abc"`, "", false},
		{"22P02", `invalid input syntax for type uuid: "pgreflect atMost: update impacts too many records"`, "", false},
		{"P0001", `pgreflect atMost: update impacts too many records`, "", false},
		{"22P02", `invalid input syntax for type integer: "pgreflect atMost: "`, "", false},
	}
	for _, c := range cases {
		got, ok := TooManyFailure(c.code, c.message)
		if got != c.want || ok != c.ok {
			t.Errorf("TooManyFailure(%q, %q) = %q, %v; want %q, %v", c.code, c.message, got, ok, c.want, c.ok)
		}
	}
}

// nullsAfterCursor pages forward from a cursor whose name is not NULL, under name ascending with NULLs last.
func nullsAfterCursor(s Server, exact bool) Statement {
	return Query(s, []RootField{{Connection: &Connection{
		Source:      Source{Relation: &account},
		Order:       []Order{{Column: "name", Cast: "text"}, {Column: "id", Cast: "integer", NotNull: true}},
		Cursor:      []*string{str("b"), str("4")},
		ExactPaging: exact,
		Limit:       2,
		Fields:      []ConnectionField{{Key: "edges", Edges: &Edges{Fields: []EdgeField{{Key: "cursor", Cursor: true}}}}},
	}}})
}

// PlainInJSONString is what lets an enum's labels go between quotes without to_json: exactly the characters a
// JSON string (and Postgres' escape_json) escapes are refused.
func TestPlainInJSONString(t *testing.T) {
	for s, want := range map[string]bool{
		"": true, "RELEASED": true, "very sad": true, "it's": true, "é 😀 </script>": true, "a/b": true, "\x7f": true,
		`say "hi"`: false, `back\slash`: false, "new\nline": false, "tab\t": false, "\x00": false, "\x1f": false,
	} {
		if got := PlainInJSONString(s); got != want {
			t.Errorf("PlainInJSONString(%q) = %v", s, got)
		}
	}
}
