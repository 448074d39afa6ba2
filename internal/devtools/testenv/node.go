package testenv

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Node returns node's path and the flags supabase-js needs, skipping t (failing it under CI) when Node is
// not installed.
func Node(t testing.TB) (string, []string) {
	t.Helper()
	node := LookPath(t, "the supabase-js tests need Node.js 20 or later", "node")
	out, err := exec.Command(node, "-p", "process.versions.node").Output()
	if err != nil {
		t.Fatalf("node -p process.versions.node: %v", err)
	}
	major, err := strconv.Atoi(strings.SplitN(strings.TrimSpace(string(out)), ".", 2)[0])
	if err != nil {
		t.Fatalf("node version %q: %v", out, err)
	}
	if major < 20 {
		t.Fatalf("node %s is too old: supabase-js needs Node.js 20 or later", strings.TrimSpace(string(out)))
	}
	// supabase-js 2.119 asks for Node 22 and throws at createClient on Node 20 for want of a global WebSocket
	// (used by its realtime client); Node 20 has one behind --experimental-websocket.
	var flags []string
	if major < 22 {
		flags = append(flags, "--experimental-websocket")
	}
	return node, flags
}

// RunNodeScript installs dir's npm packages, runs `node script args...` in dir with input as JSON on stdin,
// and decodes the script's last `RESULT <json>` line of stdout into out.
func RunNodeScript(t testing.TB, dir, script string, args []string, input, out any) {
	t.Helper()
	node, flags := Node(t)
	NPMInstall(t, dir)
	in, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	name := strings.Join(append([]string{script}, args...), " ")
	cmd := exec.CommandContext(ctx, node, append(append(flags, script), args...)...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\nstdout:\n%s\nstderr:\n%s", name, err, stdout.String(), stderr.String())
	}
	var result []byte
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if r, ok := bytes.CutPrefix(sc.Bytes(), []byte("RESULT ")); ok {
			result = append([]byte(nil), r...)
		}
	}
	if result == nil {
		t.Fatalf("node %s printed no result\nstdout:\n%s\nstderr:\n%s", name, stdout.String(), stderr.String())
	}
	if err := json.Unmarshal(result, out); err != nil {
		t.Fatalf("decoding the result of node %s: %v\n%s", name, err, result)
	}
	if testing.Verbose() {
		t.Logf("node %s result: %s", name, result)
	}
}
