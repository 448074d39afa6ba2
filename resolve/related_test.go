package resolve

import (
	"encoding/json"
	"strings"
	"testing"
)

// relatedFixture: blogs and posts under row level security. Anyone sees public blogs and published posts;
// an author also sees their own private blog and unpublished posts. Alice (a1) writes blog 1 and 2 and an
// unpublished "secret" post; Bob (b2) owns the private blog 3.
const relatedFixture = `
comment on schema public is '@graphql({"inflect_names": true, "features": ["relatedFilter", "relatedOrder", "distinct"]})';
create table account(id uuid primary key, email text not null);
create table blog(id int primary key, owner_id uuid not null references account(id), name text not null, private bool not null default false);
create table blog_post(id int primary key, blog_id int not null references blog(id), author_id uuid not null references account(id),
  title text not null, score int, published bool not null default true);
insert into account values ('11111111-1111-1111-1111-111111111111', 'alice@x.com'), ('22222222-2222-2222-2222-222222222222', 'bob@x.com');
insert into blog values (1, '11111111-1111-1111-1111-111111111111', 'alpha', false), (2, '11111111-1111-1111-1111-111111111111', 'beta', false),
  (3, '22222222-2222-2222-2222-222222222222', 'gamma', true), (4, '22222222-2222-2222-2222-222222222222', 'delta', false);
insert into blog_post values
  (1, 1, '11111111-1111-1111-1111-111111111111', 'hello', 5, true),
  (2, 1, '11111111-1111-1111-1111-111111111111', 'secret plan', 9, false),
  (3, 2, '11111111-1111-1111-1111-111111111111', 'beta one', 1, true),
  (4, 3, '22222222-2222-2222-2222-222222222222', 'gamma one', 7, true),
  (5, 3, '22222222-2222-2222-2222-222222222222', 'gamma two', 3, true),
  (6, 3, '22222222-2222-2222-2222-222222222222', 'gamma three', 8, true),
  (7, 2, '11111111-1111-1111-1111-111111111111', 'beta two', 4, true);
alter table account enable row level security;
alter table blog enable row level security;
alter table blog_post enable row level security;
create policy read on account for select using (true);
create policy read on blog for select using (not private or owner_id = auth.uid());
create policy read on blog_post for select using (published or author_id = auth.uid());
create function posts_by(min_score int) returns setof blog_post stable language sql as $$ select * from blog_post where score >= min_score $$;
create function posts_titled("distinctOn" text) returns setof blog_post stable language sql as $$ select * from blog_post where title = "distinctOn" $$;
grant all on all tables in schema public to anon, authenticated, service_role;
`

// caller is a role with its claims, as the tests below run each request.
type caller struct {
	name   string
	role   string
	claims map[string]any
}

var callers = []caller{{"anon", "anon", nil}, {"alice", "authenticated", alice}, {"bob", "authenticated", bob},
	{"service_role", "service_role", nil}}

