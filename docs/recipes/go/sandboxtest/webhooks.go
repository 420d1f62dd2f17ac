package sandboxtest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// WebhookPath is the path of the receiver's URL: the signature covers it.
const WebhookPath = "/webhooks"

// Tolerance is how far a delivery's real-clock timestamp may be from ours (the emulator's own verifier uses
// 5 minutes).
const Tolerance = 5 * time.Minute

// Webhook is one verified delivery.
type Webhook struct {
	EventType string // X-Service-Event-Type
	RawBody   []byte
}

// Get reads a field of the body, e.g. Get("transaction", "status").
func (w Webhook) Get(path ...any) any { return get(decode(w.RawBody), path...) }

// Str is Get for a string field.
func (w Webhook) Str(path ...any) string { s, _ := w.Get(path...).(string); return s }

// Receiver is a webhook endpoint for one test, reached through `listen` or given as the session's webhookUrl (net/http/httptest on a free loopback port) that checks each
// delivery's signature (docs/webhooks.md#what-a-delivery-looks-like) and keeps the good ones. A delivery that
// fails the check is answered 401, as your application should, and counted in Rejected.
type Receiver struct {
	server   *httptest.Server
	mu       sync.Mutex
	key      *Key
	received []Webhook
	rejected []string
}

func newReceiver() *Receiver {
	r := &Receiver{}
	mux := http.NewServeMux()
	mux.HandleFunc(WebhookPath, r.handle)
	r.server = httptest.NewServer(mux)
	return r
}

// URL is the receiver's URL, e.g. http://127.0.0.1:38211/webhooks: listen's --forward-to, or the webhookUrl.
func (r *Receiver) URL() string { return r.server.URL + WebhookPath }

// Close stops the receiver.
func (r *Receiver) Close() { r.server.Close() }

// expect sets the session's webhook key: known only once the session exists, which is after the receiver started.
func (r *Receiver) expect(k Key) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.key = &k
}

// VerifyWebhook checks a delivery as docs/webhooks.md describes: lower-case hex HMAC-SHA256, keyed with the
// webhook secret, of apiKey + timestamp + "POST" + path of the webhook URL (no query) + raw body, with the
// timestamp (real wall clock, even when the session's clock is frozen) within Tolerance of now.
func VerifyWebhook(key Key, apiKey, timestamp, path string, rawBody []byte, signature string, now time.Time) bool {
	if apiKey != key.APIKey {
		return false
	}
	sent, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return false
	}
	if d := now.Sub(time.UnixMilli(sent)); d > Tolerance || d < -Tolerance {
		return false
	}
	mac := hmac.New(sha256.New, []byte(key.Secret))
	io.WriteString(mac, apiKey+timestamp+"POST"+path)
	mac.Write(rawBody)
	// hmac.Equal is constant time: the comparison does not tell an attacker how much of a guess was right.
	return hmac.Equal([]byte(hex.EncodeToString(mac.Sum(nil))), []byte(signature))
}

func (r *Receiver) handle(w http.ResponseWriter, req *http.Request) {
	raw, err := io.ReadAll(req.Body) // the raw bytes: the signature covers them before any JSON parsing
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.key == nil { // a delivery before the session answered: not possible in practice; the emulator retries
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	h := req.Header
	ok := req.Method == http.MethodPost && VerifyWebhook(*r.key, h.Get("X-Service-Api-Key"), h.Get("X-Service-Timestamp"),
		WebhookPath, raw, h.Get("X-Service-Signature"), time.Now())
	if ok {
		r.received = append(r.received, Webhook{EventType: h.Get("X-Service-Event-Type"), RawBody: raw})
		w.WriteHeader(http.StatusNoContent)
	} else {
		r.rejected = append(r.rejected, req.Method+" "+h.Get("X-Service-Signature"))
		w.WriteHeader(http.StatusUnauthorized)
	}
}

// Received is the verified deliveries so far, in arrival order.
func (r *Receiver) Received() []Webhook {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Webhook(nil), r.received...)
}

// Rejected is the deliveries refused for a bad signature, key or timestamp.
func (r *Receiver) Rejected() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.rejected...)
}

// Find is the first verified delivery matching match so far. It does not wait: settle the session first.
func (r *Receiver) Find(match func(Webhook) bool) (Webhook, bool) {
	for _, w := range r.Received() {
		if match(w) {
			return w, true
		}
	}
	return Webhook{}, false
}

func (r *Receiver) summary() string {
	var parts []string
	for _, w := range r.Received() {
		parts = append(parts, fmt.Sprintf("%s %s %s", w.EventType, w.Str("transaction", "id"), w.Str("transaction", "status")))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
