package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/internal/pgcluster"
	"github.com/pgreflect/pgreflect/pgtest"
)

// binDir holds the binary that binary builds; TestMain removes it.
var binDir string

func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binary builds pgreflect once per test binary.
var binary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "pgreflect-bin-")
	if err != nil {
		return "", err
	}
	binDir = dir
	bin := filepath.Join(dir, "pgreflect")
	out, err := exec.Command("go", "build", "-buildvcs=false", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", &buildError{err, string(out)}
	}
	return bin, nil
})

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + e.out }

func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary with its own PostgreSQL")
	}
	if _, err := pgcluster.BinDir(); err != nil {
		t.Fatal(err)
	}
	bin, err := binary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// projectDir is a directory PostgreSQL can reach when the tests run as root (it then runs as another user).
func projectDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pgreflect-cmd-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "project")
}

// givenPorts are the ports freePort has handed out in this test binary: one is free until the server it is for
// binds it, and must not be handed out again meanwhile.
var givenPorts sync.Map

// freePort is a free port below the kernel's ephemeral range, none given twice. The tests bind their ports
// late: a project's PostgreSQL after initdb, a server after start-up, a restarted one after the kill. A port from
// the ephemeral range (the kernel's choice for port 0) was free when chosen, and the kernel may hand it to another
// test package's outgoing connection or cluster before then: TestStartRestartsItsPostgreSQL's PostgreSQL found
// its port taken between the kill and the restart, and TestStartStatusStopRestart's before its first start (CI,
// PostgreSQL 18 run, 2026-11-29).
func freePort(t *testing.T) int {
	t.Helper()
	low := ephemeralLow()
	for range 100 {
		p := 10000 + rand.IntN(low-10000)
		if _, given := givenPorts.LoadOrStore(p, true); given {
			continue
		}
		if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p)); err == nil {
			l.Close()
			return p
		}
	}
	t.Fatalf("no free port in 10000-%d", low-1)
	return 0
}

// ephemeralLow is the start of the kernel's ephemeral port range.
func ephemeralLow() int {
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 11000 {
				return n
			}
		}
	}
	return 32768 // Linux's default
}

// process is a pgreflect subprocess of a test. It is reaped as soon as it exits, so that `stop` does not
// wait on a zombie, and killed when the test ends if it still runs.
type process struct {
	cmd    *exec.Cmd
	output *testenv.SyncBuffer
	exited chan struct{} // closed once err is set
	err    error
}