// ids lists the node ids of a collection's edges in a response, or the response itself when it has errors.
func ids(t *testing.T, body, collection string) string {
	t.Helper()
	var resp struct {
		Data map[string]struct {
			Edges []struct{ Node struct{ ID json.Number } }
		}
		Errors []any
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || resp.Errors != nil {
		return body
	}
	var out []string
	for _, e := range resp.Data[collection].Edges {
		out = append(out, e.Node.ID.String())
	}
	return strings.Join(out, ",")
}

func TestRelatedFilter(t *testing.T) {
	d := newTestDB(t, relatedFixture)
	for _, tc := range []struct {
		name, query string
		want        map[string]string // by caller
	}{
		{"to-many some sees only readable posts",
			`{ blogCollection(filter: {blogPostCollection: {some: {title: {like: "secret%"}}}}) { edges { node { id } } } }`,
			map[string]string{"anon": "", "alice": "1", "bob": "", "service_role": "1"}},
		{"to-many every (true without related rows)",
			`{ blogCollection(filter: {blogPostCollection: {every: {score: {gte: 3}}}}) { edges { node { id } } } }`,
			map[string]string{"anon": "1,4", "alice": "1,4", "bob": "1,3,4", "service_role": "1,3,4"}},
		{"to-many none",
			`{ blogCollection(filter: {blogPostCollection: {none: {score: {gt: 6}}}}) { edges { node { id } } } }`,
			map[string]string{"anon": "1,2,4", "alice": "2,4", "bob": "1,2,4", "service_role": "2,4"}},
		{"some with an empty filter: has a related row",
			`{ blogCollection(filter: {blogPostCollection: {some: {}}}) { edges { node { id } } } }`,
			map[string]string{"anon": "1,2", "alice": "1,2", "bob": "1,2,3", "service_role": "1,2,3"}},
		{"to-one through a private parent",
			`{ blogPostCollection(filter: {blog: {name: {eq: "gamma"}}}) { edges { node { id } } } }`,
			map[string]string{"anon": "", "alice": "", "bob": "4,5,6", "service_role": "4,5,6"}},
		// not negates the whole related condition: a post whose blog the caller may not see is not in "a blog
		// other than beta", so anon and alice get posts 4 and 5 through the not.
		{"nested to-one of to-one, under or and not",
			`{ blogPostCollection(filter: {or: [{blog: {owner: {email: {eq: "bob@x.com"}}}}, {not: {blog: {name: {neq: "beta"}}}}], score: {lt: 8}}) { edges { node { id } } } }`,
			map[string]string{"anon": "3,4,5,7", "alice": "3,4,5,7", "bob": "3,4,5,7", "service_role": "3,4,5,7"}},
		{"and of two quantifiers on one relationship",
			`{ blogCollection(filter: {blogPostCollection: {some: {score: {gt: 4}}, none: {title: {startsWith: "secret"}}}}) { edges { node { id } } } }`,
			map[string]string{"anon": "1", "alice": "", "bob": "1,3", "service_role": "3"}},
		{"empty related filters constrain nothing",
			`{ blogCollection(filter: {blogPostCollection: {}, owner: {}}) { edges { node { id } } } }`,
			map[string]string{"anon": "1,2,4", "alice": "1,2,4", "bob": "1,2,3,4", "service_role": "1,2,3,4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range callers {
				collection := "blogCollection"
				if strings.HasPrefix(strings.TrimSpace(tc.query), "{ blogPost") {
					collection = "blogPostCollection"
				}
				got := ids(t, d.as(c.role, c.claims, tc.query, ""), collection)
				if got != tc.want[c.name] {
					t.Errorf("as %s: got %q, want %q", c.name, got, tc.want[c.name])
				}
			}
		})
	}
}

func TestRelatedFilterErrors(t *testing.T) {
	d := newTestDB(t, relatedFixture)
	for q, want := range map[string]string{
		`{ blogCollection(filter: {blogPostCollection: {any: {}}}) { edges { node { id } } } }`:               `{"data": null, "errors": [{"message": "Input for type BlogPostToManyFilter contains extra keys [\"any\"]"}]}`,
		`{ blogCollection(filter: {blogPostCollection: {some: {nope: {eq: 1}}}}) { edges { node { id } } } }`: `{"data": null, "errors": [{"message": "Input for type BlogPostFilter contains extra keys [\"nope\"]"}]}`,
		`{ blogPostCollection(filter: {blog: {id: {eq: "x"}}}) { edges { node { id } } } }`:                   `{"data": null, "errors": [{"message": "Invalid input for Int type"}]}`,
	} {
		if got := d.as("anon", nil, q, ""); got != want {
			t.Errorf("%s\n got: %s\nwant: %s", q, got, want)
		}
	}
}

