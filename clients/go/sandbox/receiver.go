package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// ReceiverPath is the path of a Receiver's URL: deliveries are signed for it.
const ReceiverPath = "/webhooks"

// Event is one webhook event as a receiver kept it: the first verified copy of its metadata.eventId.
type Event struct {
	TransactionWebhookEvent
	EventType string // X-Service-Event-Type
	Raw       []byte // the body byte for byte
}

// Rejection is a delivery the receiver refused (401), with its reason code (docs/clients.md#receivers-one-rule-set).
type Rejection struct {
	EventType string
	// Reason is ReasonMethod, ReasonMissingHeader, ReasonUnknownKey, a signature check's reason
	// (ReasonMalformedTimestamp ... ReasonSignatureMismatch) or ReasonNotJSON.
	Reason WebhookReason
	Detail string // what exactly was wrong
	Header http.Header
	Raw    []byte // the body as received
}

// The receiver's own reasons, besides the signature checks' (docs/clients.md#receivers-one-rule-set).
const (
	ReasonMethod     WebhookReason = "METHOD"      // not a POST
	ReasonUnknownKey WebhookReason = "UNKNOWN_KEY" // X-Service-Api-Key is not the expected webhook key, or none is expected yet
	ReasonNotJSON    WebhookReason = "NOT_JSON"    // genuine, but not a JSON object with a non-empty string metadata.eventId
)

// ReceiverIdleTimeout is how long a started receiver waits for the next bytes of a request (its headers or
// its body) before it closes the connection (docs/clients.md#receivers-one-rule-set).
const ReceiverIdleTimeout = 10 * time.Second

// Receiver is a webhook endpoint that does what an application's should (docs/webhooks.md#verifying-deliveries-in-your-app),
// following the rules every kit's receiver shares, in their order (docs/clients.md#receivers-one-rule-set): a
// method other than POST, a missing header, another key, a signature that does not verify, and a body that is
// not an event are each refused with 401 and recorded with their reason; a genuine delivery is answered 200 and
// deduplicated on metadata.eventId (delivery is at least once: a repeat is acknowledged and counted, nothing
// more). Give its URL to a session as webhookUrl, or forward a session's webhooks to it (ForwardWebhooks). Use
// it as an http.Handler in a server of your own, or start one on a loopback port with StartReceiver.
type Receiver struct {
	mu         sync.Mutex
	key        *Key
	path       string
	events     []Event
	seen       map[string]bool
	duplicates []Event
	rejected   []Rejection
	server     *http.Server
	url        string
	now        func() time.Time
	idle       time.Duration // StartReceiver's: each read of a request's body waits at most this long
}

// NewReceiver is a receiver handler for deliveries signed for path (the path of its URL). Until Expect gives
// it the webhook key it refuses every delivery with UNKNOWN_KEY (the emulator retries).
func NewReceiver(path string) *Receiver {
	return &Receiver{path: path, seen: map[string]bool{}, now: time.Now}
}

// StartReceiver starts a receiver on a free loopback port, at ReceiverPath; Close stops it. A connection that
// sends nothing for ReceiverIdleTimeout is closed.
func StartReceiver(key *Key) (*Receiver, error) { return startReceiver(key, ReceiverIdleTimeout) }

type connKey struct{}

func startReceiver(key *Key, idle time.Duration) (*Receiver, error) {
	r := NewReceiver(ReceiverPath)
	r.key, r.idle = key, idle
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(ReceiverPath, r)
	r.server = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: idle, // headers; the body's reads are bounded in ServeHTTP
		IdleTimeout:       idle, // between requests on a kept-alive connection
		ConnContext:       func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) },
	}
	r.url = "http://" + l.Addr().String() + ReceiverPath
	go r.server.Serve(l)
	return r, nil
}

// idleReader gives each read of a request's body idle long to bring something: a stalled sender is cut off
// rather than holding the connection (net/http's ReadTimeout would bound the whole body instead).
type idleReader struct {
	body io.Reader
	conn net.Conn
	idle time.Duration
}

func (r idleReader) Read(p []byte) (int, error) {
	r.conn.SetReadDeadline(time.Now().Add(r.idle))
	return r.body.Read(p)
}

// URL is where a started receiver listens, e.g. http://127.0.0.1:38211/webhooks.
func (r *Receiver) URL() string { return r.url }

// Close stops a started receiver.
func (r *Receiver) Close() error {
	if r.server == nil {
		return nil
	}
	return r.server.Close()
}

// Expect sets the webhook key deliveries must be signed with (a session's Credentials.Webhook).
func (r *Receiver) Expect(k Key) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.key = &k
}

