package console_test

// A minimal Chrome DevTools protocol client over --remote-debugging-pipe (file descriptors 3 and 4,
// messages separated by NUL bytes), so the browser test needs no websocket library or extra module.

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

type browser struct {
	t        *testing.T
	cmd      *exec.Cmd
	toChrome io.WriteCloser

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan cdpMessage
	logs    []string // console errors, exceptions and log entries of the page
	closed  bool
}

// startBrowser launches headless chromium with a throwaway profile and returns a client attached to it.
func startBrowser(t *testing.T, chromium string) *browser {
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
	b := &browser{t: t, cmd: cmd, toChrome: toChromeW, pending: map[int64]chan cdpMessage{}}
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

func (b *browser) read(r io.Reader) {
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
func (b *browser) call(ctx context.Context, session, method string, params any) (json.RawMessage, error) {
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

// pageLogs returns what went wrong in pages so far.
func (b *browser) pageLogs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.logs...)
}

// tab is one page of the browser.
type tab struct {
	b       *browser
	session string
	ctx     context.Context
}

func (b *browser) newTab(ctx context.Context) *tab {
	b.t.Helper()
	res, err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"})
	if err != nil {
		b.t.Fatal(err)
	}
	var target struct {
		TargetID string `json:"targetId"`
	}
	_ = json.Unmarshal(res, &target)
	res, err = b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true})
	if err != nil {
		b.t.Fatal(err)
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(res, &att)
	tb := &tab{b: b, session: att.SessionID, ctx: ctx}
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable"} {
		tb.must(m, nil)
	}
	tb.must("Emulation.setDeviceMetricsOverride",
		map[string]any{"width": 1400, "height": 900, "deviceScaleFactor": 1, "mobile": false})
	return tb
}

func (tb *tab) must(method string, params any) json.RawMessage {
	tb.b.t.Helper()
	res, err := tb.b.call(tb.ctx, tb.session, method, params)
	if err != nil {
		tb.b.t.Fatal(err)
	}
	return res
}

func (tb *tab) navigate(url string) {
	tb.b.t.Helper()
	res := tb.must("Page.navigate", map[string]any{"url": url})
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	_ = json.Unmarshal(res, &nav)
	if nav.ErrorText != "" {
		tb.b.t.Fatalf("navigate to %s: %s", url, nav.ErrorText)
	}
	tb.waitFor("document.readyState === 'complete'", 20*time.Second)
}

// eval evaluates a JavaScript expression (awaiting promises) and decodes its value into out.
func (tb *tab) eval(expr string, out any) {
	tb.b.t.Helper()
	res := tb.must("Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true})
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
		tb.b.t.Fatal(err)
	}
	if r.ExceptionDetails != nil {
		tb.b.t.Fatalf("evaluate %s: %s %s", expr, r.ExceptionDetails.Text, r.ExceptionDetails.Exception.Description)
	}
	if out != nil && len(r.Result.Value) > 0 {
		if err := json.Unmarshal(r.Result.Value, out); err != nil {
			tb.b.t.Fatalf("evaluate %s: decode %s: %v", expr, r.Result.Value, err)
		}
	}
}

func (tb *tab) evalString(expr string) string {
	tb.b.t.Helper()
	var s string
	tb.eval(expr, &s)
	return s
}

// waitFor polls a JavaScript condition until it is true.
func (tb *tab) waitFor(cond string, timeout time.Duration) {
	tb.b.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var ok bool
		tb.eval("Boolean("+cond+")", &ok)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			tb.b.t.Fatalf("timed out after %s waiting for %s; page logs: %q", timeout, cond, tb.b.pageLogs())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// click sends a real mouse click to the middle of the element the selector names.
func (tb *tab) click(selector string) {
	tb.b.t.Helper()
	var box struct{ X, Y float64 }
	tb.eval(fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect();
		return {X: r.x + r.width / 2, Y: r.y + r.height / 2}; })()`, selector), &box)
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		tb.must("Input.dispatchMouseEvent", map[string]any{"type": typ, "x": box.X, "y": box.Y,
			"button": "left", "clickCount": 1})
	}
}

// key sends one key press with modifiers (2 = Ctrl).
func (tb *tab) key(key, code string, keyCode, modifiers int) {
	tb.b.t.Helper()
	for _, typ := range []string{"rawKeyDown", "keyUp"} {
		tb.must("Input.dispatchKeyEvent", map[string]any{"type": typ, "key": key, "code": code,
			"windowsVirtualKeyCode": keyCode, "modifiers": modifiers})
	}
}

// typeText inserts text at the focus as a keyboard would.
func (tb *tab) typeText(text string) {
	tb.b.t.Helper()
	tb.must("Input.insertText", map[string]any{"text": text})
}

// screenshot saves a PNG of the viewport.
func (tb *tab) screenshot(path string) {
	tb.b.t.Helper()
	res := tb.must("Page.captureScreenshot", map[string]any{"format": "png"})
	var shot struct {
		Data []byte `json:"data"` // base64 in JSON, decoded by encoding/json
	}
	if err := json.Unmarshal(res, &shot); err != nil {
		tb.b.t.Fatal(err)
	}
	if err := os.WriteFile(path, shot.Data, 0o644); err != nil {
		tb.b.t.Fatal(err)
	}
	tb.b.t.Logf("screenshot: %s", path)
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
