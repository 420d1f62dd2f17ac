// Package sandboxtest gives each Go test its own service-sandbox session (docs/clients.md#go): an isolated
// sandbox (own data, clock, ids and webhooks) inside one shared emulator process, so tests call t.Parallel().
//
//	func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) } // finds or starts one server for the binary
//
//	func TestAccount(t *testing.T) {
//		t.Parallel()
//		sb := sandboxtest.New(t) // labelled with the run's label; t.Cleanup ends it
//		var account sandbox.AccountDetail
//		sb.Do("GET", "/v1/accounts/acct_acme_usd", nil).Expect(200, &account)
//	}
//
// The server is the one at SANDBOX_URL (default http://127.0.0.1:4010) when it answers, else one Main starts
// with the CLI (SANDBOX_CLI). Webhooks reach a verifying, deduplicating sandbox.Receiver through the CLI's
// `listen` (Listen) or as the session's webhookUrl (Options.WebhookURL); Settle waits for them.
package sandboxtest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"service-sandbox.dev/go/sandbox"
)

// StartClock is the instant every session starts frozen at (unless it starts from a snapshot), so dates in
// answers do not depend on the day the suite runs. Move it with AdvanceClock.
const StartClock = "2026-03-01T12:00:00.000Z"

// SettleTimeout is how long Settle lets the server wait for due jobs and deliveries.
var SettleTimeout = 10 * time.Second

// Options are what a test's session starts from besides the run's label.
type Options struct {
	Seed       string // reproducible ids (docs/sessions.md#ids)
	Snapshot   string // a snapshot of the root sandbox (Server().UploadSnapshot) to start from, with its clock
	Clock      string // default StartClock; "realtime" for a flowing clock
	WebhookURL bool   // start a Receiver and give its URL as the session's webhookUrl (the server must reach the test)
}

// Sandbox is a test's session: the sandbox.Sandbox (every call of sandbox.Client, answering errors) plus
// helpers that fail the test instead.
type Sandbox struct {
	*sandbox.Sandbox
	Webhooks *sandbox.Receiver // nil until Listen, or made with Options{WebhookURL: true}
	t        testing.TB
}

// New creates a session for the test, labelled with the run's label, on a frozen clock at StartClock;
// t.Cleanup ends it. Call it more than once for independent sandboxes.
func New(t testing.TB) *Sandbox { t.Helper(); return NewWith(t, Options{}) }

// NewWith is New with options.
func NewWith(t testing.TB, opts Options) *Sandbox {
	t.Helper()
	session := sandbox.SessionOptions{Label: Label(), Seed: opts.Seed, Snapshot: opts.Snapshot, Clock: opts.Clock}
	if session.Clock == "" && opts.Snapshot == "" {
		session.Clock = StartClock
	}
	sb := &Sandbox{t: t}
	if opts.WebhookURL {
		receiver, err := sandbox.StartReceiver(nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { receiver.Close() }) // registered first, so it runs after the session has ended
		sb.Webhooks, session.WebhookURL = receiver, receiver.URL()
	}
	created, err := Server().CreateSession(session)
	if err != nil {
		t.Fatal(err)
	}
	sb.Sandbox = created
	if sb.Webhooks != nil {
		sb.Webhooks.Expect(created.Credentials.Webhook)
	}
	t.Cleanup(func() {
		if err := created.End(); err != nil {
			t.Errorf("ending session %s: %v", created.ID, err)
		}
	})
	return sb
}

// Listen gives the session a receiver (sb.Webhooks) fed by `service-sandbox listen --forward-to <receiver>
// --url <server> --session <id>` (docs/webhooks.md#listen), which runs until the test ends: the emulator never
// connects to the test, so this works with the emulator in a container.
func (sb *Sandbox) Listen() *sandbox.Receiver {
	sb.t.Helper()
	if sb.Webhooks != nil {
		sb.t.Fatal("the session already has a receiver")
	}
	key := sb.Credentials.Webhook
	receiver, err := sandbox.StartReceiver(&key)
	if err != nil {
		sb.t.Fatal(err)
	}
	sb.t.Cleanup(func() { receiver.Close() }) // runs after the listener stopped and the session ended
	listener, err := startListener(receiver.URL(), Server().BaseURL, sb.ID)
	if err != nil {
		sb.t.Fatal(err)
	}
	sb.t.Cleanup(listener.Stop) // runs first: Ctrl+C while the session still exists
	sb.Webhooks = receiver
	return receiver
}

// Do is sb.Call (a signed API call, sandbox.Client.Call) that fails the test on a transport error.
func (sb *Sandbox) Do(method, path string, body any, opts ...sandbox.Option) *Response {
	sb.t.Helper()
	return sb.Must(sb.Call(method, path, body, opts...))
}

// Must fails the test on a transport error and returns the answer, e.g. sb.Must(sb.Payout("json", p, key)).
func (sb *Sandbox) Must(res *sandbox.Response, err error) *Response {
	sb.t.Helper()
	if err != nil {
		sb.t.Fatal(err)
	}
	return &Response{res, sb.t}
}

// Response is an answer with test helpers.
type Response struct {
	*sandbox.Response
	t testing.TB
}

// Expect fails the test unless the status is want, then decodes the body into v (when not nil).
func (r *Response) Expect(want int, v any) *Response {
	r.t.Helper()
	if err := r.Response.Expect(want, v); err != nil {
		r.t.Fatal(err)
	}
	return r
}

// AdvanceClock moves the session's clock on by ms; due jobs have run when it returns.
func (sb *Sandbox) AdvanceClock(ms int64) sandbox.Clock {
	sb.t.Helper()
	clock, err := sb.Client.AdvanceClock(ms)
	if err != nil {
		sb.t.Fatal(err)
	}
	return clock
}

// Settle returns once every job due now has run and every webhook due now was answered
// (docs/control-plane.md#settle), or fails the test after SettleTimeout.
func (sb *Sandbox) Settle() sandbox.SettleReport {
	sb.t.Helper()
	report, err := sb.Client.Settle(SettleTimeout)
	if err != nil {
		sb.t.Fatal(err)
	}
	return report
}

// Webhook is the first event the receiver kept for which match is true (sandbox.Of(id, status), say), or a
// test failure. It does not wait: Settle first.
func (sb *Sandbox) Webhook(match func(sandbox.Event) bool) sandbox.Event {
	sb.t.Helper()
	if sb.Webhooks == nil {
		sb.t.Fatal("the session has no receiver: call Listen, or create it with Options{WebhookURL: true}")
	}
	e, ok := sb.Webhooks.Find(match)
	if !ok {
		sb.t.Fatalf("no matching webhook; received %s; rejected %d", Summary(sb.Webhooks.Events()), len(sb.Webhooks.Rejected()))
	}
	return e
}

// Summary is "type transaction status" per event, for failure messages.
func Summary(events []sandbox.Event) string {
	s := "["
	for i, e := range events {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s %s %s", e.EventType, e.Transaction.ID, e.Transaction.Status)
	}
	return s + "]"
}

// IsNotSettled says whether err is a Settle that timed out.
func IsNotSettled(err error) bool {
	var e *sandbox.ErrNotSettled
	return errors.As(err, &e)
}
