package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// The control plane of one sandbox (docs/control-plane.md), typed with the generated structs. Every method
// answers an error for a transport failure or an unexpected status (an *APIError wrapped, for an error answer).

func (c *Client) control(ctx context.Context, method, path string, body any, want int, v any) error {
	return c.controlExpect(ctx, c.timeout(), method, path, body, want, v)
}

func (c *Client) controlExpect(ctx context.Context, timeout time.Duration, method, path string, body any, want int, v any) error {
	res, err := c.controlWithin(ctx, timeout, method, path, body)
	if err != nil {
		return err
	}
	if err := res.Expect(want, v); err != nil {
		return fmt.Errorf("%s /_emulator%s: %w", method, path, err)
	}
	return nil
}

// Clock is the sandbox's emulated clock.
func (c *Client) Clock(ctx context.Context) (Clock, error) {
	var clock Clock
	return clock, c.control(ctx, "GET", "/clock", nil, http.StatusOK, &clock)
}

// AdvanceClock moves the sandbox's clock on by ms; the jobs due by then (rail steps, reviews, webhook retries)
// have run when it returns (docs/control-plane.md#health-reset-and-clock).
func (c *Client) AdvanceClock(ctx context.Context, ms int64) (Clock, error) {
	var clock Clock
	return clock, c.control(ctx, "POST", "/clock", map[string]int64{"advanceMs": ms}, http.StatusOK, &clock)
}

// ErrNotSettled is what Settle's error matches (errors.Is) when the sandbox did not settle within the timeout;
// errors.As with a *NotSettledError gives the server's report.
var ErrNotSettled = errors.New("the sandbox did not settle")

// NotSettledError is Settle's error when the timeout passed first: the report says what still waits.
type NotSettledError struct{ Report SettleReport }

func (e *NotSettledError) Error() string {
	return fmt.Sprintf("%v after %d ms: %d jobs and %d deliveries waiting", ErrNotSettled, e.Report.WaitedMs, e.Report.Waiting.Jobs, e.Report.Waiting.Deliveries)
}

// Is makes errors.Is(err, ErrNotSettled) true.
func (e *NotSettledError) Is(target error) bool { return target == ErrNotSettled }

// Settle is POST /_emulator/settle: it answers once every job due at the sandbox's current time has run and
// every webhook delivery due has been attempted and answered (docs/control-plane.md#settle); the clock does not
// move. Use it instead of sleeping or polling for webhooks. When the timeout passed first the error matches
// ErrNotSettled (a *NotSettledError). The call's own deadline, when ctx has none, is timeout plus the client's
// Timeout, so a long settle is never cut short by the client.
func (c *Client) Settle(ctx context.Context, timeout time.Duration) (SettleReport, error) {
	var report SettleReport
	if err := c.controlExpect(ctx, timeout+c.timeout(), "POST", "/settle", map[string]int64{"timeoutMs": timeout.Milliseconds()}, http.StatusOK, &report); err != nil {
		return report, err
	}
	if !report.Settled {
		return report, &NotSettledError{report}
	}
	return report, nil
}

// DefaultSettleRounds is how many times SettleUntilIdle moves the clock on when maxRounds is 0.
const DefaultSettleRounds = 20

// SettleUntilIdle settles, and while deliveries wait for a later emulated time (a retry on its schedule), moves
// the clock to the next due instant and settles again, at most maxRounds times (0: DefaultSettleRounds). The
// final report; an error as Settle's. The same word in every kit (settleUntilIdle, settle_until_idle).
func (c *Client) SettleUntilIdle(ctx context.Context, timeout time.Duration, maxRounds int) (SettleReport, error) {
	if maxRounds <= 0 {
		maxRounds = DefaultSettleRounds
	}
	report, err := c.Settle(ctx, timeout)
	for round := 0; err == nil && round < maxRounds && report.Waiting.Deliveries > 0 && report.NextDueAt != nil; round++ {
		now, nowErr := time.Parse(time.RFC3339Nano, report.Now)
		due, dueErr := time.Parse(time.RFC3339Nano, *report.NextDueAt)
		if nowErr != nil || dueErr != nil {
			return report, fmt.Errorf("settle report with unreadable instants: now %q, nextDueAt %q", report.Now, *report.NextDueAt)
		}
		step := due.Sub(now).Milliseconds()
		if step < 1 {
			step = 1
		}
		if _, err = c.AdvanceClock(ctx, step); err != nil {
			return report, err
		}
		report, err = c.Settle(ctx, timeout)
	}
	return report, err
}

// SaveSnapshot saves the sandbox's whole state under name (docs/control-plane.md#snapshots).
func (c *Client) SaveSnapshot(ctx context.Context, name string) (Snapshot, error) {
	var s Snapshot
	res, err := c.Control(ctx, "POST", "/snapshots", map[string]string{"name": name})
	if err != nil {
		return s, err
	}
	if res.Status == http.StatusOK { // it replaced a snapshot of that name
		return s, res.Decode(&s)
	}
	return s, res.Expect(http.StatusCreated, &s)
}

// RestoreSnapshot brings the state saved under name back, clock included.
func (c *Client) RestoreSnapshot(ctx context.Context, name string) error {
	return c.control(ctx, "POST", "/snapshots/"+url.PathEscape(name)+"/restore", nil, http.StatusOK, nil)
}

