package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Issue 22: docs/ci.md installed pgreflect with `go install ...@latest`, which the module proxy refuses. Its
// GitHub Actions job must run as written: the install step is run here, with the repository's own checkout
// where the job checks pgreflect out, and the binary it builds must work.
func TestCIRecipeInstallStepRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary as docs/ci.md's job does")
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`(?m)^\s+(run: )?go install .*@latest`).Match(doc) {
		t.Error("docs/ci.md still installs with go install ...@latest, which the module proxy refuses")
	}
	script := runBlock(t, string(doc), "- name: Install pgreflect")
	checkoutPath := regexp.MustCompile(`(?m)^\s+path: (\S+)$`).FindStringSubmatch(string(doc))
	if checkoutPath == nil || !strings.Contains(script, checkoutPath[1]) {
		t.Fatalf("the install step does not build from the checkout of pgreflect (path %v):\n%s", checkoutPath, script)
	}

	workspace, runnerTemp := t.TempDir(), t.TempDir()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root, filepath.Join(workspace, checkoutPath[1])); err != nil {
		t.Fatal(err)
	}
	githubPath := filepath.Join(runnerTemp, "github-path")
	cmd := exec.Command("bash", "-e", "-c", script) // GitHub runs a run block with bash -e
	cmd.Dir = workspace
	cmd.Env = append(os.Environ(), "RUNNER_TEMP="+runnerTemp, "GITHUB_PATH="+githubPath)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the install step of docs/ci.md failed: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`(?m)^pgreflect \S+ \(go`).Match(out) {
		t.Errorf("the installed pgreflect did not print its version:\n%s", out)
	}
	added, err := os.ReadFile(githubPath)
	if err != nil {
		t.Fatal(err)
	}
	dir := strings.TrimSpace(string(added))
	if _, err := os.Stat(filepath.Join(dir, "pgreflect")); err != nil {
		t.Errorf("GITHUB_PATH gets %q, which holds no pgreflect: %v", dir, err)
	}
}

// runBlock returns the shell of the `run: |` block of the YAML step that starts with step.
func runBlock(t *testing.T, doc, step string) string {
	t.Helper()
	i := strings.Index(doc, step)
	if i < 0 {
		t.Fatalf("no step %q in docs/ci.md", step)
	}
	lines := strings.Split(doc[i:], "\n")
	var script []string
	indent := -1
	for _, line := range lines[1:] {
		if indent < 0 {
			if strings.TrimSpace(line) != "run: |" {
				t.Fatalf("step %q has no `run: |` block, but %q", step, line)
			}
			indent = 0
			continue
		}
		trimmed := strings.TrimLeft(line, " ")
		if indent == 0 {
			indent = len(line) - len(trimmed)
		}
		if trimmed == "" || len(line)-len(trimmed) < indent {
			break
		}
		script = append(script, line[indent:])
	}
	return strings.Join(script, "\n")
}