// ServeHTTP handles one delivery by the rules of docs/clients.md#receivers-one-rule-set, in their order. Framing
// (chunked bodies, a Content-Length that is not a number or negative: 400) and the trimming of header values are
// net/http's; a header sent twice is joined with ", " as Node joins it (headerValue).
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var body io.Reader = req.Body
	if conn, ok := req.Context().Value(connKey{}).(net.Conn); ok && r.idle > 0 {
		body = idleReader{req.Body, conn, r.idle}
	}
	raw, err := io.ReadAll(body) // the raw bytes: the signature covers them, before any JSON parsing
	if err != nil {
		var timeout net.Error
		if errors.As(err, &timeout) && timeout.Timeout() {
			panic(http.ErrAbortHandler) // nothing came for the idle timeout: the connection is closed, unanswered
		}
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusBadRequest) // a body cut short or badly framed: no delivery to judge
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	eventType := req.Header.Get("X-Service-Event-Type")
	reject := func(reason WebhookReason, detail string) {
		r.rejected = append(r.rejected, Rejection{EventType: eventType, Reason: reason, Detail: detail, Header: req.Header.Clone(), Raw: raw})
		w.WriteHeader(http.StatusUnauthorized)
	}
	if req.Method != http.MethodPost {
		reject(ReasonMethod, "method "+req.Method)
		return
	}
	apiKey := headerValue(req.Header, "X-Service-Api-Key")
	if apiKey == "" || headerValue(req.Header, "X-Service-Timestamp") == "" || headerValue(req.Header, "X-Service-Signature") == "" {
		reject(ReasonMissingHeader, "X-Service-Api-Key, X-Service-Timestamp and X-Service-Signature are required")
		return
	}
	if r.key == nil || apiKey != r.key.APIKey {
		reject(ReasonUnknownKey, fmt.Sprintf("X-Service-Api-Key %q is not the webhook key this receiver expects", apiKey))
		return
	}
	if err := (WebhookVerifier{Key: *r.key, Now: r.now}).Verify(req.Header, r.path, raw); err != nil {
		var refused *VerifyError
		errors.As(err, &refused)
		reject(refused.Reason, refused.Detail)
		return
	}
	e := Event{EventType: eventType, Raw: raw}
	eventID, ok := eventIDOf(raw)
	if !ok {
		reject(ReasonNotJSON, "the body is not a JSON object with a non-empty string metadata.eventId")
		return
	}
	// Best effort: a field of another type than the model's is left empty, the event is still kept (rule 7
	// asks only for the eventId).
	json.Unmarshal(raw, &e.TransactionWebhookEvent)
	e.Metadata.EventID = eventID
	if r.seen[eventID] {
		// A repeat (a retry whose answer was lost, a chaos duplicate): acknowledge, do nothing twice.
		r.duplicates = append(r.duplicates, e)
		w.WriteHeader(http.StatusOK)
		return
	}
	r.seen[eventID] = true
	r.events = append(r.events, e)
	w.WriteHeader(http.StatusOK) // every kit's receiver answers 200, a duplicate too (docs/clients.md#go)
}

// eventIDOf is the body's metadata.eventId when the body is a JSON object whose metadata is an object with a
// non-empty string eventId.
func eventIDOf(raw []byte) (string, bool) {
	var body struct {
		Metadata *struct {
			EventID json.RawMessage `json:"eventId"`
		} `json:"metadata"`
	}
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(raw, &body) != nil || body.Metadata == nil {
		return "", false
	}
	var id string
	if json.Unmarshal(body.Metadata.EventID, &id) != nil || id == "" {
		return "", false
	}
	return id, true
}

// Events is the distinct events received so far, each once, in arrival order.
func (r *Receiver) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// Duplicates is the verified copies of events already received, acknowledged and otherwise ignored.
func (r *Receiver) Duplicates() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.duplicates...)
}

// Rejected is the deliveries refused with 401.
func (r *Receiver) Rejected() []Rejection {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Rejection(nil), r.rejected...)
}

// Find is the first event received so far for which match is true. It does not wait: settle first.
func (r *Receiver) Find(match func(Event) bool) (Event, bool) {
	for _, e := range r.Events() {
		if match(e) {
			return e, true
		}
	}
	return Event{}, false
}

// Of is a match for Find: the events of one transaction, with the given status when status is not "".
func Of(transactionID, status string) func(Event) bool {
	return func(e Event) bool {
		return e.Transaction.ID == transactionID && (status == "" || string(e.Transaction.Status) == status)
	}
}
