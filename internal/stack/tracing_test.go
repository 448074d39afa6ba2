package stack_test

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/internal/stacktest"
	"github.com/pgreflect/pgreflect/testidp"
)

// A sign-in under the client's traceparent is one trace: the server span of /auth/v1/token and, as its child,
// the call to the identity provider; no token or key is in any span.
func TestSignInTraced(t *testing.T) {
	receiver := testenv.NewOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50") // milliseconds: spans arrive while the test waits
	s := stacktest.New(t, stacktest.Options{SignIn: true})
	idToken := s.IDP.MintIDToken(s.IDP.Claims(testidp.User{Sub: "555", Email: "traced@example.com", EmailVerified: true}), testidp.MintOptions{})
	const clientTrace = "0af7651916cd43dd8448eb211c80319c"
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/auth/v1/token?grant_type=id_token",
		strings.NewReader(fmt.Sprintf(`{"provider": "google", "id_token": %q}`, idToken)))
	req.Header.Set("apikey", s.Anon)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+clientTrace+"-b7ad6b7169203331-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var session struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &session) != nil || session.AccessToken == "" {
		t.Fatalf("sign-in: %d %s", resp.StatusCode, body)
	}
	idp, _ := url.Parse(s.IDP.URL())
	var signIn, call *tracepb.Span
	testenv.Eventually(t, 10*time.Second, func() string {
		for _, sp := range receiver.Spans() {
			if hex.EncodeToString(sp.TraceId) != clientTrace {
				continue
			}
			switch {
			case sp.Kind == tracepb.Span_SPAN_KIND_SERVER && sp.Name == "POST /auth/v1/token":
				signIn = sp
			case sp.Kind == tracepb.Span_SPAN_KIND_CLIENT && testenv.SpanAttrs(sp)["server.address"] == idp.Host:
				call = sp
			}
		}
		if signIn == nil || call == nil {
			return fmt.Sprintf("the sign-in's span (%v) and its call to the provider (%v) in trace %s", signIn != nil, call != nil, clientTrace)
		}
		return ""
	})
	if string(call.ParentSpanId) != string(signIn.SpanId) {
		t.Errorf("the provider call's parent is %x, not the sign-in's span %x", call.ParentSpanId, signIn.SpanId)
	}
	if a := testenv.SpanAttrs(signIn); a["http.response.status_code"] != "200" || a["pgreflect.request_id"] != resp.Header.Get("X-Request-Id") {
		t.Errorf("sign-in span attributes %v", a)
	}
	for _, sp := range receiver.Spans() {
		for k, v := range testenv.SpanAttrs(sp) {
			for _, secret := range []string{idToken, session.AccessToken, session.RefreshToken, s.Anon, s.Service} {
				if strings.Contains(v, secret) {
					t.Errorf("span %s attribute %s carries a token or key", sp.Name, k)
				}
			}
		}
	}
}
