package sandbox

import (
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"
)

var at = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// docs/authentication.md#hmac-headers-server-to-server and docs/payouts.md#signing-the-payout-variant: one
// canonical string, two spellings of the timestamp and the signature, chosen by the target.
func TestSignHeadersPicksTheVariantByTheTarget(t *testing.T) {
	key := Key{"pk_sandbox_single", "sk_sandbox_single_secret"}
	body := []byte(`{"a":1}`)

	h := SignHeaders(key, "prg_sandbox", "get", "/_sessions/ses_1/v1/accounts?pageSize=2", nil, at)
	if h.Get("X-Service-Timestamp") != "1772366400000" ||
		h.Get("X-Service-Signature") != Sign(key.Secret, "pk_sandbox_single1772366400000GET/_sessions/ses_1/v1/accounts?pageSize=2") {
		t.Errorf("HMAC mode: %v", h)
	}
	for _, target := range []string{"/v1/payout-origination/json", "/_sessions/ses_1/v1/payout-origination/pacs008"} {
		h = SignHeaders(key, "prg_sandbox", "POST", target, body, at)
		if h.Get("X-Service-Timestamp") != "2026-03-01T12:00:00Z" ||
			h.Get("X-Service-Signature") != "sha256="+Sign(key.Secret, "pk_sandbox_single2026-03-01T12:00:00ZPOST"+target+`{"a":1}`) {
			t.Errorf("payout variant for %s: %v", target, h)
		}
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(Sign("s", "m")) {
		t.Error("Sign is not lower-case hex SHA-256")
	}
}

func TestVerifyWebhook(t *testing.T) {
	key := Key{"wk_sandbox", "whsec_sandbox_secret"}
	body := []byte(`{"transaction":{},"metadata":{"eventId":"evt_1"}}`)
	delivery := func(secret string, sent time.Time) http.Header {
		ts := strconv.FormatInt(sent.UnixMilli(), 10)
		h := http.Header{}
		h.Set("X-Service-Api-Key", key.APIKey)
		h.Set("X-Service-Timestamp", ts)
		h.Set("X-Service-Signature", Sign(secret, key.APIKey+ts+"POST/webhooks"+string(body)))
		return h
	}
	if !VerifyWebhook(key, delivery(key.Secret, at), "/webhooks", body, at.Add(time.Minute)) {
		t.Error("a good delivery is refused")
	}
	if VerifyWebhook(key, delivery("another", at), "/webhooks", body, at) {
		t.Error("a delivery signed with another secret passes")
	}
	if VerifyWebhook(key, delivery(key.Secret, at), "/hooks", body, at) {
		t.Error("a delivery signed for another path passes")
	}
	if VerifyWebhook(key, delivery(key.Secret, at.Add(-10*time.Minute)), "/webhooks", body, at) {
		t.Error("a stale delivery passes")
	}
	if VerifyWebhook(key, delivery(key.Secret, at), "/webhooks", append([]byte(" "), body...), at) {
		t.Error("a changed body passes")
	}
}
