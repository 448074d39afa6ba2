// Package browsertest drives Debian's headless chromium from tests: a minimal Chrome DevTools protocol client
// over --remote-debugging-pipe (file descriptors 3 and 4, messages separated by NUL bytes), so browser tests
// need no websocket library or extra module.
package browsertest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

type cdpMessage struct {
	ID        int64           `json:"id,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

type Browser struct {
	t        testing.TB
	cmd      *exec.Cmd
	toChrome io.WriteCloser

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan cdpMessage
	logs    []string // console errors, exceptions and log entries of the page
	closed  bool
}

// Start launches headless chromium with a throwaway profile and returns a client attached to it.
func Start(t testing.TB, chromium string) *Browser {
	t.Helper()
	profile := t.TempDir()
	toChromeR, toChromeW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromChromeR, fromChromeW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(chromium,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--window-size=1400,900", "--hide-scrollbars",
		"--user-data-dir="+profile, "--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{toChromeR, fromChromeW} // fd 3: commands in, fd 4: replies out
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	toChromeR.Close()
	fromChromeW.Close()
	b := &Browser{t: t, cmd: cmd, toChrome: toChromeW, pending: map[int64]chan cdpMessage{}}
	go b.read(fromChromeR)
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		// Browser.close lets chromium end its renderer and GPU processes itself; Kill is the fallback.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = b.call(ctx, "", "Browser.close", nil)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		b.toChrome.Close()
		fromChromeR.Close()
		if t.Failed() {
			t.Logf("chromium stderr (without its D-Bus complaints):\n%s", withoutDBus(stderr.String()))
		}
	})
	return b
}

func (b *Browser) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		frame, err := br.ReadBytes(0)
		if err != nil {
			b.mu.Lock()
			b.closed = true
			for id, ch := range b.pending {
				close(ch)
				delete(b.pending, id)
			}
			b.mu.Unlock()
			return
		}
		var m cdpMessage
		if json.Unmarshal(frame[:len(frame)-1], &m) != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch, ok := b.pending[m.ID]; ok {
				ch <- m
				delete(b.pending, m.ID)
			}
		} else if line := describeEvent(m); line != "" {
			b.logs = append(b.logs, line)
		}
		b.mu.Unlock()
	}
}

// describeEvent turns the events that mean something went wrong in the page into a log line.
func describeEvent(m cdpMessage) string {
	switch m.Method {
	case "Runtime.exceptionThrown":
		var p struct {
			ExceptionDetails struct {
				Text      string `json:"text"`
				Exception struct {
					Description string `json:"description"`
				} `json:"exception"`
			} `json:"exceptionDetails"`
		}
		_ = json.Unmarshal(m.Params, &p)
		return "exception: " + p.ExceptionDetails.Text + " " + p.ExceptionDetails.Exception.Description
	case "Runtime.consoleAPICalled":
		var p struct {
			Type string `json:"type"`
			Args []struct {
				Value       any    `json:"value"`
				Description string `json:"description"`
			} `json:"args"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.Type != "error" && p.Type != "warning" {
			return ""
		}
		var parts []string
		for _, a := range p.Args {
			parts = append(parts, fmt.Sprint(a.Value, a.Description))
		}
		return "console." + p.Type + ": " + strings.Join(parts, " ")
	case "Log.entryAdded":
		var p struct {
			Entry struct {
				Source string `json:"source"`
				Level  string `json:"level"`
				Text   string `json:"text"`
				URL    string `json:"url"`
			} `json:"entry"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.Entry.Level != "error" && p.Entry.Level != "warning" {
			return "" // verbose and info entries are the browser's recommendations
		}
		return "log " + p.Entry.Level + " (" + p.Entry.Source + "): " + p.Entry.Text + " " + p.Entry.URL
	}
	return ""
}

// call sends one command (to the browser when session is empty) and returns its result.
func (b *Browser) call(ctx context.Context, session, method string, params any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	if params == nil {
		raw = []byte("{}")
	}
	ch := make(chan cdpMessage, 1)
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, fmt.Errorf("%s: browser connection closed", method)
	}
	b.nextID++
	id := b.nextID
	b.pending[id] = ch
	b.mu.Unlock()
	frame, _ := json.Marshal(cdpMessage{ID: id, SessionID: session, Method: method, Params: raw})
	if _, err := b.toChrome.Write(append(frame, 0)); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("%s: browser connection closed", method)
		}
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		return m.Result, nil
	case <-ctx.Done():
		b.mu.Lock()
		delete(b.pending, id)
		b.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// PageLogs returns what went wrong in pages so far.
func (b *Browser) PageLogs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.logs...)
}

// Tab is one page of the browser.
type Tab struct {
	// t is the test that opened the tab: a subtest's failure ends the subtest, not its parent.
	t       testing.TB
	b       *Browser
	session string
	ctx     context.Context
}

func (b *Browser) NewTab(ctx context.Context, t testing.TB) *Tab {
	t.Helper()
	res, err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"})
	if err != nil {
		t.Fatal(err)
	}
	var target struct {
		TargetID string `json:"targetId"`
	}
	_ = json.Unmarshal(res, &target)
	res, err = b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true})
	if err != nil {
		t.Fatal(err)
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(res, &att)
	tb := &Tab{t: t, b: b, session: att.SessionID, ctx: ctx}
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable"} {
		tb.Must(m, nil)
	}
	tb.Must("Emulation.setDeviceMetricsOverride",
		map[string]any{"width": 1400, "height": 900, "deviceScaleFactor": 1, "mobile": false})
	return tb
}

func (tb *Tab) Must(method string, params any) json.RawMessage {
	tb.t.Helper()
	res, err := tb.b.call(tb.ctx, tb.session, method, params)
	if err != nil {
		tb.t.Fatal(err)
	}
	return res
}

func (tb *Tab) Navigate(url string) {
	tb.t.Helper()
	res := tb.Must("Page.navigate", map[string]any{"url": url})
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	_ = json.Unmarshal(res, &nav)
	if nav.ErrorText != "" {
		tb.t.Fatalf("navigate to %s: %s", url, nav.ErrorText)
	}
	tb.WaitFor("document.readyState === 'complete'", 20*time.Second)
}

// Eval evaluates a JavaScript expression (awaiting promises) and decodes its value into out.
func (tb *Tab) Eval(expr string, out any) {
	tb.t.Helper()
	res := tb.Must("Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true})
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		tb.t.Fatal(err)
	}
	if r.ExceptionDetails != nil {
		tb.t.Fatalf("evaluate %s: %s %s", expr, r.ExceptionDetails.Text, r.ExceptionDetails.Exception.Description)
	}
	if out != nil && len(r.Result.Value) > 0 {
		if err := json.Unmarshal(r.Result.Value, out); err != nil {
			tb.t.Fatalf("evaluate %s: decode %s: %v", expr, r.Result.Value, err)
		}
	}
}

func (tb *Tab) EvalString(expr string) string {
	tb.t.Helper()
	var s string
	tb.Eval(expr, &s)
	return s
}

// WaitFor polls a JavaScript condition until it is true.
func (tb *Tab) WaitFor(cond string, timeout time.Duration) {
	tb.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		// A page that is navigating (a form posted, a redirect) has no document to evaluate in for a moment:
		// Chromium answers that the target navigated or that the context is gone, and the next try finds the
		// new page.
		res, err := tb.b.call(tb.ctx, tb.session, "Runtime.evaluate", map[string]any{"expression": "Boolean(" + cond + ")", "returnByValue": true})
		if err != nil && !navigating(err) {
			tb.t.Fatal(err)
		}
		var r struct {
			Result struct {
				Value bool `json:"value"`
			} `json:"result"`
		}
		if err == nil && json.Unmarshal(res, &r) == nil && r.Result.Value {
			return
		}
		if time.Now().After(deadline) {
			tb.t.Fatalf("timed out after %s waiting for %s; page logs: %q", timeout, cond, tb.b.PageLogs())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// navigating reports whether err is Chromium's answer to an evaluation in a page that is being replaced.
func navigating(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "navigated or closed") || strings.Contains(msg, "Cannot find context") ||
		strings.Contains(msg, "context was destroyed")
}

// Click sends a real mouse click to the middle of the element the selector names.
func (tb *Tab) Click(selector string) {
	tb.t.Helper()
	var box struct{ X, Y float64 }
	tb.Eval(fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect();
		return {X: r.x + r.width / 2, Y: r.y + r.height / 2}; })()`, selector), &box)
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		tb.Must("Input.dispatchMouseEvent", map[string]any{"type": typ, "x": box.X, "y": box.Y,
			"button": "left", "clickCount": 1})
	}
}