// page walks a collection with first: 1 and the end cursor (or last: 1 and the start cursor) and lists the ids
// it met, in the collection's order.
func page(t *testing.T, d *testDB, c caller, collection, args string, backward bool) string {
	t.Helper()
	var out []string
	cursor := ""
	for range 20 {
		q := `{ ` + collection + `(first: 1` + args
		if backward {
			q = `{ ` + collection + `(last: 1` + args
		}
		if cursor != "" && backward {
			q += `, before: "` + cursor + `"`
		} else if cursor != "" {
			q += `, after: "` + cursor + `"`
		}
		q += `) { edges { node { id } } pageInfo { startCursor endCursor hasNextPage hasPreviousPage } } }`
		body := d.as(c.role, c.claims, q, "")
		var resp struct {
			Data map[string]struct {
				Edges    []struct{ Node struct{ ID json.Number } }
				PageInfo struct {
					StartCursor, EndCursor       *string
					HasNextPage, HasPreviousPage bool
				}
			}
		}
		if err := json.Unmarshal([]byte(body), &resp); err != nil || len(resp.Data) == 0 {
			t.Fatalf("%s: %s", q, body)
		}
		conn := resp.Data[collection]
		for _, e := range conn.Edges {
			if backward {
				out = append([]string{e.Node.ID.String()}, out...)
			} else {
				out = append(out, e.Node.ID.String())
			}
		}
		more := conn.PageInfo.HasNextPage
		next := conn.PageInfo.EndCursor
		if backward {
			more, next = conn.PageInfo.HasPreviousPage, conn.PageInfo.StartCursor
		}
		if !more || next == nil {
			return strings.Join(out, ",")
		}
		cursor = *next
	}
	t.Fatalf("%s%s did not end", collection, args)
	return ""
}

func TestRelatedOrderAndDistinct(t *testing.T) {
	d := newTestDB(t, relatedFixture)
	for _, tc := range []struct {
		name, collection, args string
		want                   map[string]string
	}{
		{"to-many count", "blogCollection", `orderBy: [{blogPostCollection: {count: DescNullsLast}}]`,
			map[string]string{"anon": "2,1,4", "alice": "1,2,4", "bob": "3,2,1,4", "service_role": "3,1,2,4"}},
		{"to-many max", "blogCollection", `orderBy: [{blogPostCollection: {max: {score: DescNullsLast}}}]`,
			map[string]string{"anon": "1,2,4", "alice": "1,2,4", "bob": "3,1,2,4", "service_role": "1,3,2,4"}},
		{"to-many sum, nulls first", "blogCollection", `orderBy: [{blogPostCollection: {sum: {score: AscNullsFirst}}}]`,
			map[string]string{"anon": "4,1,2", "alice": "4,2,1", "bob": "4,1,2,3", "service_role": "4,2,1,3"}},
		// A blog the caller may not read sorts as NULL.
		{"to-one column", "blogPostCollection", `orderBy: [{blog: {name: AscNullsFirst}}, {id: DescNullsLast}]`,
			map[string]string{"anon": "6,5,4,1,7,3", "alice": "6,5,4,2,1,7,3", "bob": "1,7,3,6,5,4", "service_role": "2,1,7,3,6,5,4"}},
		{"to-one of to-one", "blogPostCollection", `orderBy: [{blog: {owner: {email: DescNullsLast}}}, {id: AscNullsLast}]`,
			map[string]string{"anon": "1,3,7,4,5,6", "alice": "1,2,3,7,4,5,6", "bob": "4,5,6,1,3,7", "service_role": "4,5,6,1,2,3,7"}},
		{"distinct keeps the first of each group in the order", "blogPostCollection", `distinctOn: [blogId], orderBy: [{score: DescNullsLast}]`,
			map[string]string{"anon": "6,1,7", "alice": "2,6,7", "bob": "6,1,7", "service_role": "2,6,7"}},
		{"distinct on two columns with a related order", "blogPostCollection", `distinctOn: [blogId, authorId], orderBy: [{blog: {name: DescNullsLast}}]`,
			map[string]string{"anon": "3,1,4", "alice": "3,1,4", "bob": "4,3,1", "service_role": "4,3,1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range callers {
				whole := ids(t, d.as(c.role, c.claims, `{ `+tc.collection+`(`+tc.args+`) { edges { node { id } } } }`, ""), tc.collection)
				if whole != tc.want[c.name] {
					t.Errorf("as %s: got %q, want %q", c.name, whole, tc.want[c.name])
				}
				// Cursors carry the related sort values: paging one by one, either way, meets the same rows.
				if got := page(t, d, c, tc.collection, ", "+tc.args, false); got != whole {
					t.Errorf("as %s, paging forward: %q, want %q", c.name, got, whole)
				}
				if got := page(t, d, c, tc.collection, ", "+tc.args, true); got != whole {
					t.Errorf("as %s, paging backward: %q, want %q", c.name, got, whole)
				}
			}
		})
	}
}

