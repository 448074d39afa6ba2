package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestTestIDPCommand(t *testing.T) {
	bin := buildBinary(t)
	port := freePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	p := launch(t, bin, nil, "testidp", "--addr", addr, "--client-id", "dev-client")
	p.waitFor(t, "[auth.external.google]", port)
	resp, err := http.Get("http://" + addr + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Issuer                string `json:"issuer"`
		AuthorizationEndpoint string `json:"authorization_endpoint"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || doc.Issuer != "http://"+addr {
		t.Fatalf("discovery: %+v %v", doc, err)
	}
	// The consent page is interactive by default: /authorize shows a page instead of redirecting.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err := noFollow.Get(doc.AuthorizationEndpoint + "?client_id=dev-client&redirect_uri=http://localhost/cb&response_type=code&state=s&scope=openid")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusOK {
		t.Fatalf("authorize answered %d, want the consent page", r.StatusCode)
	}
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(t, 10*time.Second); err != nil {
		t.Fatalf("exit after SIGINT: %v\n%s", err, p.output)
	}
}

// Issue 22: the examples' provider port was written in two places (config.toml and examples/serve), and with
// it taken the pages silently loaded another provider. testidp --workdir takes address, client ID and secret
// from the project's config.toml, and refuses a taken port naming where the address came from.
func TestTestIDPFromConfig(t *testing.T) {
	bin := buildBinary(t)
	workdir := t.TempDir()
	port := freePort(t)
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	if err := os.MkdirAll(filepath.Join(workdir, "supabase"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(workdir, "supabase"), "config.toml", "[auth.external.google]\nenabled = true\nclient_id = \"cfg-client,ios-client\"\nsecret = \"cfg-secret\"\nurl = \""+url+"\"\n")
	p := launch(t, bin, nil, "testidp", "--workdir", workdir)
	p.waitFor(t, "[auth.external.google]", port)
	if out := p.output.String(); !strings.Contains(out, `client_id = "cfg-client"`) || !strings.Contains(out, `secret = "cfg-secret"`) ||
		!strings.Contains(out, `url = "`+url+`"`) {
		t.Errorf("testidp --workdir did not take config.toml's provider:\n%s", out)
	}
	out, err := runBinary(t, bin, "testidp", "--workdir", workdir)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 ||
		!strings.Contains(out, "cannot listen on 127.0.0.1:"+strconv.Itoa(port)+" ([auth.external.google] url of "+filepath.Join(workdir, "supabase", "config.toml")+")") ||
		!strings.Contains(out, "the port is already in use") {
		t.Errorf("a second testidp on the taken port: %v\n%s", err, out)
	}
	writeFile(t, filepath.Join(workdir, "supabase"), "config.toml", "[auth.external.google]\nenabled = true\nclient_id = \"c\"\n")
	if out, err := runBinary(t, bin, "testidp", "--workdir", workdir); err == nil || !strings.Contains(out, "[auth.external.google] url must be the test provider's address") {
		t.Errorf("testidp --workdir without a url: %v\n%s", err, out)
	}
}
