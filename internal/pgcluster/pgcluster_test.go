package pgcluster

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestPasswordClusterLifecycle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "pgcluster-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{DataDir: filepath.Join(dir, "data"), Port: port, Password: "s3cret", Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.Initialized() {
		t.Fatal("an empty directory reads as initialized")
	}
	if err := c.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if !c.Initialized() {
		t.Fatal("not initialized after Init")
	}
	if _, err := os.Stat(filepath.Join(dir, ".pwfile")); !os.IsNotExist(err) {
		t.Fatal("the password file was left behind")
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Stop(context.Background())
	if !c.Running(ctx) {
		t.Fatal("not running after Start")
	}
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		t.Fatalf("the right password was refused: %v", err)
	}
	conn.Close(ctx)
	// TCP connections must present the password: a wrong one and none are refused.
	u, _ := url.Parse(c.URL("postgres"))
	for _, user := range []*url.Userinfo{url.UserPassword(Superuser, "wrong"), url.User(Superuser)} {
		u.User = user
		if conn, err := pgx.Connect(ctx, u.String()); err == nil {
			conn.Close(ctx)
			t.Fatalf("connected as %s without the right password", user)
		}
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if c.Running(ctx) {
		t.Fatal("still running after Stop")
	}
}
