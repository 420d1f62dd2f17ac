package sandbox

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
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
