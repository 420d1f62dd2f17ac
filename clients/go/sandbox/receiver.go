package sandbox

import (
	"encoding/json"
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

// Rejection is a delivery the receiver refused (401): a bad key, signature or timestamp, or an unreadable body.
type Rejection struct {
	EventType string
	Reason    string // the VerifyError's text, or what else was wrong
	Header    http.Header
}

// Receiver is a webhook endpoint that does what an application's should (docs/webhooks.md#verifying-deliveries-in-your-app):
// it verifies each delivery (VerifyWebhook), answers 401 to a bad one, deduplicates on metadata.eventId
// (delivery is at least once: a repeat is acknowledged and counted, nothing more), and records what it got.
// Give its URL to a session as webhookUrl, or forward a session's webhooks to it (ForwardWebhooks). Use it as an
// http.Handler in a server of your own, or start one on a loopback port with StartReceiver.
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
}

// NewReceiver is a receiver handler for deliveries signed for path (the path of its URL). Until Expect gives
// it the webhook key it answers 503 (the emulator retries).
func NewReceiver(path string) *Receiver {
	return &Receiver{path: path, seen: map[string]bool{}, now: time.Now}
}

// StartReceiver starts a receiver on a free loopback port, at ReceiverPath; Close stops it.
func StartReceiver(key *Key) (*Receiver, error) {
	r := NewReceiver(ReceiverPath)
	r.key = key
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(ReceiverPath, r)
	r.server = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	r.url = "http://" + l.Addr().String() + ReceiverPath
	go r.server.Serve(l)
	return r, nil
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

// ServeHTTP handles one delivery.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	raw, err := io.ReadAll(req.Body) // the raw bytes: the signature covers them, before any JSON parsing
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	eventType := req.Header.Get("X-Service-Event-Type")
	if r.key == nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	reject := func(reason string) {
		r.rejected = append(r.rejected, Rejection{EventType: eventType, Reason: reason, Header: req.Header.Clone()})
		w.WriteHeader(http.StatusUnauthorized)
	}
	if req.Method != http.MethodPost {
		reject("method " + req.Method)
		return
	}
	if err := (WebhookVerifier{Key: *r.key, Now: r.now}).Verify(req.Header, r.path, raw); err != nil {
		reject(err.Error())
		return
	}
	e := Event{EventType: eventType, Raw: raw}
	if err := json.Unmarshal(raw, &e.TransactionWebhookEvent); err != nil || e.Metadata.EventID == "" {
		reject("body is not a transaction webhook event")
		return
	}
	if r.seen[e.Metadata.EventID] {
		// A repeat (a retry whose answer was lost, a chaos duplicate): acknowledge, do nothing twice.
		r.duplicates = append(r.duplicates, e)
		w.WriteHeader(http.StatusOK)
		return
	}
	r.seen[e.Metadata.EventID] = true
	r.events = append(r.events, e)
	w.WriteHeader(http.StatusOK) // every kit's receiver answers 200, a duplicate too (docs/clients.md#go)
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
