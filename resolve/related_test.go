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
insert into account values ('aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaa1', 'alice@x.com'), ('bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbb2', 'bob@x.com');
insert into blog values (1, 'aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaa1', 'alpha', false), (2, 'aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaa1', 'beta', false),
  (3, 'bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbb2', 'gamma', true), (4, 'bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbb2', 'delta', false);
insert into blog_post values
  (1, 1, 'aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaa1', 'hello', 5, true),
  (2, 1, 'aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaa1', 'secret plan', 9, false),
  (3, 2, 'aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaa1', 'beta one', 1, true),
  (4, 3, 'bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbb2', 'gamma one', 7, true),
  (5, 3, 'bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbb2', 'gamma two', 3, true),
  (6, 3, 'bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbb2', 'gamma three', 8, true),
  (7, 2, 'aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaa1', 'beta two', 4, true);
alter table account enable row level security;
alter table blog enable row level security;
alter table blog_post enable row level security;
create policy read on account for select using (true);
create policy read on blog for select using (not private or owner_id = auth.uid());
create policy read on blog_post for select using (published or author_id = auth.uid());
grant all on all tables in schema public to anon, authenticated, service_role;
`

var (
	alice = map[string]any{"role": "authenticated", "sub": "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaa1"}
	bob   = map[string]any{"role": "authenticated", "sub": "bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbb2"}
)

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
		Data   map[string]struct{ Edges []struct{ Node struct{ ID json.Number } } }
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
		`{ blogCollection(filter: {blogPostCollection: {any: {}}}) { edges { node { id } } } }`: `{"data": null, "errors": [{"message": "Input for type BlogPostToManyFilter contains extra keys [\"any\"]"}]}`,
		`{ blogCollection(filter: {blogPostCollection: {some: {nope: {eq: 1}}}}) { edges { node { id } } } }`: `{"data": null, "errors": [{"message": "Input for type BlogPostFilter contains extra keys [\"nope\"]"}]}`,
		`{ blogPostCollection(filter: {blog: {id: {eq: "x"}}}) { edges { node { id } } } }`: `{"data": null, "errors": [{"message": "Invalid input for Int type"}]}`,
	} {
		if got := d.as("anon", nil, q, ""); got != want {
			t.Errorf("%s\n got: %s\nwant: %s", q, got, want)
		}
	}
}
