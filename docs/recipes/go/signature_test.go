package recipe_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"service-sandbox.dev/go/sandbox"
	"service-sandbox.dev/go/sandboxtest"
)

// headers signs GET /v1/accounts over target with the session's SINGLE_USER key, at the given instant.
func headers(sb *sandboxtest.Sandbox, target string, at time.Time) []sandbox.Option {
	opts := []sandbox.Option{sandbox.Unsigned()}
	for name, values := range sandbox.SignHeaders(sb.Credentials.Single.Key, sb.Credentials.ProgrammeID, "GET", target, nil, at) {
		opts = append(opts, sandbox.WithHeader(name, values[0]))
	}
	return opts
}

func TestTheSignatureCoversThePathAsSentWithTheSessionPrefix(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.New(t)

	// Signed over "/v1/accounts" alone, as for a server without the session prefix: refused with the error body.
	res := sb.Do("GET", "/v1/accounts", nil, headers(sb, "/v1/accounts", time.Now())...)
	err, _ := res.Err().(*sandbox.APIError)
	if err == nil || err.Status != 401 || *err.Body.ErrorCode != "UNAUTHORIZED" || !strings.HasPrefix(err.Body.Message, "Signature mismatch") {
		t.Errorf("signed without the prefix: %v", res)
	}
	// Over the target as sent (what the kit signs): accepted.
	if res := sb.Do("GET", "/v1/accounts", nil, headers(sb, sb.SessionPath()+"/v1/accounts", time.Now())...); res.Status != 200 {
		t.Errorf("signed over the target as sent: %v", res)
	}
	// docs/authentication.md: a timestamp more than 60 s away is refused.
	if res := sb.Do("GET", "/v1/accounts", nil, headers(sb, sb.SessionPath()+"/v1/accounts", time.Now().Add(-2*time.Minute))...); res.Status != 401 {
		t.Errorf("a stale timestamp: %v", res)
	}
}

func TestTheReceiverRefusesAForgedWebhook(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.NewWith(t, sandboxtest.Options{WebhookURL: true})
	body := `{"transaction":{"id":"txn_forged","status":"COMPLETED"},"metadata":{"eventId":"evt_forged"}}`
	ts := strconv.FormatInt(time.Now().UnixMilli(), 10)
	req, _ := http.NewRequest("POST", sb.Webhooks.URL(), strings.NewReader(body))
	req.Header.Set("X-Service-Api-Key", sb.Credentials.Webhook.APIKey)
	req.Header.Set("X-Service-Timestamp", ts)
	req.Header.Set("X-Service-Signature", sandbox.Sign("not-the-secret", sb.Credentials.Webhook.APIKey+ts+"POST/webhooks"+body))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 401 || len(sb.Webhooks.Rejected()) != 1 || len(sb.Webhooks.Events()) != 0 {
		t.Errorf("forged delivery answered %d; rejected %d, kept %d", res.StatusCode, len(sb.Webhooks.Rejected()), len(sb.Webhooks.Events()))
	}
}
