package sandbox

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The shared signing vectors (clients/signing-vectors.json, docs/clients.md#test-vectors), found relative to
// this file in a checkout: every kit signs and verifies them alike.
type vectors struct {
	Requests []struct {
		Name string `json:"name"`
		Key  struct {
			APIKey      string `json:"apiKey"`
			Secret      string `json:"secret"`
			ProgrammeID string `json:"programmeId"`
		} `json:"key"`
		Method     string            `json:"method"`
		Target     string            `json:"target"`
		Body       *string           `json:"body"`
		BodyBase64 *string           `json:"bodyBase64"`
		NowMs      int64             `json:"nowMs"`
		Headers    map[string]string `json:"headers"`
	} `json:"requests"`
	ControlPlane struct {
		AdminToken string            `json:"adminToken"`
		Headers    map[string]string `json:"headers"`
	} `json:"controlPlane"`
	WebhookReasons []WebhookReason `json:"webhookReasons"`
	Webhooks       []struct {
		Name        string            `json:"name"`
		Secret      string            `json:"secret"`
		Path        string            `json:"path"`
		Body        string            `json:"body"`
		Headers     map[string]string `json:"headers"`
		NowMs       int64             `json:"nowMs"`
		ToleranceMs int64             `json:"toleranceMs"`
		Valid       bool              `json:"valid"`
		Reason      *WebhookReason    `json:"reason"`
	} `json:"webhooks"`
}

func loadVectors(t *testing.T) vectors {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "..", "signing-vectors.json"))
	if err != nil {
		t.Skipf("the signing vectors are in a checkout of service-sandbox only: %v", err)
	}
	var v vectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSignHeadersMatchesEveryRequestVector(t *testing.T) {
	v := loadVectors(t)
	if len(v.Requests) == 0 {
		t.Fatal("no request vectors")
	}
	for _, c := range v.Requests {
		body := []byte(nil)
		if c.Body != nil {
			body = []byte(*c.Body)
		}
		if c.BodyBase64 != nil {
			decoded, err := base64.StdEncoding.DecodeString(*c.BodyBase64)
			if err != nil {
				t.Fatal(err)
			}
			body = decoded
		}
		got := SignHeaders(Key{c.Key.APIKey, c.Key.Secret}, c.Key.ProgrammeID, c.Method, c.Target, body, time.UnixMilli(c.NowMs))
		for name, want := range c.Headers {
			if got.Get(name) != want {
				t.Errorf("%s: %s is %q, want %q", c.Name, name, got.Get(name), want)
			}
		}
	}
}

func TestVerifyWebhookAnswersEveryWebhookVectorsReason(t *testing.T) {
	v := loadVectors(t)
	want := []WebhookReason{ReasonMissingHeader, ReasonMalformedTimestamp, ReasonTimestampOutOfTolerance, ReasonMalformedSignature, ReasonSignatureMismatch}
	if len(v.WebhookReasons) != len(want) {
		t.Fatalf("the vectors' reasons %v, the kit's %v", v.WebhookReasons, want)
	}
	for i := range want {
		if v.WebhookReasons[i] != want[i] {
			t.Errorf("reason %d: the vectors say %s, the kit %s", i, v.WebhookReasons[i], want[i])
		}
	}
	for _, c := range v.Webhooks {
		header := http.Header{}
		for name, value := range c.Headers {
			header.Set(name, value)
		}
		verifier := WebhookVerifier{
			Key:       Key{APIKey: "wk_sandbox", Secret: c.Secret},
			Tolerance: time.Duration(c.ToleranceMs) * time.Millisecond,
			Now:       func() time.Time { return time.UnixMilli(c.NowMs) },
		}
		err := verifier.Verify(header, c.Path, []byte(c.Body))
		if c.ToleranceMs == WebhookTolerance.Milliseconds() && ValidWebhook(verifier.Key, header, c.Path, []byte(c.Body), time.UnixMilli(c.NowMs)) != c.Valid {
			t.Errorf("%s: ValidWebhook is not %v", c.Name, c.Valid)
		}
		if c.Valid {
			if err != nil {
				t.Errorf("%s: refused: %v", c.Name, err)
			}
			continue
		}
		var refused *VerifyError
		if !errors.As(err, &refused) || c.Reason == nil || refused.Reason != *c.Reason {
			t.Errorf("%s: got %v, want reason %v", c.Name, err, *c.Reason)
		}
		if !errors.Is(err, ErrInvalidWebhook) {
			t.Errorf("%s: %v does not match ErrInvalidWebhook", c.Name, err)
		}
	}
}

// A webhook signed with the right secret but carrying another key's apiKey is not this key's delivery.
func TestVerifyWebhookRefusesAnotherAPIKey(t *testing.T) {
	at := time.UnixMilli(1772366400123)
	ts := "1772366400123"
	h := http.Header{}
	h.Set("X-Service-Api-Key", "wk_other")
	h.Set("X-Service-Timestamp", ts)
	h.Set("X-Service-Signature", Sign("whsec_sandbox_secret", "wk_other"+ts+"POST/webhooks{}"))
	var refused *VerifyError
	if err := VerifyWebhook(Key{"wk_sandbox", "whsec_sandbox_secret"}, h, "/webhooks", []byte("{}"), at); !errors.As(err, &refused) || refused.Reason != ReasonSignatureMismatch {
		t.Errorf("got %v", err)
	}
}

