// Package benchcmp is the side-by-side HTTP comparison of `make bench`: pgreflect, a ceiling (a minimal Go
// server sending hand-written SQL for the same answers) and PostGraphile v4 and v5, driven by one load generator on
// the dataset of package benchdata. The program that runs it is cmd/benchcmp; this package holds the queries,
// the ceiling server, the load generator, the answer check and the report. PostGraphile v5 (Grafast) runs beside
// v4: v4 is what many deployments still run, v5 is what a PostGraphile user installs today.
package benchcmp

import (
	"encoding/json"
	"fmt"

	"github.com/pgreflect/pgreflect/internal/devtools/benchdata"
)

// Who a request runs as.
const (
	AsAnon = "anon"
	AsUser = "user"
)

// Query is one query of the comparison in each contender's dialect. Aliases give both dialects the same
// field names, so that answers compare after only the connection shapes are normalised.
type Query struct {
	Name        string
	Description string
	As          string
	// PgGraphQL is the document in pg_graphql's dialect: what pgreflect answers, and what the ceiling's
	// answer imitates.
	PgGraphQL string
	// PostGraphile is the same request in PostGraphile v4's dialect (with the connection filter plugin); empty
	// when PostGraphile has no such request without plugins the comparison does not load.
	PostGraphile string
	// PostGraphile5 is the request in PostGraphile v5's dialect (Amber preset, connection filter plugin 4.x):
	// v4's but for the primary key, which v5 calls rowId (its id is the global node id), aliased back to id.
	PostGraphile5 string
	// CeilingSQL returns the response's data object as json; its parameters come from CeilingArgs.
	CeilingSQL  string
	CeilingArgs func(vars map[string]any) []any
	// Variant returns the variables and the account (whose user signs the request, for AsUser) of the v-th
	// variant of the request; variants differ in values, not in the size of the answer.
	Variant func(v int) (vars map[string]any, account int)
	// Mutates marks a query whose answers change the data; the check runs it once per contender.
	Mutates bool
}

// Dialect is the GraphQL API a contender generates, and so which of a Query's documents it is sent.
type Dialect int

const (
	// PgGraphQL is pg_graphql's API: pgreflect's, and what the ceiling imitates.
	PgGraphQL Dialect = iota
	PostGraphile4
	PostGraphile5
)

// Document is q in dialect d, empty when that dialect has no such request.
func (q Query) Document(d Dialect) string {
	switch d {
	case PostGraphile4:
		return q.PostGraphile
	case PostGraphile5:
		return q.PostGraphile5
	default:
		return q.PgGraphQL
	}
}

// Variants is how many variants of each request a dataset of accounts accounts supports.
func Variants(accounts int) int { return min(50, accounts/50) }

