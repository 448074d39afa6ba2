// Package benchdata loads the benchmark dataset: dbsetup's demo schema (account, blog, blog_post) filled with
// generated rows, and row level security on posts in the way a Supabase project writes it. The side-by-side
// comparison (internal/devtools/benchcmp) and the resolve package's benchmarks share it, so that every figure is measured
// on the same shape of data.
//
// The layout is chosen so that every query of the comparison has a full answer and a request can be varied
// without changing its answer's size: the first Accounts/5 accounts own ten blogs each (blog ids
// 10(a-1)+1 .. 10a belong to account a), every blog has ten posts, and every third post is a draft.
package benchdata

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/internal/dbsetup"
)

// Full is the dataset: 10k accounts, 20k blogs, 200k posts.
const Full = 10000

// Blogs and posts per account and blog, which the queries' "up to 10" answers rely on.
const (
	BlogsPerOwner = 10
	PostsPerBlog  = 10
)

//go:embed schema.sql
var schemaSQL string

// Load installs pgreflect's setup and the demo schema into the database conn is connected to (as a
// superuser), replaces the demo's rows by accounts accounts, 2*accounts blogs and 20*accounts posts, and adds
// the row level security of the benchmark. accounts must be a positive multiple of 50.
func Load(ctx context.Context, conn *pgx.Conn, accounts int) error {
	if accounts <= 0 || accounts%50 != 0 {
		return fmt.Errorf("benchdata: accounts must be a positive multiple of 50, not %d", accounts)
	}
	if err := dbsetup.Apply(ctx, conn); err != nil {
		return err
	}
	if err := dbsetup.LoadDemo(ctx, conn); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, schemaSQL); err != nil {
		return fmt.Errorf("benchdata: schema: %w", err)
	}
	blogs := 2 * accounts
	steps := []struct {
		what string
		sql  string
		n    int
	}{
		{"accounts", `insert into public.account (id, email, encrypted_password, user_id, created_at, updated_at)
			select i, 'user' || i || '@example.com', 'not-a-real-hash', md5('account' || i)::uuid,
			       timestamptz '2024-01-01 00:00:00+00' + i * interval '1 second',
			       timestamptz '2024-01-01 00:00:00+00' + i * interval '1 second'
			from generate_series(1, $1::int) i`, accounts},
		{"blogs", `insert into public.blog (id, owner_id, name, description, created_at, updated_at)
			select i, (i - 1) / 10 + 1, 'Blog ' || i, 'About topic ' || (i % 97),
			       timestamptz '2024-01-01 00:00:00+00' + i * interval '1 second',
			       timestamptz '2024-01-01 00:00:00+00' + i * interval '1 second'
			from generate_series(1, $1::int) i`, blogs},
		{"posts", `insert into public.blog_post (id, blog_id, title, body, status, created_at, updated_at)
			select md5('post' || i)::uuid, (i - 1) / 10 + 1, 'Post ' || i, 'The body of post ' || i || '.',
			       case when i % 3 = 0 then 'PENDING' else 'RELEASED' end::public.blog_post_status,
			       timestamptz '2024-01-01 00:00:00+00' + i * interval '1 minute',
			       timestamptz '2024-01-01 00:00:00+00' + i * interval '1 minute'
			from generate_series(1, $1::int) i`, blogs * PostsPerBlog},
		{"sequences", `select setval('public.account_id_seq', $1::int), setval('public.blog_id_seq', 2 * $1::int)`, accounts},
	}
	for _, s := range steps {
		if _, err := conn.Exec(ctx, s.sql, s.n); err != nil {
			return fmt.Errorf("benchdata: generate %s: %w", s.what, err)
		}
	}
	if _, err := conn.Exec(ctx, `analyze public.account, public.blog, public.blog_post`); err != nil {
		return fmt.Errorf("benchdata: analyze: %w", err)
	}
	return nil
}

// UserID is the auth.uid() of account a: the sub claim of that account's JWT.
func UserID(ctx context.Context, conn *pgx.Conn, account int) (string, error) {
	var id string
	err := conn.QueryRow(ctx, `select user_id::text from public.account where id = $1`, account).Scan(&id)
	if err != nil {
		return "", fmt.Errorf("benchdata: user of account %d: %w", account, err)
	}
	return id, nil
}