func TestDistinctCountsAndNests(t *testing.T) {
	d := newTestDB(t, relatedFixture)
	d.exec(`comment on table blog_post is '@graphql({"totalCount": {"enabled": true}, "aggregate": {"enabled": true}})'`)
	q := `{ blogCollection(filter: {id: {in: [1, 2]}}) { edges { node { id blogPostCollection(distinctOn: [authorId]) { totalCount aggregate { count } edges { node { id } } } } } }
		blogPostCollection(distinctOn: [blogId], first: 2) { totalCount aggregate { count sum { score } } pageInfo { hasNextPage } edges { node { id } } } }`
	want := map[string]string{
		"anon": `{"data": {"blogCollection": {"edges": [{"node": {"id": 1, "blogPostCollection": {"edges": [{"node": {"id": 1}}], "aggregate": {"count": 1}, "totalCount": 1}}}, ` +
			`{"node": {"id": 2, "blogPostCollection": {"edges": [{"node": {"id": 3}}], "aggregate": {"count": 1}, "totalCount": 1}}}]}, ` +
			`"blogPostCollection": {"edges": [{"node": {"id": 1}}, {"node": {"id": 3}}], "pageInfo": {"hasNextPage": true}, "aggregate": {"sum": {"score": 13}, "count": 3}, "totalCount": 3}}}`,
		"service_role": `{"data": {"blogCollection": {"edges": [{"node": {"id": 1, "blogPostCollection": {"edges": [{"node": {"id": 1}}], "aggregate": {"count": 1}, "totalCount": 1}}}, ` +
			`{"node": {"id": 2, "blogPostCollection": {"edges": [{"node": {"id": 3}}], "aggregate": {"count": 1}, "totalCount": 1}}}]}, ` +
			`"blogPostCollection": {"edges": [{"node": {"id": 1}}, {"node": {"id": 3}}], "pageInfo": {"hasNextPage": true}, "aggregate": {"sum": {"score": 13}, "count": 3}, "totalCount": 3}}}`,
	}
	for role, w := range want {
		if got := d.as(role, nil, q, ""); got != w {
			t.Errorf("as %s\n got: %s\nwant: %s", role, got, w)
		}
	}
}

func TestRelatedQueriesTakeOneRoundTrip(t *testing.T) {
	d := newTestDB(t, relatedFixture)
	session := Session{Role: "authenticated", Claims: alice, SearchPath: []string{"public"}}
	expectOneRoundTrip(t, d, session,
		`{ blogCollection(filter: {blogPostCollection: {some: {title: {like: "%e%"}}, none: {score: {gt: 100}}}, owner: {email: {eq: "alice@x.com"}}}) { edges { node { id } } } }`,
		`{ blogCollection(orderBy: [{blogPostCollection: {count: DescNullsLast}}, {owner: {email: AscNullsLast}}], first: 1, after: "WzEsICJhbGljZUB4LmNvbSIsIDFd") { edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage } } }`,
		`{ blogPostCollection(distinctOn: [blogId], orderBy: [{blog: {name: AscNullsLast}}]) { edges { node { id blog { blogPostCollection(distinctOn: [authorId]) { edges { node { id } } } } } } } }`)
}