func TestControlPlaneRequestsCarryTheAdminTokenAndNoSignature(t *testing.T) {
	v := loadVectors(t)
	c := NewClient("http://127.0.0.1:1", DefaultCredentials())
	c.AdminToken = v.ControlPlane.AdminToken
	req, _ := http.NewRequest("GET", c.BaseURL+"/_emulator/clock", nil)
	c.admin(req)
	for name, want := range v.ControlPlane.Headers {
		if req.Header.Get(name) != want {
			t.Errorf("%s is %q, want %q", name, req.Header.Get(name), want)
		}
	}
	if req.Header.Get("X-Service-Signature") != "" || req.Header.Get("X-Admin-Token") != "" {
		t.Errorf("headers %v", req.Header)
	}
}

// VerifyRequest checks the path as it was sent: the emulator signs /hooks/caf%C3%A9, not the decoded
// /hooks/café of URL.Path (docs/clients.md#go-forwarding). Over a real server, with the request line as sent.
func TestVerifyRequestChecksThePathAsSent(t *testing.T) {
	key := Key{"wk_sandbox", "whsec_sandbox_secret"}
	verdicts := make(chan error, 1)
	app := httptest.NewServer(http.StripPrefix("/app", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, err := WebhookVerifier{Key: key}.VerifyRequest(req)
		verdicts <- err
	})))
	defer app.Close()
	for _, path := range []string{"/app/hooks/caf%C3%A9", "/app/hooks/a%20b", "/app/hooks/%61", "/app/hooks/a%2Fb", "/app/hooks/plain"} {
		ts := fmt.Sprint(time.Now().UnixMilli())
		body := `{"metadata":{"eventId":"evt_1"}}`
		req, err := http.NewRequest("POST", app.URL+path+"?token=x", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if got := req.URL.RequestURI(); got != path+"?token=x" {
			t.Fatalf("the client would send %s, not %s", got, path)
		}
		req.Header.Set("X-Service-Api-Key", key.APIKey)
		req.Header.Set("X-Service-Timestamp", ts)
		req.Header.Set("X-Service-Signature", Sign(key.Secret, key.APIKey+ts+"POST"+path+body))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if err := <-verdicts; err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// Tolerance's zero value is the 5-minute default; ExactTimestamp accepts only the same millisecond.
func TestWebhookVerifierTolerance(t *testing.T) {
	key := Key{"wk_sandbox", "whsec_sandbox_secret"}
	now := time.UnixMilli(1772366400123)
	signedAt := func(ms int64) http.Header {
		ts := fmt.Sprint(ms)
		h := http.Header{}
		h.Set("X-Service-Api-Key", key.APIKey)
		h.Set("X-Service-Timestamp", ts)
		h.Set("X-Service-Signature", Sign(key.Secret, key.APIKey+ts+"POST/webhooks{}"))
		return h
	}
	for _, c := range []struct {
		tolerance time.Duration
		offsetMs  int64
		valid     bool
	}{
		{0, 300_000, true}, {0, -300_000, true}, {0, 300_001, false},
		{ExactTimestamp, 0, true}, {ExactTimestamp, 1, false}, {ExactTimestamp, -1, false},
		{-time.Hour, 0, true}, {-time.Hour, 1, false},
		{time.Second, 1000, true}, {time.Second, -1001, false},
	} {
		err := WebhookVerifier{Key: key, Tolerance: c.tolerance, Now: func() time.Time { return now }}.Verify(signedAt(now.UnixMilli()+c.offsetMs), "/webhooks", []byte("{}"))
		var refused *VerifyError
		if c.valid && err != nil || !c.valid && (!errors.As(err, &refused) || refused.Reason != ReasonTimestampOutOfTolerance) {
			t.Errorf("tolerance %v, %+d ms: %v", c.tolerance, c.offsetMs, err)
		}
	}
}

// A header sent twice is its values joined with ", " (as Node reads it), so it is malformed; spaces and tabs
// around a value are dropped (docs/clients.md#receivers-one-rule-set).
func TestVerifyJoinsARepeatedHeaderAndTrimsValues(t *testing.T) {
	key := Key{"wk_sandbox", "whsec_sandbox_secret"}
	now := time.UnixMilli(1772366400123)
	ts := fmt.Sprint(now.UnixMilli())
	sig := Sign(key.Secret, key.APIKey+ts+"POST/webhooks{}")
	for _, c := range []struct {
		header http.Header
		reason WebhookReason
	}{
		{http.Header{"X-Service-Api-Key": {key.APIKey}, "X-Service-Timestamp": {ts, ts}, "X-Service-Signature": {sig}}, ReasonMalformedTimestamp},
		{http.Header{"X-Service-Api-Key": {key.APIKey}, "X-Service-Timestamp": {ts}, "X-Service-Signature": {sig, sig}}, ReasonMalformedSignature},
		{http.Header{"X-Service-Api-Key": {" " + key.APIKey + "\t"}, "X-Service-Timestamp": {"\t" + ts + " "}, "X-Service-Signature": {" " + sig}}, ""},
	} {
		err := VerifyWebhook(key, c.header, "/webhooks", []byte("{}"), now)
		var refused *VerifyError
		if c.reason == "" && err != nil || c.reason != "" && (!errors.As(err, &refused) || refused.Reason != c.reason) {
			t.Errorf("%v: %v, want %q", c.header, err, c.reason)
		}
	}
}
