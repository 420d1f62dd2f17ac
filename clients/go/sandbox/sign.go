package sandbox

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
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
// an RFC 3339 UTC timestamp with milliseconds and "sha256=<hex>"; any other, epoch milliseconds and bare hex.
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
		ts, prefix = now.UTC().Format("2006-01-02T15:04:05.000Z"), "sha256="
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

// WebhookTolerance is how far a delivery's real-clock timestamp may be from the receiver's clock, both ways,
// inclusive (the emulator's own verifier's default, docs/webhooks.md#verifying-deliveries-in-your-app).
const WebhookTolerance = 5 * time.Minute

// WebhookReason is why a delivery does not verify: one of the reason codes every kit answers
// (clients/signing-vectors.json, docs/webhooks.md#verifying-deliveries-in-your-app).
type WebhookReason string

// The reasons, in the order the checks run.
const (
	ReasonMissingHeader           WebhookReason = "MISSING_HEADER"             // X-Service-Api-Key, -Timestamp or -Signature absent or empty
	ReasonMalformedTimestamp      WebhookReason = "MALFORMED_TIMESTAMP"        // not epoch milliseconds (digits only)
	ReasonTimestampOutOfTolerance WebhookReason = "TIMESTAMP_OUT_OF_TOLERANCE" // further than the tolerance from now
	ReasonMalformedSignature      WebhookReason = "MALFORMED_SIGNATURE"        // not 64 hex digits
	ReasonSignatureMismatch       WebhookReason = "SIGNATURE_MISMATCH"         // another key, secret, path or body
)

// ErrInvalidWebhook is what every VerifyError matches with errors.Is.
var ErrInvalidWebhook = errors.New("the webhook delivery does not verify")

// VerifyError is why a delivery was refused; Reason is one of the WebhookReason codes.
type VerifyError struct {
	Reason WebhookReason
	Detail string
}

func (e *VerifyError) Error() string {
	return fmt.Sprintf("webhook refused: %s (%s)", e.Reason, e.Detail)
}

// Is makes errors.Is(err, ErrInvalidWebhook) true.
func (e *VerifyError) Is(target error) bool { return target == ErrInvalidWebhook }

// ExactTimestamp, as a WebhookVerifier's Tolerance, accepts only a timestamp equal to the receiver's clock to the
// millisecond: the zero value of Tolerance is the 5-minute default, so "no tolerance" needs a value of its own
// (any negative Tolerance means the same; docs/clients.md#go-forwarding).
const ExactTimestamp time.Duration = -1

// WebhookVerifier checks deliveries signed with one webhook key.
type WebhookVerifier struct {
	Key Key
	// Tolerance is how far the timestamp may be from Now, both ways, inclusive: 0 (the zero value) is
	// WebhookTolerance, 5 minutes; ExactTimestamp (or any negative value) accepts only the same millisecond.
	Tolerance time.Duration
	Now       func() time.Time // nil: time.Now (deliveries carry the real clock, even when a sandbox's is frozen)
}

// headerValue is a header as a Node receiver reads it (docs/clients.md#receivers-one-rule-set): a header sent
// twice is its values joined with ", " (so it no longer parses), the spaces and tabs around it dropped.
func headerValue(header http.Header, name string) string {
	return strings.Trim(strings.Join(header.Values(name), ", "), " \t")
}

// Verify checks a delivery as docs/webhooks.md#what-a-delivery-looks-like says: the three headers are there (a
// header sent twice is its values joined with ", ", as Node reads it, and so malformed),
// the timestamp is epoch milliseconds within the tolerance of now, the signature is the hex HMAC-SHA256 (keyed
// with the webhook secret; either case) of apiKey + timestamp + "POST" + path (its query, if any, dropped) + the
// raw body, with the webhook key's apiKey. The comparison is constant time. nil, or a *VerifyError.
func (v WebhookVerifier) Verify(header http.Header, path string, rawBody []byte) error {
	apiKey, timestamp, signature := headerValue(header, "X-Service-Api-Key"), headerValue(header, "X-Service-Timestamp"), headerValue(header, "X-Service-Signature")
	if apiKey == "" || timestamp == "" || signature == "" {
		return &VerifyError{ReasonMissingHeader, "X-Service-Api-Key, X-Service-Timestamp and X-Service-Signature are required"}
	}
	if len(timestamp) > 16 || strings.Trim(timestamp, "0123456789") != "" {
		return &VerifyError{ReasonMalformedTimestamp, fmt.Sprintf("timestamp %q is not epoch milliseconds", timestamp)}
	}
	sent, _ := strconv.ParseInt(timestamp, 10, 64)
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	tolerance := v.Tolerance
	if tolerance == 0 {
		tolerance = WebhookTolerance
	} else if tolerance < 0 {
		tolerance = 0 // ExactTimestamp
	}
	if d := now().UnixMilli() - sent; d > tolerance.Milliseconds() || -d > tolerance.Milliseconds() {
		return &VerifyError{ReasonTimestampOutOfTolerance, fmt.Sprintf("sent %d ms from now; the tolerance is %d ms", d, tolerance.Milliseconds())}
	}
	given, err := hex.DecodeString(signature)
	if err != nil || len(given) != sha256.Size {
		return &VerifyError{ReasonMalformedSignature, "the signature is not 64 hex digits"}
	}
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	mac := hmac.New(sha256.New, []byte(v.Key.Secret))
	io.WriteString(mac, apiKey+timestamp+"POST"+path)
	mac.Write(rawBody)
	if !hmac.Equal(mac.Sum(nil), given) || (v.Key.APIKey != "" && apiKey != v.Key.APIKey) {
		return &VerifyError{ReasonSignatureMismatch, "not signed with this webhook key over this path and body"}
	}
	return nil
}

// VerifyRequest reads an incoming delivery's body and verifies it against the request's path as sent: the
// emulator signs the path it posts to, percent-encoding and all (/hooks/caf%C3%A9), so the decoded URL.Path
// would not match (docs/clients.md#go-forwarding). It returns the raw body (parse it only after it verified) and
// nil, or a *VerifyError (or the read's error).
func (v WebhookVerifier) VerifyRequest(req *http.Request) ([]byte, error) {
	raw, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	return raw, v.Verify(req.Header, pathAsSent(req), raw)
}

// pathAsSent is the path of the request line as it came (RequestURI, which a handler behind http.StripPrefix
// still has whole), or URL.EscapedPath() for a request that has none (one built in a test, or a proxy's
// absolute-form target).
func pathAsSent(req *http.Request) string {
	if strings.HasPrefix(req.RequestURI, "/") {
		path := req.RequestURI
		if i := strings.IndexByte(path, '?'); i >= 0 {
			path = path[:i]
		}
		return path
	}
	return req.URL.EscapedPath()
}

// VerifyWebhook is WebhookVerifier{Key: key}.Verify at the instant now: nil, or a *VerifyError whose Reason
// says why not.
func VerifyWebhook(key Key, header http.Header, path string, rawBody []byte, now time.Time) error {
	return WebhookVerifier{Key: key, Now: func() time.Time { return now }}.Verify(header, path, rawBody)
}

// ValidWebhook is VerifyWebhook as a bool.
func ValidWebhook(key Key, header http.Header, path string, rawBody []byte, now time.Time) bool {
	return VerifyWebhook(key, header, path, rawBody, now) == nil
}