// Key sends one key press with modifiers (2 = Ctrl).
func (tb *Tab) Key(key, code string, keyCode, modifiers int) {
	tb.t.Helper()
	for _, typ := range []string{"rawKeyDown", "keyUp"} {
		tb.Must("Input.dispatchKeyEvent", map[string]any{"type": typ, "key": key, "code": code,
			"windowsVirtualKeyCode": keyCode, "modifiers": modifiers})
	}
}

// TypeText inserts text at the focus as a keyboard would.
func (tb *Tab) TypeText(text string) {
	tb.t.Helper()
	tb.Must("Input.insertText", map[string]any{"text": text})
}

// Screenshot saves a PNG of the viewport.
func (tb *Tab) Screenshot(path string) {
	tb.t.Helper()
	res := tb.Must("Page.captureScreenshot", map[string]any{"format": "png"})
	var shot struct {
		Data []byte `json:"data"` // base64 in JSON, decoded by encoding/json
	}
	if err := json.Unmarshal(res, &shot); err != nil {
		tb.t.Fatal(err)
	}
	if err := os.WriteFile(path, shot.Data, 0o644); err != nil {
		tb.t.Fatal(err)
	}
	tb.t.Logf("screenshot: %s", path)
}

// withoutDBus drops chromium's noise about the D-Bus it cannot reach in a container.
func withoutDBus(log string) string {
	var kept []string
	for _, l := range strings.Split(log, "\n") {
		if !strings.Contains(l, "dbus") {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}