// launch runs the binary with args (and extra environment) and returns at once.
func launch(t *testing.T, bin string, env []string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	p := &process{cmd: cmd, output: &testenv.SyncBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.output, p.output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		if !p.hasExited() {
			cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

func (p *process) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// wait waits up to d for the process to exit and returns its error.
func (p *process) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case <-p.exited:
		return p.err
	case <-time.After(d):
		t.Fatalf("%s still running after %s:\n%s", p.cmd.Args[1], d, p.output)
		return nil
	}
}

// waitFor waits until the output contains marker (and, when port is not 0, the port accepts connections).
func (p *process) waitFor(t *testing.T, marker string, port int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if p.hasExited() {
			t.Fatalf("pgreflect %s exited early: %v\n%s", p.cmd.Args[1], p.err, p.output)
		}
		if strings.Contains(p.output.String(), marker) {
			if port == 0 {
				return
			}
			if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
				c.Close()
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgreflect %s did not come up:\n%s", p.cmd.Args[1], p.output)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startProject runs `pgreflect start` (with extra flags) and waits until it serves HTTP.
func startProject(t *testing.T, bin, dir string, port, dbPort int, extra ...string) *process {
	t.Helper()
	return startIn(t, bin, dir, port, append([]string{"--dir", dir, "--port", strconv.Itoa(port), "--db-port", strconv.Itoa(dbPort),
		"--workdir", t.TempDir()}, extra...)...)
}

// startedProject builds the binary, starts a project in a directory of its own and returns the binary and the
// project's project.env.
func startedProject(t *testing.T) (bin string, env map[string]string) {
	t.Helper()
	bin = buildBinary(t)
	dir := projectDir(t)
	startProject(t, bin, dir, freePort(t), freePort(t))
	env, err := readProjectEnv(dir)
	if err != nil {
		t.Fatal(err)
	}
	return bin, env
}

// startIn runs `pgreflect start` with args, whose project directory is dir, and waits until it serves HTTP
// on port.
func startIn(t *testing.T, bin, dir string, port int, args ...string) *process {
	t.Helper()
	p := launch(t, bin, nil, append([]string{"start"}, args...)...)
	// Runs before launch's cleanup: a start killed by the test leaves its PostgreSQL behind.
	t.Cleanup(func() {
		if !p.hasExited() {
			p.cmd.Process.Kill()
			<-p.exited
		}
		exec.Command(bin, "stop", "--dir", dir).Run()
	})
	p.waitFor(t, "Serving on", port)
	return p
}

func runBinary(t *testing.T, bin string, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	return string(out), err
}

func parseEnvLines(t *testing.T, s string) map[string]string {
	t.Helper()
	env := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			t.Fatalf("not a KEY=value line: %q", sc.Text())
		}
		env[k] = v
	}
	return env
}

func TestStartStatusStopRestart(t *testing.T) {
	bin := buildBinary(t)
	dir := projectDir(t)
	port, dbPort := freePort(t), freePort(t)
	ctx := context.Background()

	first := startProject(t, bin, dir, port, dbPort)
	// A new local project's cluster has nothing of its own in schema public before setup: the demo gets the
	// default privileges of new objects, so nothing is left ungranted (issue 22 changed only existing objects).
	if out := first.output.String(); strings.Contains(out, "nothing was granted") || !anonMay(t, "postgresql://postgres:postgres@127.0.0.1:"+strconv.Itoa(dbPort)+"/postgres", "public.blog", "select") {
		t.Errorf("a new local project's demo is not granted to anon as before:\n%s", out)
	}
	out, err := runBinary(t, bin, "status", "--dir", dir, "-o", "env")
	if err != nil {
		t.Fatalf("status -o env: %v\n%s", err, out)
	}
	env := parseEnvLines(t, out)
	for _, k := range envKeys {
		if env[k] == "" {
			t.Errorf("status -o env: %s missing or empty", k)
		}
	}
	apiURL := "http://127.0.0.1:" + strconv.Itoa(port)
	if env["API_URL"] != apiURL || env["GRAPHQL_URL"] != apiURL+"/graphql/v1" || env["MANAGEMENT_URL"] != apiURL ||
		env["STUDIO_URL"] != apiURL+"/console/" {
		t.Errorf("URLs: %v", env)
	}
	// The console (GraphiQL) is served and carries the anon key, never the service_role key or the secret.
	if resp, err := http.Get(env["STUDIO_URL"]); err != nil {
		t.Errorf("console: %v", err)
	} else {
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(page), env["ANON_KEY"]) ||
			strings.Contains(string(page), env["SERVICE_ROLE_KEY"]) || strings.Contains(string(page), env["JWT_SECRET"]) ||
			strings.Contains(string(page), env["MANAGEMENT_TOKEN"]) || !strings.Contains(string(page), env["PROJECT_REF"]) {
			t.Errorf("console page: %d (anon key shown: %v)", resp.StatusCode, strings.Contains(string(page), env["ANON_KEY"]))
		}
	}
	// Its pages get the service_role key (behind Reveal) and the management token (for the Providers page)
	// from the credentials endpoint, which answers this machine.
	if resp, err := http.Get(env["STUDIO_URL"] + "api/credentials"); err != nil {
		t.Errorf("console credentials: %v", err)
	} else {
		var creds map[string]string
		err := json.NewDecoder(resp.Body).Decode(&creds)
		resp.Body.Close()
		if err != nil || creds["serviceRoleKey"] != env["SERVICE_ROLE_KEY"] || creds["managementToken"] != env["MANAGEMENT_TOKEN"] {
			t.Errorf("console credentials: %d %v", resp.StatusCode, err)
		}
	}
	// The Schema pages read the project's database: the demo's tables for every API role.
	if access := schemaPage(t, env["STUDIO_URL"], "access"); !strings.Contains(access, `"name":"blog"`) || !strings.Contains(access, `"service_role":{"type":"blog"`) {
		t.Errorf("console schema access: %.300s", access)
	}
	if len(env["PROJECT_REF"]) != 20 || strings.ToLower(env["PROJECT_REF"]) != env["PROJECT_REF"] {
		t.Errorf("PROJECT_REF %q: want 20 lower-case characters", env["PROJECT_REF"])
	}
	if len(env["JWT_SECRET"]) < 40 {
		t.Errorf("JWT_SECRET has %d characters, want at least 40", len(env["JWT_SECRET"]))
	}
	if _, ok := env[authenticatorPasswordKey]; ok {
		t.Error("status -o env prints the authenticator password")
	}
	// The printed keys and secret are also in the start output.
	for _, k := range []string{"ANON_KEY", "SERVICE_ROLE_KEY", "PROJECT_REF", "DB_URL"} {
		if !strings.Contains(first.output.String(), env[k]) {
			t.Errorf("start did not print %s", k)
		}
	}
	info, err := os.Stat(filepath.Join(dir, envFileName))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("project.env mode: %v, %v; want 0600", info, err)
	}
	if out, err := runBinary(t, bin, "status", "--dir", dir); err != nil || !strings.Contains(out, "is running") ||
		!strings.Contains(out, "pg_graphql version: 1.6 (newest available: 1.6)") || strings.Contains(out, "Exposed schemas") {
		t.Errorf("status: %v\n%s", err, out)
	}

	checkGraphQL(t, apiURL, env["ANON_KEY"])
	checkAuthRoutes(t, env)
	checkRoles(t, env)

	// The API's login role is authenticator, which may become the API roles but not the superuser.
	kept, err := readProjectEnv(dir)
	if err != nil {
		t.Fatal(err)
	}
	authURL := withUser(env["DB_URL"], "authenticator", kept[authenticatorPasswordKey])
	authConn, err := pgx.Connect(ctx, authURL)
	if err != nil {
		t.Fatalf("connect as authenticator: %v", err)
	}
	if _, err := authConn.Exec(ctx, "set role anon"); err != nil {
		t.Errorf("authenticator cannot become anon: %v", err)
	}
	if _, err := authConn.Exec(ctx, "reset role; set role postgres"); err == nil {
		t.Error("authenticator could become postgres")
	}
	authConn.Close(ctx)

	// The demo is there; remove a row to see that the second start does not load it again.
	if n := countAccounts(t, env["DB_URL"]); n != 2 {
		t.Fatalf("demo accounts: %d, want 2", n)
	}
	admin, err := pgx.Connect(ctx, env["DB_URL"])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "delete from public.blog_post; delete from public.blog; delete from public.account where email = 'bob@example.com'"); err != nil {
		t.Fatal(err)
	}
	admin.Close(ctx)

	// A second start on the same directory is refused while the first runs.
	if out, err := runBinary(t, bin, "start", "--dir", dir, "--port", strconv.Itoa(freePort(t)), "--db-port", strconv.Itoa(freePort(t))); err == nil || !strings.Contains(out, "already running") {
		t.Errorf("second concurrent start: %v\n%s", err, out)
	}

	if out, err := runBinary(t, bin, "stop", "--dir", dir); err != nil || !strings.Contains(out, "Stopped pgreflect") {
		t.Fatalf("stop: %v\n%s", err, out)
	}
	if err := first.wait(t, time.Minute); err != nil {
		t.Errorf("start exited with %v after stop\n%s", err, first.output)
	}
	assertPostgresGone(t, dir, dbPort)
	if _, err := os.Stat(filepath.Join(dir, pidFileName)); !os.IsNotExist(err) {
		t.Errorf("pid file left behind: %v", err)
	}
	// Issue 22: status exited 0 when nothing ran, so scripts could not use it.
	for _, args := range [][]string{{"status", "--dir", dir}, {"status", "--dir", dir, "-o", "env"}} {
		out, err := runBinary(t, bin, args...)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 3 || !strings.Contains(out, "not running") {
			t.Errorf("%v after stop: %v (want exit status 3)\n%s", args, err, out)
		}
	}
	if out, err := runBinary(t, bin, "status", "--dir", filepath.Join(dir, "nothing-here")); err == nil || !strings.Contains(out, "no project in") {
		t.Errorf("status of a directory without a project: %v\n%s", err, out)
	} else if exit := new(exec.ExitError); errors.As(err, &exit) && exit.ExitCode() != 1 {
		t.Errorf("status of a directory without a project: exit status %d, want 1", exit.ExitCode())
	}

	// Restart: same secrets and keys, demo not reloaded.
	port2, dbPort2 := freePort(t), freePort(t)
	second := startProject(t, bin, dir, port2, dbPort2)
	out, err = runBinary(t, bin, "status", "--dir", dir, "-o", "env")
	if err != nil {
		t.Fatal(err)
	}
	env2 := parseEnvLines(t, out)
	for _, k := range []string{"JWT_SECRET", "PROJECT_REF", "ANON_KEY", "SERVICE_ROLE_KEY", "MANAGEMENT_TOKEN"} {
		if env2[k] != env[k] {
			t.Errorf("%s changed on restart: %q -> %q", k, env[k], env2[k])
		}
	}
	if want := "http://127.0.0.1:" + strconv.Itoa(port2); env2["API_URL"] != want {
		t.Errorf("API_URL after restart %q, want %q", env2["API_URL"], want)
	}
	if n := countAccounts(t, env2["DB_URL"]); n != 1 {
		t.Errorf("accounts after restart: %d; want 1 (demo not reloaded)", n)
	}
	checkGraphQL(t, env2["API_URL"], env2["ANON_KEY"])

	// SIGINT (Ctrl-C) stops it as cleanly as `stop` (SIGTERM) does.
	if err := second.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := second.wait(t, time.Minute); err != nil {
		t.Errorf("start exited with %v after SIGINT\n%s", err, second.output)
	}
	assertPostgresGone(t, dir, dbPort2)

	// A new cluster of an old project (its data directory deleted) gets the demo again, with the same keys.
	if err := os.RemoveAll(filepath.Join(dir, dataDirName)); err != nil {
		t.Fatal(err)
	}
	third := startProject(t, bin, dir, freePort(t), freePort(t))
	env3, err := readProjectEnv(dir)
	if err != nil {
		t.Fatal(err)
	}
	if env3["ANON_KEY"] != env["ANON_KEY"] {
		t.Error("anon key changed with a new cluster")
	}
	if n := countAccounts(t, env3["DB_URL"]); n != 2 {
		t.Errorf("accounts in a new cluster: %d; want the demo's 2", n)
	}
	if out, err := runBinary(t, bin, "stop", "--dir", dir); err != nil {
		t.Fatalf("stop: %v\n%s", err, out)
	}
	if err := third.wait(t, time.Minute); err != nil {
		t.Errorf("start exited with %v after stop\n%s", err, third.output)
	}
}