// Queries are Q1–Q5 of issue 8 and Q6–Q8 of issue 12 (the cost of its extensions: upsert, nested insert,
// filter on a related row) for a dataset of accounts accounts (see package benchdata for the layout the
// variants rely on).
func Queries(accounts int) []Query {
	noVars := func(int) (map[string]any, int) { return nil, 0 }
	rangeArgs := func(vars map[string]any) []any { return []any{vars["from"], vars["to"]} }
	owners := benchdata.BlogsPerOwner
	return []Query{
		{
			Name:          "Q1",
			Description:   "first account: `accountCollection(first: 1) { edges { node { id } } }` (anon)",
			As:            AsAnon,
			PgGraphQL:     `query Q1 { accountCollection(first: 1) { edges { node { id } } } }`,
			PostGraphile:  `query Q1 { accountCollection: allAccounts(first: 1, orderBy: PRIMARY_KEY_ASC) { nodes { id } } }`,
			PostGraphile5: `query Q1 { accountCollection: allAccounts(first: 1, orderBy: PRIMARY_KEY_ASC) { nodes { id: rowId } } }`,
			CeilingSQL: `select json_build_object('accountCollection', json_build_object('edges',
  coalesce(json_agg(json_build_object('node', json_build_object('id', a.id)) order by a.id), '[]')))
from (select id from public.account order by id limit 1) a`,
			CeilingArgs: func(map[string]any) []any { return nil },
			Variant:     noVars,
		},
		{
			Name:        "Q2",
			Description: "20 newest published posts with their blog's name, to-one (anon)",
			As:          AsAnon,
			PgGraphQL: `query Q2 { posts: blog_postCollection(first: 20, filter: {status: {eq: RELEASED}},
  orderBy: [{created_at: DescNullsFirst}]) { edges { node { id title blog { name } } } } }`,
			PostGraphile: `query Q2 { posts: allBlogPosts(first: 20, filter: {status: {equalTo: RELEASED}},
  orderBy: CREATED_AT_DESC) { nodes { id title blog: blogByBlogId { name } } } }`,
			PostGraphile5: `query Q2 { posts: allBlogPosts(first: 20, filter: {status: {equalTo: RELEASED}},
  orderBy: CREATED_AT_DESC) { nodes { id: rowId title blog: blogByBlogId { name } } } }`,
			CeilingSQL: `select json_build_object('posts', json_build_object('edges', coalesce(json_agg(json_build_object(
  'node', json_build_object('id', p.id, 'title', p.title, 'blog', json_build_object('name', b.name)))
  order by p.created_at desc), '[]')))
from (select id, title, blog_id, created_at from public.blog_post where status = 'RELEASED'
      order by created_at desc limit 20) p
join public.blog b on b.id = p.blog_id`,
			CeilingArgs: func(map[string]any) []any { return nil },
			Variant:     noVars,
		},
		{
			Name:        "Q3",
			Description: "10 accounts by id range, each with up to 10 blogs, to-many (anon)",
			As:          AsAnon,
			PgGraphQL: `query Q3($from: Int!, $to: Int!) { accounts: accountCollection(first: 10,
  filter: {id: {gte: $from, lte: $to}}) { edges { node { id email
  blogs: blogCollection(first: 10) { edges { node { id name } } } } } } }`,
			PostGraphile: `query Q3($from: Int!, $to: Int!) { accounts: allAccounts(first: 10,
  filter: {id: {greaterThanOrEqualTo: $from, lessThanOrEqualTo: $to}}, orderBy: PRIMARY_KEY_ASC) { nodes { id email
  blogs: blogsByOwnerId(first: 10, orderBy: PRIMARY_KEY_ASC) { nodes { id name } } } } }`,
			PostGraphile5: `query Q3($from: Int!, $to: Int!) { accounts: allAccounts(first: 10,
  filter: {rowId: {greaterThanOrEqualTo: $from, lessThanOrEqualTo: $to}}, orderBy: PRIMARY_KEY_ASC) { nodes {
  id: rowId email blogs: blogsByOwnerId(first: 10, orderBy: PRIMARY_KEY_ASC) { nodes { id: rowId name } } } } }`,
			CeilingSQL: `select json_build_object('accounts', json_build_object('edges', coalesce(json_agg(
  json_build_object('node', json_build_object('id', a.id, 'email', a.email,
    'blogs', json_build_object('edges', blogs.edges))) order by a.id), '[]')))
from (select id, email from public.account where id >= $1 and id <= $2 order by id limit 10) a
cross join lateral (
  select coalesce(json_agg(json_build_object('node', json_build_object('id', b.id, 'name', b.name)) order by b.id),
    '[]') as edges
  from (select id, name from public.blog where owner_id = a.id order by id limit 10) b) blogs`,
			CeilingArgs: rangeArgs,
			Variant: func(v int) (map[string]any, int) {
				return map[string]any{"from": 10*v + 1, "to": 10*v + 10}, 0
			},
		},
		{
			Name:        "Q4",
			Description: "insert one post into the user's own blog (RLS WITH CHECK)",
			As:          AsUser,
			PgGraphQL: `mutation Q4($blogId: Int!) { created: insertIntoblog_postCollection(objects: [{blog_id: $blogId,
  title: "Benchmark post", body: "Written by the benchmark."}]) { records { blogId: blog_id title status } } }`,
			PostGraphile: `mutation Q4($blogId: Int!) { created: createBlogPost(input: {blogPost: {blogId: $blogId,
  title: "Benchmark post", body: "Written by the benchmark."}}) { blogPost { blogId title status } } }`,
			// The same document: nothing in it names a primary key.
			PostGraphile5: `mutation Q4($blogId: Int!) { created: createBlogPost(input: {blogPost: {blogId: $blogId,
  title: "Benchmark post", body: "Written by the benchmark."}}) { blogPost { blogId title status } } }`,
			CeilingSQL: `insert into public.blog_post (blog_id, title, body)
values ($1, 'Benchmark post', 'Written by the benchmark.')
returning json_build_object('created', json_build_object('records', json_build_array(
  json_build_object('blogId', blog_id, 'title', title, 'status', status))))`,
			CeilingArgs: func(vars map[string]any) []any { return []any{vars["blogId"]} },
			// Accounts from accounts/10 on: their blogs are outside Q5's, so Q5's answers do not grow.
			Variant: func(v int) (map[string]any, int) {
				account := accounts/10 + v + 1
				return map[string]any{"blogId": owners*(account-1) + 1}, account
			},
			Mutates: true,
		},
		{
			Name:        "Q5",
			Description: "the owner's 10 blogs by id range, each with up to 10 posts, drafts included by RLS (user)",
			As:          AsUser,
			PgGraphQL: `query Q5($from: Int!, $to: Int!) { blogs: blogCollection(first: 10,
  filter: {id: {gte: $from, lte: $to}}) { edges { node { id name
  posts: blog_postCollection(first: 10) { edges { node { id title status } } } } } } }`,
			PostGraphile: `query Q5($from: Int!, $to: Int!) { blogs: allBlogs(first: 10,
  filter: {id: {greaterThanOrEqualTo: $from, lessThanOrEqualTo: $to}}, orderBy: PRIMARY_KEY_ASC) { nodes { id name
  posts: blogPostsByBlogId(first: 10, orderBy: PRIMARY_KEY_ASC) { nodes { id title status } } } } }`,
			PostGraphile5: `query Q5($from: Int!, $to: Int!) { blogs: allBlogs(first: 10,
  filter: {rowId: {greaterThanOrEqualTo: $from, lessThanOrEqualTo: $to}}, orderBy: PRIMARY_KEY_ASC) { nodes {
  id: rowId name posts: blogPostsByBlogId(first: 10, orderBy: PRIMARY_KEY_ASC) { nodes { id: rowId title status } } } } }`,
			CeilingSQL: `select json_build_object('blogs', json_build_object('edges', coalesce(json_agg(
  json_build_object('node', json_build_object('id', b.id, 'name', b.name,
    'posts', json_build_object('edges', posts.edges))) order by b.id), '[]')))
from (select id, name from public.blog where id >= $1 and id <= $2 order by id limit 10) b
cross join lateral (
  select coalesce(json_agg(json_build_object('node', json_build_object('id', p.id, 'title', p.title,
    'status', p.status)) order by p.id), '[]') as edges
  from (select id, title, status from public.blog_post where blog_id = b.id order by id limit 10) p) posts`,
			CeilingArgs: rangeArgs,
			Variant: func(v int) (map[string]any, int) {
				return map[string]any{"from": owners*v + 1, "to": owners*v + owners}, v + 1
			},
		},
		{
			Name:        "Q6",
			Description: "upsert the user's subscription to a blog: `onConflict` (extension `upsert`, RLS on both paths)",
			As:          AsUser,
			PgGraphQL: `mutation Q6($accountId: Int!, $blogId: Int!) { subscribed: insertIntoblog_subscriptionCollection(
  objects: [{account_id: $accountId, blog_id: $blogId, level: "all"}],
  onConflict: {constraint: blog_subscription_pkey, updateColumns: [level]}) {
  records { blogId: blog_id level } } }`,
			CeilingSQL: `with s as (
  insert into public.blog_subscription (account_id, blog_id, level) values ($1, $2, 'all')
  on conflict (account_id, blog_id) do update set level = excluded.level
  returning blog_id, level)
select json_build_object('subscribed', json_build_object(
  'records', coalesce((select json_agg(json_build_object('blogId', s.blog_id, 'level', s.level)) from s), '[]')))`,
			CeilingArgs: func(vars map[string]any) []any { return []any{vars["accountId"], vars["blogId"]} },
			Variant: func(v int) (map[string]any, int) {
				account := accounts/10 + v + 1
				return map[string]any{"accountId": account, "blogId": v + 1}, account
			},
			Mutates: true,
		},
		{
			Name:        "Q7",
			Description: "insert a post with two comments into the user's own blog (extension `nestedInsert`, RLS)",
			As:          AsUser,
			PgGraphQL: `mutation Q7($blogId: Int!) { created: insertIntoblog_postCollection(objects: [{blog_id: $blogId,
  title: "Benchmark post", body: "With two comments.",
  post_commentCollection: [{body: "First!"}, {body: "Second."}]}]) { records { blogId: blog_id title } } }`,
			CeilingSQL: `with p as (
  insert into public.blog_post (blog_id, title, body) values ($1, 'Benchmark post', 'With two comments.')
  returning id, blog_id, title),
c as (
  insert into public.post_comment (post_id, body) select p.id, v.body from p, (values ('First!'), ('Second.')) v (body))
select json_build_object('created', json_build_object(
  'records', (select json_agg(json_build_object('blogId', p.blog_id, 'title', p.title)) from p)))`,
			CeilingArgs: func(vars map[string]any) []any { return []any{vars["blogId"]} },
			// Q4's accounts, their second blog.
			Variant: func(v int) (map[string]any, int) {
				account := accounts/10 + v + 1
				return map[string]any{"blogId": owners*(account-1) + 2}, account
			},
			Mutates: true,
		},
		{
			Name:        "Q8",
			Description: "the published posts of the blog with a given name: a filter on a related row (extension `relatedFilter`, anon)",
			As:          AsAnon,
			PgGraphQL: `query Q8($name: String!) { posts: blog_postCollection(first: 20,
  filter: {blog: {name: {eq: $name}}}) { edges { node { id title } } } }`,
			PostGraphile: `query Q8($name: String!) { posts: allBlogPosts(first: 20, orderBy: PRIMARY_KEY_ASC,
  filter: {blogByBlogId: {name: {equalTo: $name}}}) { nodes { id title } } }`,
			PostGraphile5: `query Q8($name: String!) { posts: allBlogPosts(first: 20, orderBy: PRIMARY_KEY_ASC,
  filter: {blogByBlogId: {name: {equalTo: $name}}}) { nodes { id: rowId title } } }`,
			CeilingSQL: `select json_build_object('posts', json_build_object('edges', coalesce(json_agg(
  json_build_object('node', json_build_object('id', p.id, 'title', p.title)) order by p.id), '[]')))
from (select id, title from public.blog_post p
      where exists (select from public.blog b where b.id = p.blog_id and b.name = $1)
      order by id limit 20) p`,
			CeilingArgs: func(vars map[string]any) []any { return []any{vars["name"]} },
			// Blogs of the first accounts, which Q4 and Q7 leave alone.
			Variant: func(v int) (map[string]any, int) {
				return map[string]any{"name": fmt.Sprintf("Blog %d", v+1)}, 0
			},
		},
	}
}

// Body is the JSON request body of a query in one dialect.
func Body(document, operation string, vars map[string]any) ([]byte, error) {
	req := map[string]any{"query": document, "operationName": operation}
	if vars != nil {
		req["variables"] = vars
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode request %s: %w", operation, err)
	}
	return b, nil
}
