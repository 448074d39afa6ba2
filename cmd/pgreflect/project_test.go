package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/auth"
)

func TestSecretsGeneratedThenKept(t *testing.T) {
	s, err := secretsFrom(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.JWTSecret) < 40 || len(s.ProjectRef) != 20 || strings.ToLower(s.ProjectRef) != s.ProjectRef {
		t.Fatalf("generated secret %q, ref %q", s.JWTSecret, s.ProjectRef)
	}
	if !strings.HasPrefix(s.ManagementToken, "sbp_") || len(s.AuthenticatorPassword) < 32 {
		t.Fatalf("management token %q, authenticator password %q", s.ManagementToken, s.AuthenticatorPassword)
	}
	keys, err := auth.NewKeys(s.JWTSecret)
	if err != nil {
		t.Fatal(err)
	}
	for key, role := range map[string]string{s.AnonKey: "anon", s.ServiceRoleKey: "service_role"} {
		claims, err := keys.Verify(key)
		if err != nil {
			t.Fatalf("%s key does not verify: %v", role, err)
		}
		if claims["role"] != role || claims["ref"] != s.ProjectRef {
			t.Errorf("%s key claims %v", role, claims)
		}
	}

	dir := t.TempDir()
	env := map[string]string{
		"JWT_SECRET": s.JWTSecret, "PROJECT_REF": s.ProjectRef, "ANON_KEY": s.AnonKey,
		"SERVICE_ROLE_KEY": s.ServiceRoleKey, "MANAGEMENT_TOKEN": s.ManagementToken,
		authenticatorPasswordKey: s.AuthenticatorPassword, "API_URL": "http://127.0.0.1:1",
	}
	if err := writeProjectEnv(dir, env); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, envFileName))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("project.env: %v, %v; want mode 0600", info, err)
	}
	read, err := readProjectEnv(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := secretsFrom(read)
	if err != nil {
		t.Fatal(err)
	}
	if again != s {
		t.Errorf("secrets changed on reload:\n%+v\n%+v", s, again)
	}

	// A new JWT secret invalidates the old keys: they are signed again.
	read["JWT_SECRET"] = ""
	fresh, err := secretsFrom(read)
	if err != nil {
		t.Fatal(err)
	}
	if fresh.JWTSecret == s.JWTSecret || fresh.AnonKey == s.AnonKey || fresh.ProjectRef != s.ProjectRef {
		t.Errorf("after dropping the secret: %+v", fresh)
	}
}

func TestWithUser(t *testing.T) {
	for _, in := range []string{
		"postgresql://postgres:postgres@127.0.0.1:5432/app?sslmode=disable",
		"host=127.0.0.1 port=5432 dbname=app user=postgres password=postgres sslmode=disable",
	} {
		out := withUser(in, "authenticator", `p'w\x`)
		cfg, err := pgx.ParseConfig(out)
		if err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		if cfg.User != "authenticator" || cfg.Password != `p'w\x` || cfg.Database != "app" || cfg.Port != 5432 {
			t.Errorf("%s -> user %q password %q db %q port %d", out, cfg.User, cfg.Password, cfg.Database, cfg.Port)
		}
	}
}

func TestUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"frobnicate"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), `unknown command "frobnicate"`) {
		t.Errorf("unknown command: exit %d, %q", code, errOut.String())
	}
	errOut.Reset()
	if code := run([]string{"status", "--dir", t.TempDir()}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "no project in") {
		t.Errorf("status without a project: exit %d, %q", code, errOut.String())
	}
	errOut.Reset()
	if code := run([]string{"serve"}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "--db-url is required") {
		t.Errorf("serve without --db-url: exit %d, %q", code, errOut.String())
	}
	errOut.Reset()
	if code := run([]string{"stop", "--bogus"}, &out, &errOut); code != 2 {
		t.Errorf("bad flag: exit %d, %q", code, errOut.String())
	}
}

func TestLoadConfigSearchPath(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "supabase"), 0o755); err != nil {
		t.Fatal(err)
	}
	toml := "[api]\nport = 6001\nschemas = [\"public\", \"app\"]\nextra_search_path = [\"public\", \"extensions\"]\n"
	if err := os.WriteFile(filepath.Join(dir, "supabase", "config.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cfg, path, err := loadConfig(dir, "", &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(path, ","); got != "public,app,extensions" || cfg.API.Port != 6001 {
		t.Errorf("search path %q, port %d; want public,app,extensions and 6001", got, cfg.API.Port)
	}
	if _, path, err = loadConfig(dir, " app , other ", &stderr); err != nil || strings.Join(path, ",") != "app,other" {
		t.Errorf("--schemas: %q, %v", path, err)
	}
	if _, _, err = loadConfig(dir, " , ", &stderr); err == nil {
		t.Error("--schemas without a name was accepted")
	}
}

func TestProjectLock(t *testing.T) {
	dir := t.TempDir()
	// A pid file nobody holds (left by a killed start) names no running process, even a live pid.
	if err := os.WriteFile(filepath.Join(dir, pidFileName), []byte(strconv.Itoa(os.Getppid())+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if pid, running := readPID(dir); running {
		t.Errorf("stale pid file: readPID = %d, true", pid)
	}

	// Another process holds the lock: it is found, and a second lock is refused with its pid.
	holder := exec.Command(os.Args[0], "-test.run=^TestHelperHoldLock$")
	holder.Env = append(os.Environ(), "PGREFLECT_HELPER_LOCK_DIR="+dir)
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { holder.Process.Kill(); holder.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "locked" {
		t.Fatalf("helper: %q, %v", line, err)
	}
	if pid, running := readPID(dir); !running || pid != holder.Process.Pid {
		t.Errorf("readPID = %d, %v; want %d, true", pid, running, holder.Process.Pid)
	}
	if _, err := lockProject(dir); err == nil || !strings.Contains(err.Error(), "already running") || !strings.Contains(err.Error(), strconv.Itoa(holder.Process.Pid)) {
		t.Errorf("second lock: %v", err)
	}

	// Once it exits the directory is free again.
	holder.Process.Kill()
	holder.Wait()
	f, err := lockProject(dir)
	if err != nil {
		t.Fatalf("lock after the holder exited: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, pidFileName))
	if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("pid file %q, %v; want this pid", b, err)
	}
	unlockProject(f)
	if _, err := os.Stat(filepath.Join(dir, pidFileName)); !os.IsNotExist(err) {
		t.Errorf("pid file after unlock: %v", err)
	}
}

// TestHelperHoldLock is not a test: TestProjectLock runs it in a child process to hold a project's lock.
func TestHelperHoldLock(t *testing.T) {
	dir := os.Getenv("PGREFLECT_HELPER_LOCK_DIR")
	if dir == "" {
		t.Skip("helper process only")
	}
	if _, err := lockProject(dir); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	time.Sleep(time.Minute)
	os.Exit(0)
}