// countAccounts counts the rows of the demo's account table.
func countAccounts(t *testing.T, dbURL string) int {
	t.Helper()
	return queryOne[int](t, dbURL, "select count(*) from public.account")
}

// anonMay reports whether the anon role holds any of privileges (comma-separated) on table.
func anonMay(t *testing.T, dbURL, table, privileges string) bool {
	t.Helper()
	return queryOne[bool](t, dbURL, "select has_table_privilege('anon', $1, $2)", table, privileges)
}

// queryOne runs a query of one value on a connection of its own.
func queryOne[T any](t *testing.T, dbURL, query string, args ...any) T {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v T
	if err := conn.QueryRow(ctx, query, args...).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// checkGraphQL asks the running server for __typename with the anon key.
func checkGraphQL(t *testing.T, apiURL, anonKey string) {
	t.Helper()
	status, body := postGraphQL(t, apiURL, anonKey, `{"query":"{ __typename }"}`)
	if status != http.StatusOK {
		t.Fatalf("POST /graphql/v1: %d %s", status, body)
	}
	want := map[string]any{"data": map[string]any{"__typename": "Query"}}
	if !sameJSON(body, want) {
		t.Fatalf("POST /graphql/v1 = %s, want the JSON of %v", body, want)
	}
}
func postGraphQL(t *testing.T, apiURL, anonKey, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, apiURL+"/graphql/v1", strings.NewReader(body))
	req.Header.Set("apikey", anonKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /graphql/v1: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// sameJSON reports whether body is the JSON of want, whatever the spacing and key order.
func sameJSON(body string, want any) bool {
	var got any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		return false
	}
	g, err1 := json.Marshal(got)
	w, err2 := json.Marshal(want)
	return err1 == nil && err2 == nil && string(g) == string(w)
}

// checkRoles checks through HTTP that the demo's row level security applies to a signed-in user and that a
// JWT cannot select a role the superuser has but authenticator lacks (start must not serve as the superuser).
func checkRoles(t *testing.T, env map[string]string) {
	t.Helper()
	keys, err := auth.NewKeys(env["JWT_SECRET"])
	if err != nil {
		t.Fatal(err)
	}
	post := func(claims jwt.MapClaims) (int, string) {
		token, err := keys.Sign(claims)
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequest(http.MethodPost, env["GRAPHQL_URL"], strings.NewReader(`{"query":"{ todoCollection { edges { node { task } } } }"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("apikey", env["ANON_KEY"])
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	exp := time.Now().Add(time.Hour).Unix()
	code, body := post(jwt.MapClaims{"sub": "00000000-0000-4000-8000-000000000002", "role": "authenticated", "exp": exp})
	want := map[string]any{"data": map[string]any{"todoCollection": map[string]any{"edges": []any{
		map[string]any{"node": map[string]any{"task": "Buy timber"}}}}}}
	if code != http.StatusOK || !sameJSON(body, want) {
		t.Errorf("to-dos of the second demo user: %d %s", code, body)
	}
	if code, body := post(jwt.MapClaims{"sub": "00000000-0000-4000-8000-000000000002", "role": "pg_read_all_data", "exp": exp}); code != http.StatusUnauthorized {
		t.Errorf("JWT role pg_read_all_data: %d %s, want 401", code, body)
	}
}

// checkAuthRoutes checks that start mounted the auth service and the management API.
func checkAuthRoutes(t *testing.T, env map[string]string) {
	t.Helper()
	get := func(url string, header map[string]string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get(env["API_URL"]+"/auth/v1/settings", map[string]string{"apikey": env["ANON_KEY"]}); code != http.StatusOK || !strings.Contains(body, `"external"`) {
		t.Errorf("GET /auth/v1/settings: %d %s", code, body)
	}
	mgmt := env["MANAGEMENT_URL"] + "/v1/projects/" + env["PROJECT_REF"] + "/config/auth"
	if code, body := get(mgmt, map[string]string{"Authorization": "Bearer " + env["MANAGEMENT_TOKEN"]}); code != http.StatusOK {
		t.Errorf("GET %s with the management token: %d %s", mgmt, code, body)
	}
	if code, body := get(mgmt, map[string]string{"Authorization": "Bearer " + env["ANON_KEY"]}); code != http.StatusUnauthorized {
		t.Errorf("GET %s with the anon key: %d %s, want 401", mgmt, code, body)
	}
}

func assertPostgresGone(t *testing.T, dir string, dbPort int) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, dataDirName, "postmaster.pid")); !os.IsNotExist(err) {
		t.Errorf("postmaster.pid still there: %v", err)
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(dbPort), time.Second); err == nil {
		c.Close()
		t.Errorf("something still listens on the database port %d", dbPort)
	}
}

func TestStartReportsBusyPorts(t *testing.T) {
	bin := buildBinary(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)

	out, err := runBinary(t, bin, "start", "--dir", projectDir(t), "--port", busyPort, "--db-port", strconv.Itoa(freePort(t)))
	if err == nil || !strings.Contains(out, "127.0.0.1:"+busyPort+" (--port)") {
		t.Errorf("busy HTTP port: %v\n%s", err, out)
	}
	dir := projectDir(t)
	out, err = runBinary(t, bin, "start", "--dir", dir, "--port", strconv.Itoa(freePort(t)), "--db-port", busyPort)
	if err == nil || !strings.Contains(out, "127.0.0.1:"+busyPort+" (--db-port)") || !strings.Contains(out, "already in use") {
		t.Errorf("busy database port: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, pidFileName)); !os.IsNotExist(err) {
		t.Errorf("a failed start left a pid file: %v", err)
	}
}

func TestServeAndSetup(t *testing.T) {
	bin, env := startedProject(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, env["DB_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	for _, stmt := range []string{`create database plain`, `create role plain_login login password 'pw'`} {
		if _, err := admin.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	plainAdmin := strings.Replace(env["DB_URL"], "/postgres?", "/plain?", 1)
	plainLogin := withUser(plainAdmin, "plain_login", "pw")

	// serve refuses a database that is not set up when its login role cannot set it up.
	servePort := freePort(t)
	out, err := runBinary(t, bin, "serve", "--db-url", plainLogin, "--jwt-secret", env["JWT_SECRET"], "--port", strconv.Itoa(servePort), "--workdir", t.TempDir())
	if err == nil || !strings.Contains(out, "pgreflect setup") {
		t.Fatalf("serve on a database without setup: %v\n%s", err, out)
	}

	// Issue 11: setup on a database with its own auth.uid() (an integer, as in many PostgREST databases)
	// failed with "cannot change return type of existing function". It keeps it, names it, and serve starts.
	c, err := pgx.Connect(ctx, plainAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, `create schema auth; create function auth.uid() returns int language sql stable as 'select 42';
		create table public.us_states (id int primary key, name text); insert into us_states values (1, 'Alaska')`); err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)
	out, err = runBinary(t, bin, "setup", "--db-url", plainAdmin)
	if err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	if !strings.Contains(out, "warning: kept the database's own auth.uid() returns integer") {
		t.Errorf("setup did not name the kept auth.uid():\n%s", out)
	}
	// Issue 22: setup's hint to give authenticator a password, followed on this project's cluster, cut the
	// running start off; where authenticator has one, setup says to keep it.
	if strings.Contains(out, "alter role authenticator password") || !strings.Contains(out, "authenticator has a password already") {
		t.Errorf("setup on a cluster whose authenticator has a password:\n%s", out)
	}
	// Issue 22: setup granted anon every privilege on the existing tables, so the anon key could delete rows
	// of a database without row level security. It grants nothing on them unless asked, and says so.
	if !strings.Contains(out, "lack privileges on 1 of them (table public.us_states)") || !strings.Contains(out, "--grant-existing") {
		t.Errorf("setup did not name the existing table it left ungranted:\n%s", out)
	}
	if anonMay(t, plainAdmin, "public.us_states", "select,insert,update,delete,truncate") {
		t.Error("setup without --grant-existing granted anon a privilege on an existing table")
	}
	out, err = runBinary(t, bin, "setup", "--db-url", plainAdmin, "--grant-existing")
	if err != nil {
		t.Fatalf("setup --grant-existing: %v\n%s", err, out)
	}
	if !strings.Contains(out, "every privilege on these existing objects of schema public:\n  table public.us_states\n") {
		t.Errorf("setup --grant-existing did not print what it granted:\n%s", out)
	}
	if !anonMay(t, plainAdmin, "public.us_states", "select") || !anonMay(t, plainAdmin, "public.us_states", "delete") {
		t.Error("setup --grant-existing did not grant anon the existing table")
	}
	c, err = pgx.Connect(ctx, plainAdmin)
	if err != nil {
		t.Fatal(err)
	}
	var triggers, uid int
	err = c.QueryRow(ctx, `select count(*), auth.uid() from pg_event_trigger where evtname like 'pgreflect_%'`).Scan(&triggers, &uid)
	c.Close(ctx)
	if err != nil || triggers != 2 || uid != 42 {
		t.Fatalf("event triggers after setup: %d, auth.uid() = %d, %v", triggers, uid, err)
	}

	// serve as authenticator on the set-up database answers with the keys given; sign-in is off without a
	// role that may write schema auth.
	keyEnv := []string{"PGREFLECT_JWT_SECRET=" + env["JWT_SECRET"], "PGREFLECT_ANON_KEY=" + env["ANON_KEY"],
		"PGREFLECT_SERVICE_ROLE_KEY=" + env["SERVICE_ROLE_KEY"]}
	output := serveProcess(t, bin, keyEnv, "--db-url", withUser(plainAdmin, "authenticator", env[authenticatorPasswordKey]),
		"--port", strconv.Itoa(servePort), "--workdir", t.TempDir())
	if strings.Contains(output.String(), "generated") || !strings.Contains(output.String(), "sign-in (/auth/v1) and the management API (/v1) are off") {
		t.Errorf("serve as authenticator:\n%s", output)
	}
	if !strings.Contains(output.String(), "warning: row level security is off on public.us_states, which the anon role may write") {
		t.Errorf("serve did not name the table the anon key can write without row level security:\n%s", output)
	}
	checkGraphQL(t, "http://127.0.0.1:"+strconv.Itoa(servePort), env["ANON_KEY"])
	// The Schema pages read through the login role, which switches to each API role.
	if access := schemaPage(t, "http://127.0.0.1:"+strconv.Itoa(servePort)+"/console/", "access"); !strings.Contains(access, `"name":"us_states"`) ||
		!strings.Contains(access, `anon (anyone with the anon key) may read, insert, update, delete every row`) {
		t.Errorf("serve's console schema access: %.300s", access)
	}

	// serve with a superuser on a database without setup sets it up itself, warns, and generates keys.
	if _, err := admin.Exec(ctx, `create database fresh`); err != nil {
		t.Fatal(err)
	}
	freshPort := freePort(t)
	output = serveProcess(t, bin, nil, "--db-url", strings.Replace(env["DB_URL"], "/postgres?", "/fresh?", 1),
		"--jwt-secret", env["JWT_SECRET"], "--port", strconv.Itoa(freshPort), "--workdir", t.TempDir())
	out = output.String()
	if !strings.Contains(out, "Setting up the database") || !strings.Contains(out, "is a superuser") {
		t.Errorf("serve as superuser on a new database:\n%s", out)
	}
	i := strings.Index(out, "anon key (generated")
	if i < 0 {
		t.Fatalf("no generated anon key:\n%s", out)
	}
	fields := strings.Fields(out[i:])
	checkGraphQL(t, "http://127.0.0.1:"+strconv.Itoa(freshPort), fields[6])

	// start --db-url uses an existing database, and never loads the demo into it unless asked (issue 11: it
	// did on the project's first run, failing on an existing table account). The cluster's authenticator is
	// the first project's: its password stays (issue 11: the second project reset it, cutting the first one
	// off), and the second project logs in as a role of its own.
	if _, err := admin.Exec(ctx, `create database external`); err != nil {
		t.Fatal(err)
	}
	externalURL := strings.Replace(env["DB_URL"], "/postgres?", "/external?", 1)
	ec, err := pgx.Connect(ctx, externalURL)
	if err != nil {
		t.Fatal(err)
	}
	defer ec.Close(ctx)
	if _, err := ec.Exec(ctx, `create table account(id int primary key, note text); insert into account values (1, 'mine')`); err != nil {
		t.Fatal(err)
	}
	extDir, extPort := projectDir(t), freePort(t)
	ext := launch(t, bin, nil, "start", "--dir", extDir, "--db-url", externalURL, "--port", strconv.Itoa(extPort), "--workdir", t.TempDir())
	ext.waitFor(t, "Serving on", extPort)
	extEnv, err := readProjectEnv(extDir)
	if err != nil {
		t.Fatal(err)
	}
	if extEnv["DB_URL"] != externalURL {
		t.Errorf("DB_URL %q, want %q", extEnv["DB_URL"], externalURL)
	}
	if _, err := os.Stat(filepath.Join(extDir, dataDirName)); !os.IsNotExist(err) {
		t.Errorf("start --db-url created a cluster: %v", err)
	}
	var tables []string
	rows, err := ec.Query(ctx, `select relname::text from pg_class where relnamespace = 'public'::regnamespace and relkind = 'r' order by 1`)
	if err != nil {
		t.Fatal(err)
	}
	if tables, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	if strings.Join(tables, ",") != "account" {
		t.Errorf("tables of the existing database after start --db-url: %v, want only its own account", tables)
	}
	ownRole := "authenticator_" + extEnv["PROJECT_REF"]
	if !strings.Contains(ext.output.String(), "logs in as "+ownRole) {
		t.Errorf("start --db-url on a cluster with another project's authenticator:\n%s", ext.output)
	}
	// Issue 22: the existing table is not opened to the anon key unless asked.
	if !strings.Contains(ext.output.String(), "lack privileges on 1 of them (table public.account)") {
		t.Errorf("start --db-url did not name the existing table it left ungranted:\n%s", ext.output)
	}
	if anonMay(t, externalURL, "public.account", "select,insert,update,delete,truncate") {
		t.Error("start --db-url granted anon a privilege on an existing table")
	}
	firstLogin, err := pgx.Connect(ctx, withUser(env["DB_URL"], "authenticator", env[authenticatorPasswordKey]))
	if err != nil {
		t.Fatalf("the first project's authenticator password no longer works after a second project started: %v", err)
	}
	firstLogin.Close(ctx)
	checkGraphQL(t, env["API_URL"], env["ANON_KEY"])
	if out, err := runBinary(t, bin, "stop", "--dir", extDir); err != nil || !strings.Contains(out, "Stopped pgreflect") {
		t.Fatalf("stop: %v\n%s", err, out)
	}
	if err := ext.wait(t, time.Minute); err != nil {
		t.Errorf("start --db-url exited with %v\n%s", err, ext.output)
	}
	if err := admin.Ping(ctx); err != nil {
		t.Errorf("the external database's server stopped with its pgreflect: %v", err)
	}

	// start --grant-existing grants it, says so, and names it as writable by anon without row level security.
	ext = launch(t, bin, nil, "start", "--dir", extDir, "--db-url", externalURL, "--grant-existing", "--port", strconv.Itoa(extPort), "--workdir", t.TempDir())
	ext.waitFor(t, "Serving on", extPort)
	if out := ext.output.String(); !strings.Contains(out, "every privilege on these existing objects of schema public:\n  table public.account\n") ||
		!strings.Contains(out, "warning: row level security is off on public.account, which the anon role may write") {
		t.Errorf("start --db-url --grant-existing:\n%s", out)
	}
	if status, body := postGraphQL(t, extEnv["API_URL"], extEnv["ANON_KEY"], `{"query":"{ accountCollection { edges { node { note } } } }"}`); status != http.StatusOK ||
		!sameJSON(body, map[string]any{"data": map[string]any{"accountCollection": map[string]any{"edges": []any{map[string]any{"node": map[string]any{"note": "mine"}}}}}}) {
		t.Errorf("the existing database through start --db-url --grant-existing: %d %s", status, body)
	}
	if out, err := runBinary(t, bin, "stop", "--dir", extDir); err != nil {
		t.Fatalf("stop: %v\n%s", err, out)
	}
	if err := ext.wait(t, time.Minute); err != nil {
		t.Errorf("start --db-url --grant-existing exited with %v\n%s", err, ext.output)
	}

	// --demo asks for the demo; the project's own login role is found again on its next start.
	if _, err := admin.Exec(ctx, `create database external_demo`); err != nil {
		t.Fatal(err)
	}
	demoURL := strings.Replace(env["DB_URL"], "/postgres?", "/external_demo?", 1)
	ext = launch(t, bin, nil, "start", "--dir", extDir, "--db-url", demoURL, "--demo", "--port", strconv.Itoa(extPort), "--workdir", t.TempDir())
	ext.waitFor(t, "Serving on", extPort)
	if extEnv, err = readProjectEnv(extDir); err != nil {
		t.Fatal(err)
	}
	if n := countAccounts(t, demoURL); n != 2 {
		t.Errorf("demo accounts with --demo: %d, want 2", n)
	}
	checkRoles(t, extEnv)
	if out, err := runBinary(t, bin, "stop", "--dir", extDir); err != nil {
		t.Fatalf("stop: %v\n%s", err, out)
	}
	if err := ext.wait(t, time.Minute); err != nil {
		t.Errorf("start --db-url --demo exited with %v\n%s", err, ext.output)
	}
}

// serveProcess runs `pgreflect serve` with args until the test ends (then SIGINT, which must stop it cleanly)
// and returns its output once it serves.
func serveProcess(t *testing.T, bin string, env []string, args ...string) *testenv.SyncBuffer {
	t.Helper()
	p := launch(t, bin, env, append([]string{"serve"}, args...)...)
	// Runs before launch's cleanup.
	t.Cleanup(func() {
		p.cmd.Process.Signal(os.Interrupt)
		if err := p.wait(t, 30*time.Second); err != nil {
			t.Errorf("serve exited with %v\n%s", err, p.output)
		}
	})
	p.waitFor(t, "GraphQL URL", 0)
	return p.output
}

// Issue 22: when the project's PostgreSQL died, start served 503s for ever. It restarts it, and exits saying
// why when it cannot.
//
// Issue 22 too: a project belongs to its workdir (start used ./.pgreflect whatever --workdir said, so the
// examples shared the repository's project), and start names the stored settings that beat config.toml.
func TestStartRestartsItsPostgreSQL(t *testing.T) {
	bin := buildBinary(t)
	workdir := projectDir(t)
	if err := os.MkdirAll(filepath.Join(workdir, "supabase"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(workdir, "supabase"), "config.toml", "[auth.external.google]\nenabled = true\nclient_id = \"from-the-file\"\nsecret = \"file-secret\"\n")
	dir := filepath.Join(workdir, ".pgreflect")
	port, dbPort := freePort(t), freePort(t)
	startArgs := []string{"--workdir", workdir, "--port", strconv.Itoa(port), "--db-port", strconv.Itoa(dbPort)}
	p := startIn(t, bin, dir, port, startArgs...)
	out, err := runBinary(t, bin, "status", "--workdir", workdir, "-o", "env")
	if err != nil {
		t.Fatalf("status --workdir of a project started with --workdir: %v\n%s", err, out)
	}
	env := parseEnvLines(t, out)
	if fromDir, err := readProjectEnv(dir); err != nil || fromDir["PROJECT_REF"] != env["PROJECT_REF"] {
		t.Fatalf("the project of --workdir %s is not in %s: %v", workdir, dir, err)
	}
	// A client ID saved through the management API (as the console does) beats the file's.
	req, _ := http.NewRequest(http.MethodPatch, env["MANAGEMENT_URL"]+"/v1/projects/"+env["PROJECT_REF"]+"/config/auth",
		strings.NewReader(`{"external_google_client_id": "from-the-console"}`))
	req.Header.Set("Authorization", "Bearer "+env["MANAGEMENT_TOKEN"])
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("PATCH the client ID: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// So do exposed schemas saved the same way (issue 22: the console's Settings > API).
	if conn, err := pgx.Connect(context.Background(), env["DB_URL"]); err != nil {
		t.Fatal(err)
	} else {
		_, err = conn.Exec(context.Background(), "create schema shop")
		conn.Close(context.Background())
		if err != nil {
			t.Fatal(err)
		}
	}
	if status, body := request(t, http.MethodPatch, env["MANAGEMENT_URL"]+"/v1/projects/"+env["PROJECT_REF"]+"/postgrest",
		env["MANAGEMENT_TOKEN"], `{"db_schema": "public,shop"}`); status != http.StatusOK || !strings.Contains(body, `"db_schema":"public,shop"`) {
		t.Fatalf("PATCH the exposed schemas: %d %s", status, body)
	}
	if out, err := runBinary(t, bin, "status", "--workdir", workdir); err != nil ||
		!strings.Contains(out, "Exposed schemas: public, shop (stored through the management API") {
		t.Errorf("status does not name the stored exposed schemas: %v\n%s", err, out)
	}
	killPostmaster := func() {
		t.Helper()
		pidFile, err := os.ReadFile(filepath.Join(dir, dataDirName, "postmaster.pid"))
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.SplitN(string(pidFile), "\n", 2)[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}

	killPostmaster()
	p.waitFor(t, "PostgreSQL restarted.", 0)
	// The pool's connections died with the server: a request may fail before new ones are made.
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body := postGraphQL(t, env["API_URL"], env["ANON_KEY"], `{"query":"{ __typename }"}`)
		if status == http.StatusOK && sameJSON(body, map[string]any{"data": map[string]any{"__typename": "Query"}}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the restart of PostgreSQL: %d %s\n%s", status, body, p.output)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Issue 22: setup's hint followed on this cluster (a new password for authenticator) cut the running start
	// off; start gives the role back the project's password.
	fromDir, err := readProjectEnv(dir)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(context.Background(), env["DB_URL"])
	if err != nil {
		t.Fatal(err)
	}
	_, err = admin.Exec(context.Background(), `alter role authenticator password 'changed-by-hand'`)
	admin.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, "The password of authenticator on this project's PostgreSQL was changed", 0)
	login, err := pgx.Connect(context.Background(), withUser(env["DB_URL"], "authenticator", fromDir[authenticatorPasswordKey]))
	if err != nil {
		t.Fatalf("the API's login after start restored it: %v", err)
	}
	login.Close(context.Background())

	// With its port taken, PostgreSQL cannot come back: start exits and says why.
	killPostmaster()
	var taken net.Listener
	for deadline := time.Now().Add(10 * time.Second); taken == nil; {
		if taken, err = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(dbPort)); err != nil {
			if time.Now().After(deadline) {
				t.Fatalf("the killed PostgreSQL's port stays busy: %v", err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	err = p.wait(t, 2*time.Minute)
	taken.Close()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 ||
		!strings.Contains(p.output.String(), "pgreflect start: the project's PostgreSQL stopped and could not be restarted") {
		t.Errorf("start with a PostgreSQL that cannot restart: %v\n%s", err, p.output)
	}

	// The next start of the workdir's project names the stored client ID that beats config.toml's.
	p = startIn(t, bin, dir, port, startArgs...)
	if out := p.output.String(); !strings.Contains(out, "overrides supabase/config.toml") ||
		!strings.Contains(out, `setting=external_google_client_id config.toml="[auth.external.google] client_id" stored=from-the-console file=from-the-file`) {
		t.Errorf("start did not name the stored value that beats config.toml:\n%s", out)
	}
	if out := p.output.String(); !strings.Contains(out, `setting=db_schema config.toml="[api] schemas" stored=public,shop file=public`) {
		t.Errorf("start did not name the stored exposed schemas that beat config.toml:\n%s", out)
	}
	if out, err := runBinary(t, bin, "stop", "--workdir", workdir); err != nil || !strings.Contains(out, "Stopped pgreflect") {
		t.Errorf("stop --workdir: %v\n%s", err, out)
	}
}

// schemaPage is the console's api/schema/<page> answer (the test runs on the server's machine: loopback).
func schemaPage(t *testing.T, consoleURL, page string) string {
	t.Helper()
	resp, err := http.Get(consoleURL + "api/schema/" + page)
	if err != nil {
		t.Fatalf("console schema %s: %v", page, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("console schema %s: %d %s", page, resp.StatusCode, body)
	}
	return string(body)
}

// The tests' ports come from below the ephemeral range, each once.
func TestFreePortIsBelowTheEphemeralRangeAndGivenOnce(t *testing.T) {
	low := ephemeralLow()
	seen := map[int]bool{}
	for range 200 {
		p := freePort(t)
		if p >= low || p < 10000 || seen[p] {
			t.Fatalf("port %d: want one not given before in 10000-%d", p, low-1)
		}
		seen[p] = true
	}
}
