package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// slowClient is a client that sends a request's headers and then its body one byte at a time, forever (for
// at most slowClientLife): what holds connections open when the server only bounds the headers.
type slowClient struct {
	start  time.Time
	done   chan struct{} // closed once the server has hung up; the fields below are set by then
	closed time.Time     // when the server closed the connection
	answer string        // the status line the server sent, if any
	err    error
}

func (c *slowClient) hungUp() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

const slowClientLife = 30 * time.Second

func startSlowClients(t *testing.T, addr, anonKey string, n int) []*slowClient {
	t.Helper()
	clients := make([]*slowClient, n)
	var wg sync.WaitGroup
	for i := range clients {
		c := &slowClient{start: time.Now(), done: make(chan struct{})}
		clients[i] = c
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("slow client %d: %v", i, err)
		}
		t.Cleanup(func() { conn.Close() })
		fmt.Fprintf(conn, "POST /graphql/v1 HTTP/1.1\r\nHost: %s\r\napikey: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n", addr, anonKey)
		wg.Add(2)
		go func() { // the trickle
			defer wg.Done()
			for time.Since(c.start) < slowClientLife {
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
				time.Sleep(250 * time.Millisecond)
			}
		}()
		go func() { // what the server answers, and when it hangs up
			defer wg.Done()
			_ = conn.SetReadDeadline(c.start.Add(slowClientLife))
			line, err := bufio.NewReader(conn).ReadString('\n')
			c.answer = strings.TrimSpace(line)
			if err == nil {
				_, err = io.Copy(io.Discard, conn)
			}
			c.closed = time.Now()
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				c.err = err
			}
			conn.Close()
			close(c.done)
		}()
	}
	t.Cleanup(wg.Wait)
	return clients
}

// waitClosed waits until every slow client has been hung up on, for at most within.
func waitClosed(t *testing.T, clients []*slowClient, within time.Duration) {
	t.Helper()
	timeout := time.After(within)
	for i, c := range clients {
		select {
		case <-c.done:
		case <-timeout:
			t.Fatalf("slow client %d still connected after %s", i, within)
		}
	}
}

func metricValue(t *testing.T, metrics, name string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` ([0-9.e+]+)$`).FindStringSubmatch(metrics)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}

// Slow bodies are cut off by the read timeout, a normal request is answered while slow clients hold
// connections, and past --max-connections further connections wait instead of taking file descriptors; the
// server logs JSON lines, starting and stopping included. All on loopback, with bounded client counts.
func TestSlowClientsAreCutOff(t *testing.T) {
	bin := buildBinary(t)
	dir := projectDir(t)
	port, metricsPort := freePort(t), freePort(t)
	const readTimeout, maxConns = 3 * time.Second, 24
	p := startProject(t, bin, dir, port, freePort(t), "--read-timeout", readTimeout.String(),
		"--max-connections", strconv.Itoa(maxConns), "--metrics-addr", "127.0.0.1:"+strconv.Itoa(metricsPort), "--log-format", "json",
		"--max-depth", "6")
	env, err := readProjectEnv(dir)
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	// The engine's limits come from the flags too: seven levels are refused under --max-depth 6.
	deep := `{"query": "{ accountCollection(first: 1) { edges { node { blogCollection { edges { node { id } } } } } } }"}`
	if status, body := postGraphQL(t, env["API_URL"], env["ANON_KEY"], deep); status != 200 || body != `{"errors": [{"message": "Query is nested more than 6 levels deep"}]}` {
		t.Errorf("a query 7 levels deep under --max-depth 6: %d %s", status, body)
	}
	metricsURL := "http://127.0.0.1:" + strconv.Itoa(metricsPort) + "/metrics"

	// Fewer slow clients than the cap: a normal request is answered while they trickle, and each of them is
	// cut off by the read timeout with a 408.
	slow := startSlowClients(t, addr, env["ANON_KEY"], 16)
	time.Sleep(300 * time.Millisecond)
	checkGraphQL(t, env["API_URL"], env["ANON_KEY"])
	answered := time.Since(slow[0].start)
	for i, c := range slow {
		if c.hungUp() {
			t.Fatalf("slow client %d was closed before the normal request was answered (after %s)", i, answered)
		}
	}
	waitClosed(t, slow, readTimeout+5*time.Second)
	for i, c := range slow {
		if d := c.closed.Sub(c.start); c.err != nil || d < readTimeout-time.Second || !strings.HasPrefix(c.answer, "HTTP/1.1 408") {
			t.Errorf("slow client %d: answered %q after %s (%v), want 408 after about %s", i, c.answer, d, c.err, readTimeout)
		}
	}

	// More slow clients than the cap: the server holds at most the cap, the others wait; a normal request
	// waits its turn and is answered.
	slow = startSlowClients(t, addr, env["ANON_KEY"], maxConns+16)
	time.Sleep(time.Second)
	m := scrape(t, metricsURL)
	if n := metricValue(t, m, "pgreflect_http_open_connections"); n > maxConns || n < maxConns/2 {
		t.Errorf("open connections with %d slow clients and a cap of %d: %v", maxConns+16, maxConns, n)
	}
	if n := metricValue(t, m, `pgreflect_limit_refusals_total{limit="connection_cap"}`); n < 1 {
		t.Errorf("the connection cap was not counted:\n%s", m)
	}
	checkGraphQL(t, env["API_URL"], env["ANON_KEY"])
	waitClosed(t, slow, 3*readTimeout+5*time.Second)
	m = scrape(t, metricsURL)
	if n := metricValue(t, m, `pgreflect_limit_refusals_total{limit="read_timeout"}`); n < float64(16+maxConns+16) {
		t.Errorf("read timeouts counted: %v, want %d", n, 16+maxConns+16)
	}

	if out, err := runBinary(t, bin, "stop", "--dir", dir); err != nil {
		t.Fatalf("stop: %v\n%s", err, out)
	}
	if err := p.wait(t, time.Minute); err != nil {
		t.Errorf("start exited with %v", err)
	}
	out := p.output.String()
	for _, want := range []string{`"msg":"serving"`, `"max_connections":24`, `"msg":"request"`, `"status":408`, `"msg":"shutting down"`, `"msg":"stopped"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %s:\n%s", want, out)
		}
	}
}