// introspected lists, for each type name, the input field or argument names introspection shows.
func introspected(t *testing.T, d *testDB, role string, claims map[string]any) string {
	t.Helper()
	body := d.as(role, claims, `{ __schema { types { name inputFields { name } enumValues { name } } }
		__type(name: "Query") { fields { name args { name } } } }`, "")
	var resp struct {
		Data struct {
			Schema struct {
				Types []struct {
					Name        string
					InputFields []struct{ Name string }
					EnumValues  []struct{ Name string }
				}
			} `json:"__schema"`
			Type struct {
				Fields []struct {
					Name string
					Args []struct{ Name string }
				}
			} `json:"__type"`
		}
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || len(resp.Data.Schema.Types) == 0 {
		t.Fatalf("introspection: %s", body)
	}
	var b strings.Builder
	for _, ty := range resp.Data.Schema.Types {
		b.WriteString(ty.Name + ":")
		for _, f := range ty.InputFields {
			b.WriteString(" " + f.Name)
		}
		for _, v := range ty.EnumValues {
			b.WriteString(" " + v.Name)
		}
		b.WriteString("\n")
	}
	for _, f := range resp.Data.Type.Fields {
		b.WriteString("Query." + f.Name + ":")
		for _, a := range f.Args {
			b.WriteString(" " + a.Name)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestQueryFeaturesOffAreInvisible(t *testing.T) {
	off := strings.Replace(relatedFixture, `, "features": ["relatedFilter", "relatedOrder", "distinct"]`, `, "introspection": true`, 1)
	if off == relatedFixture {
		t.Fatal("fixture without features not derived")
	}
	d := newTestDB(t, off)
	without := introspected(t, d, "anon", nil)
	for _, s := range []string{"ToManyFilter", "AggregateOrderBy", "SelectColumn", "orderBy distinctOn", "BlogFilter: id ownerId name private nodeId and or not\n",
		"BlogPostOrderBy: id blogId authorId title score published\n"} {
		if strings.Contains(without, s) != strings.HasPrefix(s, "Blog") {
			t.Errorf("features off: introspection and %q:\n%s", s, without)
		}
	}
	// The same requests answer as without the features: a relationship in a filter or an order is an unknown key.
	for q, want := range map[string]string{
		`{ blogCollection(filter: {blogPostCollection: {some: {}}}) { edges { node { id } } } }`:  `{"data": null, "errors": [{"message": "Input for type BlogFilter contains extra keys [\"blogPostCollection\"]"}]}`,
		`{ blogCollection(orderBy: [{owner: {email: AscNullsLast}}]) { edges { node { id } } } }`: `{"data": null, "errors": [{"message": "Input for type BlogOrderBy contains extra keys [\"owner\"]"}]}`,
		`{ blogCollection(distinctOn: [name]) { edges { node { id } } } }`:                        `{"data": null, "errors": [{"message": "Input contains extra keys [\"distinctOn\"]"}]}`,
	} {
		if got := d.as("anon", nil, q, ""); got != want {
			t.Errorf("%s\n got: %s\nwant: %s", q, got, want)
		}
	}

	// On for blog only: blog's inputs grow, blog_post's stay pg_graphql's, also where blog's refer to them.
	d.exec(`comment on table blog is '@graphql({"features": ["relatedFilter", "relatedOrder", "distinct"]})'`)
	with := introspected(t, d, "anon", nil)
	for _, s := range []string{
		"BlogFilter: id ownerId name private nodeId and or not owner blogPostCollection\n",
		"BlogOrderBy: id ownerId name private owner blogPostCollection\n",
		"BlogPostToManyFilter: every none some\n",
		"BlogPostAggregateOrderBy: count avg max min sum\n",
		"BlogPostMaxOrderBy: id blogId title score\n",
		"BlogSelectColumn: id ownerId name private\n",
		"Query.blogCollection: first last before after offset filter orderBy distinctOn\n",
		"BlogPostFilter: id blogId authorId title score published nodeId and or not\n",
		"BlogPostOrderBy: id blogId authorId title score published\n",
		"Query.blogPostCollection: first last before after offset filter orderBy\n",
	} {
		if !strings.Contains(with, s) {
			t.Errorf("blog's features on: introspection lacks %q:\n%s", s, with)
		}
	}
}

func TestDistinctOnFunctions(t *testing.T) {
	d := newTestDB(t, relatedFixture)
	d.expect(`{ postsBy(minScore: 3, distinctOn: [blogId]) { edges { node { id } } } }`,
		`{"data": {"postsBy": {"edges": [{"node": {"id": 1}}, {"node": {"id": 4}}, {"node": {"id": 7}}]}}}`)
	if got, want := d.as("anon", nil, `{ postsBy(minScore: 3, distinctOn: [blogId]) { edges { node { id } } } }`, ""),
		`{"data": {"postsBy": {"edges": [{"node": {"id": 1}}, {"node": {"id": 4}}, {"node": {"id": 7}}]}}}`; got != want {
		t.Errorf("as anon\n got: %s\nwant: %s", got, want)
	}
	// A function's own argument named distinctOn keeps the name, and means what the function says.
	d.expect(`{ postsTitled(distinctOn: "hello") { edges { node { id } } } }`, `{"data": {"postsTitled": {"edges": [{"node": {"id": 1}}]}}}`)
}

func TestRelatedFilterInMutations(t *testing.T) {
	d := newTestDB(t, relatedFixture)
	d.exec(`create policy write on blog_post for update using (author_id = auth.uid()) with check (author_id = auth.uid());
		create policy remove on blog_post for delete using (author_id = auth.uid())`)
	update := `mutation { updateBlogPostCollection(set: {score: 0}, filter: {blog: {name: {eq: "gamma"}}}, atMost: 5) { affectedCount records { id } } }`
	// Alice may not read blog gamma, so no post of hers is in it; Bob's three are.
	if got, want := d.as("authenticated", alice, update, ""), `{"data": {"updateBlogPostCollection": {"records": [], "affectedCount": 0}}}`; got != want {
		t.Errorf("as alice\n got: %s\nwant: %s", got, want)
	}
	if got, want := d.as("authenticated", bob, update, ""), `{"data": {"updateBlogPostCollection": {"records": [{"id": 4}, {"id": 5}, {"id": 6}], "affectedCount": 3}}}`; got != want {
		t.Errorf("as bob\n got: %s\nwant: %s", got, want)
	}
	remove := `mutation { deleteFromBlogPostCollection(filter: {blog: {blogPostCollection: {some: {title: {startsWith: "secret"}}}}}, atMost: 5) { affectedCount } }`
	// Only Alice sees the secret post, so only she finds blog alpha's posts to delete.
	if got, want := d.as("authenticated", bob, remove, ""), `{"data": {"deleteFromBlogPostCollection": {"affectedCount": 0}}}`; got != want {
		t.Errorf("as bob\n got: %s\nwant: %s", got, want)
	}
	if got, want := d.as("authenticated", alice, remove, ""), `{"data": {"deleteFromBlogPostCollection": {"affectedCount": 2}}}`; got != want {
		t.Errorf("as alice\n got: %s\nwant: %s", got, want)
	}
}

// A type an extension would add never displaces a table's type of the same name: the extension's field or
// argument is left out instead (distinctOn of blog, the blogPostCollection filters, account's address).
func TestExtensionTypesGiveWayToTables(t *testing.T) {
	d := newTestDB(t, relatedFixture+`
		comment on schema public is '@graphql({"inflect_names": true, "introspection": true, "features": ["relatedFilter", "distinct", "composite"]})';
		create table blog_select_column(id int primary key);
		create table blog_post_to_many_filter(id int primary key);
		create type account_address as (city text);
		create table addresses(id int primary key);
		comment on table addresses is '@graphql({"name": "AccountAddress"})';
		alter table account add column address account_address;
		grant all on all tables in schema public to anon;`)
	intro := introspected(t, d, "anon", nil)
	for s, want := range map[string]bool{
		"Query.blogCollection: first last before after offset filter orderBy\n":                        true,
		"Query.blogSelectColumnCollection: first last before after offset filter orderBy distinctOn\n": true,
		"Query.blogPostCollection: first last before after offset filter orderBy distinctOn\n":         true,
		"BlogFilter: id ownerId name private nodeId and or not owner\n":                                true,
		"BlogPostToManyFilterFilter: id nodeId and or not\n":                                           true,
		"AccountFilter: id email nodeId and or not blogCollection\n":                                   true,
		"Query.accountAddressCollection:":                                                              true,
	} {
		if strings.Contains(intro, s) != want {
			t.Errorf("introspection and %q (want %v):\n%s", s, want, intro)
		}
	}
}
