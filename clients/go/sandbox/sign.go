package sandbox

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Key is an API key and its secret.
type Key struct {
	APIKey string `json:"apiKey"`
	Secret string `json:"secret"`
}

// Credentials are the keys of a sandbox's fixtures (docs/authentication.md): the SINGLE_USER key bound to its
// user, the MULTI_USER key (programme-level calls, or acting for a user with AsUser), and the webhook key.
type Credentials struct {
	ProgrammeID string `json:"programmeId"`
	Single      struct {
		Key
		UserID string `json:"userId"`
	} `json:"single"`
	Multi   Key `json:"multi"`
	Webhook Key `json:"webhook"`
}

// DefaultCredentials are the keys of the default fixtures (the root sandbox of a server started without
// --fixtures; a session's are in its answer).
func DefaultCredentials() Credentials {
	var c Credentials
	c.ProgrammeID = "prg_sandbox"
	c.Single.Key = Key{"pk_sandbox_single", "sk_sandbox_single_secret"}
	c.Single.UserID = "usr_acme"
	c.Multi = Key{"pk_sandbox_multi", "sk_sandbox_multi_secret"}
	c.Webhook = Key{"wk_sandbox", "whsec_sandbox_secret"}
	return c
}

// PayoutPrefix is the path of the payout endpoint: requests under it are signed with the payout variant.
const PayoutPrefix = "/v1/payout-origination/"

// Sign is the lower-case hex HMAC-SHA256 of message keyed with secret.
func Sign(secret, message string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	io.WriteString(mac, message)
	return hex.EncodeToString(mac.Sum(nil))
}

func signBytes(secret, head string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	io.WriteString(mac, head)
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// SignHeaders are the headers of a signed request (docs/authentication.md#hmac-headers-server-to-server):
// X-Service-Api-Key, -Timestamp, -Program-Id and -Signature over apiKey + timestamp + METHOD + target + body.
// target is the request target as sent (url.URL.RequestURI(): a session's /_sessions/ses_... prefix and the
// ?query included). A target under /v1/payout-origination/ gets the payout variant (docs/payouts.md#signing-the-payout-variant):
// an RFC 3339 UTC timestamp and "sha256=<hex>"; any other, epoch milliseconds and bare hex.
func SignHeaders(key Key, programmeID, method, target string, body []byte, now time.Time) http.Header {
	path := target
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	if strings.HasPrefix(path, "/_sessions/") { // a session's prefix (docs/sessions.md#addresses-and-signing)
		rest := strings.TrimPrefix(path, "/_sessions/")
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			path = rest[i:]
		}
	}
	payout := strings.HasPrefix(path, PayoutPrefix)
	var ts, prefix string
	if payout {
		ts, prefix = now.UTC().Format("2006-01-02T15:04:05Z"), "sha256="
	} else {
		ts = strconv.FormatInt(now.UnixMilli(), 10)
	}
	h := http.Header{}
	h.Set("X-Service-Api-Key", key.APIKey)
	h.Set("X-Service-Timestamp", ts)
	h.Set("X-Service-Program-Id", programmeID)
	h.Set("X-Service-Signature", prefix+signBytes(key.Secret, key.APIKey+ts+strings.ToUpper(method)+target, body))
	return h
}

// WebhookTolerance is how far a delivery's real-clock timestamp may be from the receiver's clock (the emulator's
// own verifier's default, docs/webhooks.md#verifying-deliveries-in-your-app).
const WebhookTolerance = 5 * time.Minute

// VerifyWebhook checks a delivery as docs/webhooks.md#what-a-delivery-looks-like says: the key is the webhook
// key, the signature is the lower-case hex HMAC-SHA256 (keyed with the webhook secret) of apiKey + timestamp +
// "POST" + path of the webhook URL (no query) + the raw body, and the timestamp (real wall clock, even when the
// sandbox's clock is frozen) is within WebhookTolerance of now. The comparison is constant time.
func VerifyWebhook(key Key, header http.Header, path string, rawBody []byte, now time.Time) bool {
	apiKey, timestamp := header.Get("X-Service-Api-Key"), header.Get("X-Service-Timestamp")
	if apiKey != key.APIKey {
		return false
	}
	sent, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return false
	}
	if d := now.Sub(time.UnixMilli(sent)); d > WebhookTolerance || d < -WebhookTolerance {
		return false
	}
	want := signBytes(key.Secret, apiKey+timestamp+"POST"+path, rawBody)
	return hmac.Equal([]byte(want), []byte(header.Get("X-Service-Signature")))
}
