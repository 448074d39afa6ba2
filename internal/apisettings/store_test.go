package apisettings_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/internal/apisettings"
	"github.com/pgreflect/pgreflect/internal/dbsetup"
	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func pool(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// A project set up by a pgreflect that kept the pinned version in the auth schema keeps its pin once the setup
// runs again (as `start` does every time, and `serve` when Installed says the setup is incomplete).
func TestUpgradeKeepsThePinnedVersion(t *testing.T) {
	ctx := context.Background()
	url, admin := testenv.SetupDB(t, "")
	if err := auth.Migrate(ctx, pool(t, url)); err != nil {
		t.Fatal(err)
	}
	// The older state: the pin in auth.pgreflect_config, no pgreflect.api_settings.
	if _, err := admin.Exec(ctx, `drop table pgreflect.api_settings; update auth.pgreflect_config set graphql_version = '1.5'`); err != nil {
		t.Fatal(err)
	}
	if _, err := apisettings.Read(ctx, admin); !errors.Is(err, apisettings.ErrNotSetUp) {
		t.Fatalf("read without the table: %v, want ErrNotSetUp", err)
	}
	if ok, err := dbsetup.Installed(ctx, admin); err != nil || ok {
		t.Fatalf("Installed without the settings table: %v %v, want false", ok, err)
	}
	if err := dbsetup.Apply(ctx, admin); err != nil {
		t.Fatal(err)
	}
	st, err := apisettings.Read(ctx, admin)
	if err != nil || st.GraphQLVersion != "1.5" || st.Schemas != nil {
		t.Fatalf("after the setup: %+v %v, want the pin 1.5 and no schemas", st, err)
	}
	// A later setup does not bring the old value back over a newer one.
	store := apisettings.NewStore(admin)
	if err := store.SetGraphQLVersion(ctx, "1.6"); err != nil {
		t.Fatal(err)
	}
	if err := dbsetup.Apply(ctx, admin); err != nil {
		t.Fatal(err)
	}
	if st, _ := apisettings.Read(ctx, admin); st.GraphQLVersion != "1.6" {
		t.Errorf("after a second setup: %q, want 1.6", st.GraphQLVersion)
	}
}

// The API roles may read the settings, and no role but the owner of schema auth (and superusers) may change
// them: a request's role must not re-point the API.
func TestOnlyTheAdminWrites(t *testing.T) {
	ctx := context.Background()
	url, _ := testenv.SetupDB(t, "")
	login := testenv.LoginPool(t, url)
	for _, role := range []string{"authenticator", "anon", "authenticated", "service_role"} {
		err := pgx.BeginFunc(ctx, login, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "set local role "+role); err != nil {
				return err
			}
			if _, err := apisettings.Read(ctx, tx); err != nil {
				t.Errorf("%s reads: %v", role, err)
			}
			return apisettings.NewStore(tx).SetSchemas(ctx, []string{"auth"})
		})
		if err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("%s stores exposed schemas: %v, want permission denied", role, err)
		}
	}
	// A server whose admin role may not write (given schema auth after the setup) still starts, and says why
	// the pin is not kept.
	var logs bytes.Buffer
	e, err := apisettings.Settle(ctx, apisettings.NewStore(login), apisettings.File{GraphQLVersion: "1.5"}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil || e.GraphQLVersion != "1.5" || !strings.Contains(logs.String(), "cannot be stored: run `pgreflect setup` again") {
		t.Errorf("settle without the right to store: %+v %v\n%s", e, err, logs.String())
	}
}

