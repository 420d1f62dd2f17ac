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
// with the CLI (SANDBOX_CLI). Webhooks reach the app under test through the kit's own forwarding
// (ForwardWebhooks: no other process), or a verifying, deduplicating sandbox.Receiver (Listen, or the session's
// webhookUrl with Options.WebhookURL); Settle waits for them.
package sandboxtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"service-sandbox.dev/go/sandbox"
)

// SettleTimeout is how long Settle lets the server wait for due jobs and deliveries.
var SettleTimeout = 10 * time.Second

// Options are what a test's session starts from besides the run's label.
type Options struct {
	Seed       string // reproducible ids (docs/sessions.md#ids)
	Snapshot   string // a snapshot of the root sandbox (Server().UploadSnapshot) to start from, with its clock
	Clock      string // default sandbox.DefaultClock; "realtime" for a flowing clock
	WebhookURL bool   // start a Receiver and give its URL as the session's webhookUrl (the server must reach the test)
}

// Sandbox is a test's session: the sandbox.Sandbox (every call of sandbox.Client, answering errors) plus
// helpers that fail the test instead.
type Sandbox struct {
	*sandbox.Sandbox
	Webhooks *sandbox.Receiver // nil until Listen, or made with Options{WebhookURL: true}
	t        testing.TB
}

// New creates a session for the test, labelled with the run's label, on a frozen clock at sandbox.DefaultClock;
// t.Cleanup ends it. Call it more than once for independent sandboxes.
func New(t testing.TB) *Sandbox { t.Helper(); return NewWith(t, Options{}) }

// NewWith is New with options.
func NewWith(t testing.TB, opts Options) *Sandbox {
	t.Helper()
	session := sandbox.SessionOptions{Label: Label(), Seed: opts.Seed, Snapshot: opts.Snapshot, Clock: opts.Clock}
	sb := &Sandbox{t: t}
	if opts.WebhookURL {
		receiver, err := sandbox.StartReceiver(nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { receiver.Close() }) // registered first, so it runs after the session has ended
		sb.Webhooks, session.WebhookURL = receiver, receiver.URL()
	}
	created, err := Server().CreateSession(context.Background(), session)
	if err != nil {
		t.Fatal(err)
	}
	sb.Sandbox = created
	if sb.Webhooks != nil {
		sb.Webhooks.Expect(created.Credentials.Webhook)
	}
	t.Cleanup(func() {
		if err := created.End(context.Background()); err != nil {
			t.Errorf("ending session %s: %v", created.ID, err)
		}
	})
	return sb
}

// ForwardWebhooks relays the session's webhooks to url (the app under test's own endpoint, e.g.
// http://127.0.0.1:3000/webhooks) until t ends: t.Cleanup stops it, before the session ends. Deliveries are
// signed for url's path; the app verifies them with the session's Credentials.Webhook (sandbox.WebhookVerifier).
// The kit speaks the relay's protocol itself (docs/webhooks.md#listen): no CLI process, and the emulator never
// connects to the test, so this works with the emulator in a container. It returns once forwarding is
// connected; when the session ends first, the forwarder stops with sandbox.ErrSessionGone, reported by t.
func (sb *Sandbox) ForwardWebhooks(t testing.TB, url string) *sandbox.Forwarder {
	t.Helper()
	f, err := sb.Client.ForwardWebhooks(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.Stop()
		if err := f.Err(); err != nil {
			t.Errorf("webhook forwarding ended before the test did: %v", err)
		}
	})
	return f
}

// Listen gives the session a receiver (sb.Webhooks) on a loopback port, fed by ForwardWebhooks until the test
// ends: the receiver verifies, deduplicates and records, for tests of the emulator's webhooks themselves.
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
	sb.t.Cleanup(func() { receiver.Close() }) // runs after forwarding stopped and the session ended
	sb.ForwardWebhooks(sb.t, receiver.URL())
	sb.Webhooks = receiver
	return receiver
}

// Do is sb.Call (a signed API call, sandbox.Client.Call) that fails the test on a transport error.
func (sb *Sandbox) Do(method, path string, body any, opts ...sandbox.Option) *Response {
	sb.t.Helper()
	return sb.Must(sb.Call(context.Background(), method, path, body, opts...))
}

// Must fails the test on a transport error and returns the answer, e.g. sb.Must(sb.Payout(ctx, "json", p, key)).
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
	clock, err := sb.Client.AdvanceClock(context.Background(), ms)
	if err != nil {
		sb.t.Fatal(err)
	}
	return clock
}

// Settle returns once every job due now has run and every webhook due now was answered
// (docs/control-plane.md#settle), or fails the test after SettleTimeout.
func (sb *Sandbox) Settle() sandbox.SettleReport {
	sb.t.Helper()
	report, err := sb.Client.Settle(context.Background(), SettleTimeout)
	if err != nil {
		sb.t.Fatal(err)
	}
	return report
}

// SettleUntilIdle is sandbox.Client.SettleUntilIdle (settle; while deliveries wait for a retry, move the clock
// to it and settle again) with SettleTimeout, failing the test on an error.
func (sb *Sandbox) SettleUntilIdle() sandbox.SettleReport {
	sb.t.Helper()
	report, err := sb.Client.SettleUntilIdle(context.Background(), SettleTimeout, 0)
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