// ExportSnapshot is the snapshot as one file (a SQLite database), for UploadSnapshot elsewhere.
func (c *Client) ExportSnapshot(ctx context.Context, name string) ([]byte, error) {
	res, err := c.Control(ctx, "GET", "/snapshots/"+url.PathEscape(name)+"/export", nil)
	if err != nil {
		return nil, err
	}
	if err := res.Expect(http.StatusOK, nil); err != nil {
		return nil, err
	}
	return res.Body, nil
}

// UploadSnapshot stores an exported file under name (PUT /_emulator/snapshots/{name}). On a server's root
// sandbox, a session can then start from it (SessionOptions.Snapshot).
func (c *Client) UploadSnapshot(ctx context.Context, name string, file []byte) (Snapshot, error) {
	var s Snapshot
	req, err := http.NewRequestWithContext(ctx, "PUT", c.BaseURL+"/_emulator/snapshots/"+url.PathEscape(name), bytesReader(file))
	if err != nil {
		return s, err
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	res, err := c.do(c.admin(req), c.timeout())
	if err != nil {
		return s, err
	}
	if res.Status == http.StatusOK {
		return s, res.Decode(&s)
	}
	return s, res.Expect(http.StatusCreated, &s)
}

// DeleteSnapshot removes a saved snapshot.
func (c *Client) DeleteSnapshot(ctx context.Context, name string) error {
	return c.control(ctx, "DELETE", "/snapshots/"+url.PathEscape(name), nil, http.StatusNoContent, nil)
}

// Fault is a fault rule to add (docs/faults.md#the-rule). Effect is one of the generated FaultEffect* structs
// (or a map), e.g. FaultEffectAmbiguous{Type: "ambiguous", Status: Ptr[int64](502)}.
type Fault struct {
	Match       FaultMatch `json:"match"`
	Effect      any        `json:"effect"`
	Times       int64      `json:"times,omitempty"`
	Probability float64    `json:"probability,omitempty"`
	Seed        string     `json:"seed,omitempty"`
}

// AddFault adds a fault rule; it acts on the sandbox's next matching API requests.
func (c *Client) AddFault(ctx context.Context, f Fault) (FaultRule, error) {
	var rule FaultRule
	return rule, c.control(ctx, "POST", "/faults", f, http.StatusCreated, &rule)
}

// FaultRule reads one rule, with its counters (matched, fired, remaining).
func (c *Client) FaultRule(ctx context.Context, id string) (FaultRule, error) {
	var rule FaultRule
	return rule, c.control(ctx, "GET", "/faults/"+url.PathEscape(id), nil, http.StatusOK, &rule)
}

// ClearFaults removes every fault rule.
func (c *Client) ClearFaults(ctx context.Context) error {
	return c.control(ctx, "DELETE", "/faults", nil, http.StatusNoContent, nil)
}

// SetWebhookChaos replaces the webhook chaos settings (docs/faults.md#webhook-chaos): chaos is a WebhookChaos
// settings object, e.g. map[string]any{"seed": "ci-42", "duplicate": map[string]any{"times": 1}}.
func (c *Client) SetWebhookChaos(ctx context.Context, chaos any) (WebhookChaos, error) {
	var view WebhookChaos
	return view, c.control(ctx, "PUT", "/webhooks/chaos", chaos, http.StatusOK, &view)
}

// WebhookChaos is the chaos settings with their counters.
func (c *Client) WebhookChaos(ctx context.Context) (WebhookChaos, error) {
	var view WebhookChaos
	return view, c.control(ctx, "GET", "/webhooks/chaos", nil, http.StatusOK, &view)
}

// ClearWebhookChaos turns chaos off; held attempts are sent at once.
func (c *Client) ClearWebhookChaos(ctx context.Context) error {
	return c.control(ctx, "DELETE", "/webhooks/chaos", nil, http.StatusNoContent, nil)
}

// SetWebhookEndpoint points every programme's webhooks at url ("" clears it) (docs/webhooks.md#pointing-it-at-your-app).
func (c *Client) SetWebhookEndpoint(ctx context.Context, endpoint string) error {
	body := map[string]any{"url": nil}
	if endpoint != "" {
		body["url"] = endpoint
	}
	return c.control(ctx, "PUT", "/webhooks/endpoint", body, http.StatusOK, nil)
}

// Deliveries is the delivery log (docs/webhooks.md#delivery-log-and-replay), filtered by query (status,
// eventType, transactionId, pageSize, ...; nil for all).
func (c *Client) Deliveries(ctx context.Context, query url.Values) (WebhookDeliveryList, error) {
	var list WebhookDeliveryList
	path := "/webhooks/deliveries"
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	return list, c.control(ctx, "GET", path, nil, http.StatusOK, &list)
}

// Delivery is one delivery (dlv_... or its evt_... event id), with every attempt.
func (c *Client) Delivery(ctx context.Context, id string) (WebhookDelivery, error) {
	var d WebhookDelivery
	return d, c.control(ctx, "GET", "/webhooks/deliveries/"+url.PathEscape(id), nil, http.StatusOK, &d)
}

// ReplayDelivery sends a delivery's event again now and answers once that attempt has settled.
func (c *Client) ReplayDelivery(ctx context.Context, id string) (WebhookDelivery, error) {
	var d WebhookDelivery
	return d, c.control(ctx, "POST", "/webhooks/deliveries/"+url.PathEscape(id)+"/replay", nil, http.StatusOK, &d)
}
