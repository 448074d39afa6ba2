package main

import (
	"encoding/json"
	"net/http"
	"strconv"
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
