package pgbouncertest

import (
	"context"
	"net"
	"net/url"
	"os"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/internal/devtools/porttest"
	"github.com/pgreflect/pgreflect/internal/pgcluster"
	"github.com/pgreflect/pgreflect/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// A port reported free can be taken before PgBouncer binds it (by a cluster or a connection of another
// package's tests): PgBouncer exits, while a connection to the port reaches the other process. Start tries
// another port, and hands out a pooler only once PgBouncer listens.
func TestStartMovesOffAPortTakenMeanwhile(t *testing.T) {
	ctx := context.Background()
	taken := porttest.NewTaken(t, pgcluster.FreePort)
	db := pgtest.NewDB(t)
	u, err := url.Parse(db)
	if err != nil {
		t.Fatal(err)
	}
	user := u.User.Username()
	b := start(t, pgtest.ServerURL(t), Options{Users: map[string]string{user: ""}}, taken.Next)
	if b.addr == net.JoinHostPort("127.0.0.1", strconv.Itoa(taken.Port)) || taken.Asked != 2 {
		t.Fatalf("pooler at %s (taken %d), ports asked %d", b.addr, taken.Port, taken.Asked)
	}
	conn, err := pgx.Connect(ctx, b.URL(t, db, user))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var one int
	if err := conn.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("a query through the pooler: %d %v", one, err)
	}
}