// Settle pins the version (the file's, else the stored one, else the newest, stored) and names a stored value
// that beats the file's.
func TestSettle(t *testing.T) {
	ctx := context.Background()
	_, admin := testenv.SetupDB(t, "create schema api")
	store := apisettings.NewStore(admin)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	file := apisettings.File{Schemas: []string{"public"}, ExtraSearchPath: []string{"public", "extensions"}, SchemasKey: "[api] schemas"}

	e, err := apisettings.Settle(ctx, store, file, log)
	if err != nil || e.GraphQLVersion != gqlschema.NewestVersion || e.SchemasStored || !slices.Equal(e.SearchPath(), []string{"public", "extensions"}) {
		t.Fatalf("first start: %+v %v", e, err)
	}
	if st, _ := store.Get(ctx); st.GraphQLVersion != string(gqlschema.NewestVersion) {
		t.Errorf("the newest version is not stored: %+v", st)
	}
	if logs.Len() != 0 {
		t.Errorf("nothing stored, yet: %s", logs.String())
	}

	if err := store.SetGraphQLVersion(ctx, "1.5"); err != nil {
		t.Fatal(err)
	}
	if err := store.SetSchemas(ctx, []string{"api"}); err != nil {
		t.Fatal(err)
	}
	e, err = apisettings.Settle(ctx, store, file, log)
	if err != nil || e.GraphQLVersion != "1.5" || !e.SchemasStored || !slices.Equal(e.SearchPath(), []string{"api", "public", "extensions"}) {
		t.Fatalf("with stored values: %+v %v", e, err)
	}
	for _, want := range []string{"overrides supabase/config.toml", "setting=db_schema", `config.toml="[api] schemas"`, "stored=api", "file=public"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the warning lacks %q:\n%s", want, logs.String())
		}
	}

	file.GraphQLVersion = "1.4"
	if _, err := apisettings.Settle(ctx, store, file, log); err == nil || !strings.Contains(err.Error(), `unsupported pg_graphql version "1.4"`) {
		t.Errorf("an unknown configured version: %v", err)
	}
}

// recorder is a Target that keeps the changes it was told of: as the server, it does nothing when told the value
// it has.
type recorder struct {
	mu       sync.Mutex
	versions []gqlschema.Version
	paths    [][]string
}

func (r *recorder) SetGraphQLVersion(v gqlschema.Version) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.versions); n == 0 || r.versions[n-1] != v {
		r.versions = append(r.versions, v)
	}
}

func (r *recorder) SetSearchPath(p []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.paths); n == 0 || !slices.Equal(r.paths[n-1], p) {
		r.paths = append(r.paths, p)
	}
}

func (r *recorder) last() (gqlschema.Version, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var v gqlschema.Version
	var p []string
	if len(r.versions) > 0 {
		v = r.versions[len(r.versions)-1]
	}
	if len(r.paths) > 0 {
		p = r.paths[len(r.paths)-1]
	}
	return v, p
}

// Follow applies what another instance stores, what is stored again when the server was told otherwise, and the
// file's schemas again after a reset.
func TestFollow(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	url, _ := testenv.SetupDB(t, "create schema api")
	store := apisettings.NewStore(pool(t, url))
	file := apisettings.File{Schemas: []string{"public"}}
	current, err := apisettings.Settle(ctx, store, file, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	done := make(chan struct{})
	go func() {
		apisettings.Follow(ctx, store, file, rec, current, 10*time.Millisecond, slog.New(slog.DiscardHandler))
		close(done)
	}()
	defer func() { cancel(); <-done }()

	other := apisettings.NewStore(pool(t, url))
	if err := other.SetGraphQLVersion(ctx, "1.5"); err != nil {
		t.Fatal(err)
	}
	if err := other.SetSchemas(ctx, []string{"api", "public"}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, func() string {
		if v, p := rec.last(); v != "1.5" || !slices.Equal(p, []string{"api", "public"}) {
			return "not followed yet: " + string(v) + " " + strings.Join(p, ",")
		}
		return ""
	})
	// A local PATCH that lost a race applied a value no longer stored: the next read puts it right.
	rec.SetSearchPath([]string{"public"})
	rec.SetGraphQLVersion("1.4")
	testenv.Eventually(t, 5*time.Second, func() string {
		if v, p := rec.last(); v != "1.5" || !slices.Equal(p, []string{"api", "public"}) {
			return "what was stored is not applied again: " + string(v) + " " + strings.Join(p, ",")
		}
		return ""
	})
	if err := other.SetSchemas(ctx, nil); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, func() string {
		if _, p := rec.last(); !slices.Equal(p, []string{"public"}) {
			return "the reset is not followed: " + strings.Join(p, ",")
		}
		return ""
	})
}
