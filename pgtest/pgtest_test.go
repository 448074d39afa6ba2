package pgtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/internal/pgcluster"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestNewDBIsIsolated(t *testing.T) {
	ctx := context.Background()
	a, b := NewDB(t), NewDB(t)
	if a == b {
		t.Fatalf("two tests share a database: %s", a)
	}
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	if _, err := ca.Exec(ctx, "create table only_in_a(id int)"); err != nil {
		t.Fatal(err)
	}
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	var n int
	if err := cb.QueryRow(ctx, "select count(*) from pg_class where relname = 'only_in_a'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatal("table created in one test database is visible in another")
	}
}

// The server that runs is the one whose binaries pgcluster picks (PGREFLECT_PG_BINDIR: `make test PG=17`), and
// ServerMajor says which.
func TestServerIsTheSelectedVersion(t *testing.T) {
	if os.Getenv(EnvURL) != "" {
		t.Skipf("%s names the server; its binaries are not pgcluster's", EnvURL)
	}
	bin, err := pgcluster.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(bin, "postgres"), "--version").Output()
	if err != nil {
		t.Fatalf("%s/postgres --version: %v", bin, err)
	}
	// "postgres (PostgreSQL) 17.4"
	fields := strings.Fields(string(out))
	want, err := strconv.Atoi(strings.SplitN(fields[len(fields)-1], ".", 2)[0])
	if err != nil {
		t.Fatalf("postgres --version said %q: %v", out, err)
	}
	if got := ServerMajor(t); got != want {
		t.Errorf("ServerMajor = %d, but %s/postgres is PostgreSQL %d", got, bin, want)
	}
	if want < 14 {
		t.Errorf("PostgreSQL %d is older than 14, the oldest supported", want)
	}
}
