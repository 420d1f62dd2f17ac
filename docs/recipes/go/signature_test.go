package recipe_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"example.com/sandbox-recipe/sandboxtest"
)

func headers(sb *sandboxtest.Sandbox, timestamp, signature string) http.Header {
	h := http.Header{}
	h.Set("X-Service-Api-Key", sb.Credentials.Single.APIKey)
	h.Set("X-Service-Timestamp", timestamp)
	h.Set("X-Service-Program-Id", sb.Credentials.ProgrammeID)
	h.Set("X-Service-Signature", signature)
	return h
}

func now() string { return strconv.FormatInt(time.Now().UnixMilli(), 10) }

// asSent is the request target of path under the session: "/_sessions/ses_.../v1/...".
func asSent(t *testing.T, sb *sandboxtest.Sandbox, path string) string {
	u, err := url.Parse(sb.BaseURL + path)
	if err != nil {
		t.Fatal(err)
	}
	return sandboxtest.Target(u)
}

func TestABadSignatureIsRefusedWithTheErrorBody(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.New(t)

	res := sb.Send("GET", "/v1/accounts", "", headers(sb, now(), strings.Repeat("0", 64)))

	if res.Status != 401 || res.Str("errorCode") != "UNAUTHORIZED" || !strings.HasPrefix(res.Str("message"), "Signature mismatch") {
		t.Fatal(res)
	}
}

func TestTheSignatureCoversThePathAsSentWithTheSessionPrefix(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.New(t)
	key := sb.Credentials.Single.Key
	ts := now()

	// Signed over "/v1/accounts" alone, as for a server without the session prefix: refused.
	withoutPrefix := sandboxtest.Sign(key.Secret, key.APIKey+ts+"GET"+"/v1/accounts")
	if res := sb.Send("GET", "/v1/accounts", "", headers(sb, ts, withoutPrefix)); res.Status != 401 {
		t.Errorf("signed without the prefix: %v", res)
	}
	// Signed over the target as sent: accepted.
	withPrefix := sandboxtest.Sign(key.Secret, key.APIKey+ts+"GET"+asSent(t, sb, "/v1/accounts"))
	if res := sb.Send("GET", "/v1/accounts", "", headers(sb, ts, withPrefix)); res.Status != 200 {
		t.Errorf("signed over the target as sent: %v", res)
	}
}

func TestAStaleTimestampIsRefused(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.New(t)
	key := sb.Credentials.Single.Key
	ts := strconv.FormatInt(time.Now().Add(-2*time.Minute).UnixMilli(), 10) // docs/authentication.md: within 60 s

	res := sb.Send("GET", "/v1/accounts", "", headers(sb, ts, sandboxtest.Sign(key.Secret, key.APIKey+ts+"GET"+asSent(t, sb, "/v1/accounts"))))

	if res.Status != 401 || res.Str("errorCode") != "UNAUTHORIZED" {
		t.Fatal(res)
	}
}

func TestTheReceiverRefusesAForgedWebhook(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.NewWith(t, sandboxtest.Options{WebhookURL: true})
	body := `{"transaction":{"id":"txn_forged","status":"COMPLETED"},"metadata":{}}`
	ts := now()
	// Right key, wrong secret.
	forged := sandboxtest.Sign("not-the-secret", sb.Credentials.Webhook.APIKey+ts+"POST"+sandboxtest.WebhookPath+body)
	req, _ := http.NewRequest("POST", sb.Webhooks.URL(), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Service-Api-Key", sb.Credentials.Webhook.APIKey)
	req.Header.Set("X-Service-Timestamp", ts)
	req.Header.Set("X-Service-Signature", forged)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()

	if res.StatusCode != 401 {
		t.Errorf("forged delivery answered %d", res.StatusCode)
	}
	if len(sb.Webhooks.Rejected()) != 1 || len(sb.Webhooks.Received()) != 0 {
		t.Errorf("rejected %v, received %d", sb.Webhooks.Rejected(), len(sb.Webhooks.Received()))
	}
}
