package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Webhook forwarding (docs/webhooks.md#listen, docs/clients.md#go-forwarding): what `service-sandbox listen`
// does, in Go, with no other process. The forwarder holds the sandbox's relay stream open, posts each delivery
// attempt to the app's URL with the headers and bytes the emulator hands over (signed for that URL's path), and
// reports the app's answer back, so retries, the delivery log and webhook chaos behave as with direct delivery.

// ErrSessionGone is what a Forwarder's Err matches (errors.Is) when its session ended (or idled out): the
// stream closed and the session no longer answers.
var ErrSessionGone = errors.New("the session is gone")

// ErrForwardingStopped is what Err matches when the emulator ended forwarding for good: another listener took
// over, or DELETE /_emulator/webhooks/listen stopped the relay.
var ErrForwardingStopped = errors.New("the emulator stopped webhook forwarding")

// ForwardReconnectDelay is how long a forwarder waits before connecting again after the stream dropped or the
// server did not answer (a reset ends the stream; the server may be restarting).
var ForwardReconnectDelay = time.Second

// answerBytesReported is how much of the app's answer is read and goes back to the emulator: what the delivery
// log keeps (2 KiB). The rest is never read: the connection is closed.
const answerBytesReported = 2048

// answerBodyWait is the longest the forwarder waits for the first answerBytesReported bytes of the body once the
// status has come (and never more than half the time the attempt has left, so the report reaches the emulator
// before its own timeout): direct delivery acknowledges on the status and only logs the body, so an app that
// answers 200 and then stalls is DELIVERED through forwarding too (docs/webhooks.md#delivery-rules).
var answerBodyWait = time.Second

// Forwarder relays one sandbox's webhooks to an app. Stop it with Stop (or by cancelling the context it was
// started with); Done and Err tell when and why it ended by itself.
type Forwarder struct {
	client    *Client
	forwardTo string
	cancel    context.CancelFunc
	done      chan struct{}
	attempts  sync.WaitGroup
	sendTo    *http.Client

	mu         sync.Mutex
	listenerID string
	connected  bool          // a stream is open (its ready event read)
	changed    chan struct{} // closed and replaced when listenerID or connected changes
	err        error
	forwarded  int
}

// ForwardWebhooks makes forwardTo (the app's webhook URL, e.g. http://127.0.0.1:3000/webhooks) the sandbox's
// webhook endpoint and relays its deliveries there until ctx is cancelled or Stop is called. It returns once the
// emulator has confirmed the stream (its ready event): deliveries from then on reach the app. It works on the
// root sandbox (a Server) and on a session (a Sandbox); the admin token, when set, goes with every request.
// When the stream ends for a reset it connects again; when the session is gone it stops with ErrSessionGone.
func (c *Client) ForwardWebhooks(ctx context.Context, forwardTo string) (*Forwarder, error) {
	if u, err := url.Parse(forwardTo); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("forwarding to %q: accepts an http:// or https:// URL, such as http://127.0.0.1:3000/webhooks", forwardTo)
	}
	ctx, cancel := context.WithCancel(ctx)
	f := &Forwarder{client: c, forwardTo: forwardTo, cancel: cancel, done: make(chan struct{}), sendTo: newAppClient()}
	stream, listenerID, err := f.connect(ctx)
	if err != nil {
		cancel()
		return nil, f.refusal(err)
	}
	f.listenerID, f.connected, f.changed = listenerID, true, make(chan struct{})
	go f.run(ctx, stream)
	return f, nil
}

// Reconnected returns once the forwarder is connected on a stream other than previous (a ListenerID read
// before a reset): a reset ends the stream, and the forwarder connects again a second later and points the reset
// sandbox's endpoints at the app again. Wait for it before causing the webhooks you expect. An error when the
// forwarder ended first (its Err, or ErrForwardingStopped after Stop) or ctx did.
func (f *Forwarder) Reconnected(ctx context.Context, previous string) error {
	for {
		f.mu.Lock()
		ready, changed := f.connected && f.listenerID != previous, f.changed
		f.mu.Unlock()
		if ready {
			return nil
		}
		select {
		case <-changed:
		case <-f.done:
			if err := f.Err(); err != nil {
				return err
			}
			return ErrForwardingStopped
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// setConnected records the stream's state and wakes Reconnected.
func (f *Forwarder) setConnected(connected bool, listenerID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.connected = connected
	if listenerID != "" {
		f.listenerID = listenerID
	}
	close(f.changed)
	f.changed = make(chan struct{})
}

// ListenerID is the emulator's id of the current stream (lst_...).
func (f *Forwarder) ListenerID() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.listenerID
}

// Forwarded is how many attempts were posted to the app so far (answered or not).
func (f *Forwarder) Forwarded() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.forwarded
}

// Done is closed when the forwarder has ended: stopped, its context cancelled, or ended by the emulator.
func (f *Forwarder) Done() <-chan struct{} { return f.done }

// Err is why the forwarder ended by itself (ErrSessionGone, ErrForwardingStopped, a refusal); nil while it runs
// and when it was stopped.
func (f *Forwarder) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// Stop ends forwarding and waits until the stream is closed and every attempt in hand has been answered or
// abandoned (the emulator then counts it as failed and retries it on its schedule). Safe to call more than once.
func (f *Forwarder) Stop() {
	f.cancel()
	<-f.done
}

// streamError is a refusal of the stream request: a 4xx does not change by itself, anything else may.
type streamError struct {
	status int
	text   string
}

func (e *streamError) Error() string { return fmt.Sprintf("%d %s", e.status, e.text) }

// connect opens the stream and reads up to its ready event, within the client's Timeout (the stream itself has
// no deadline: it stays open).
func (f *Forwarder) connect(ctx context.Context) (*sseReader, string, error) {
	ctx, cancel := context.WithCancel(ctx)
	handshake := time.AfterFunc(f.client.timeout(), cancel)
	stream, listenerID, err := f.handshake(ctx)
	if !handshake.Stop() && ctx.Err() != nil { // the timer ended the handshake: say so, not "context canceled"
		if err == nil {
			stream.close()
		}
		err = fmt.Errorf("the stream of %s was not ready within %v", f.client.BaseURL, f.client.timeout())
	}
	if err != nil {
		cancel()
		return nil, "", err
	}
	stream.cancel = cancel
	return stream, listenerID, nil
}

func (f *Forwarder) handshake(ctx context.Context) (*sseReader, string, error) {
	target := f.client.BaseURL + "/_emulator/webhooks/listen/stream?forwardTo=" + url.QueryEscape(f.forwardTo)
	req, err := http.NewRequestWithContext(ctx, "GET", target, nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept", "text/event-stream")
	f.client.checkVersion(ctx)
	res, err := f.client.httpClient().Do(f.client.admin(req)) // no deadline: the stream stays open
	if err != nil {
		return nil, "", err
	}
	if res.StatusCode != http.StatusOK {
		defer res.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		var body ServiceError
		text := string(raw)
		if json.Unmarshal(raw, &body) == nil && body.Message != "" {
			text = body.Message
		}
		return nil, "", &streamError{res.StatusCode, text}
	}
	stream := &sseReader{body: res.Body, lines: bufio.NewReader(res.Body)}
	for {
		name, data, err := stream.next()
		if err != nil {
			stream.close()
			return nil, "", fmt.Errorf("the stream of %s ended before it was ready: %w", f.client.BaseURL, err)
		}
		if name == "ready" {
			var ready struct {
				ListenerID string `json:"listenerId"`
			}
			if err := json.Unmarshal(data, &ready); err != nil || ready.ListenerID == "" {
				stream.close()
				return nil, "", fmt.Errorf("the stream of %s: a ready event without a listenerId: %s", f.client.BaseURL, data)
			}
			return stream, ready.ListenerID, nil
		}
	}
}

// run serves streams until the forwarder is stopped or ends; it connects again after a reset or a dropped
// connection.
func (f *Forwarder) run(ctx context.Context, stream *sseReader) {
	defer close(f.done)
	defer f.attempts.Wait()
	for {
		again := f.serve(ctx, stream)
		stream.close()
		f.setConnected(false, "")
		if !again || ctx.Err() != nil {
			return
		}
		for {
			timer := time.NewTimer(ForwardReconnectDelay)
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case <-timer.C:
			}
			next, listenerID, err := f.connect(ctx)
			if err == nil {
				f.setConnected(true, listenerID)
				stream = next
				break
			}
			if ctx.Err() != nil {
				return
			}
			var refused *streamError
			if errors.As(err, &refused) && refused.status >= 400 && refused.status < 500 {
				f.end(f.refusal(err))
				return
			}
			// unreachable or a 5xx: the server may be restarting; try again
		}
	}
}

// refusal is the one clear error of a refused stream: ErrSessionGone for a session that no longer answers.
func (f *Forwarder) refusal(err error) error {
	var refused *streamError
	if errors.As(err, &refused) && refused.status == http.StatusNotFound && strings.Contains(f.client.BaseURL, "/_sessions/") {
		return fmt.Errorf("forwarding %s to %s: %w (%s)", f.client.BaseURL, f.forwardTo, ErrSessionGone, refused.text)
	}
	if errors.As(err, &refused) {
		return fmt.Errorf("forwarding %s to %s: the emulator refused the stream: %w", f.client.BaseURL, f.forwardTo, err)
	}
	return fmt.Errorf("forwarding %s to %s: %w", f.client.BaseURL, f.forwardTo, err)
}

func (f *Forwarder) end(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

// serve handles one stream's events; it says whether to connect again.
func (f *Forwarder) serve(ctx context.Context, stream *sseReader) bool {
	for {
		name, data, err := stream.next()
		if err != nil {
			return true // the connection dropped: connect again (the emulator counts attempts in hand as failed)
		}
		switch name {
		case "attempt":
			var attempt forwardedAttempt
			if err := json.Unmarshal(data, &attempt); err != nil {
				continue
			}
			f.mu.Lock()
			f.forwarded++
			listenerID := f.listenerID
			f.mu.Unlock()
			f.attempts.Add(1)
			go func() { // each on its own: a slow answer does not hold back the next delivery
				defer f.attempts.Done()
				f.report(ctx, listenerID, attempt.AttemptID, f.send(ctx, attempt))
			}()
		case "replaced":
			f.end(fmt.Errorf("forwarding %s to %s: another listener took over: %w", f.client.BaseURL, f.forwardTo, ErrForwardingStopped))
			return false
		case "closed":
			var closed struct {
				Reason    string `json:"reason"`
				Reconnect bool   `json:"reconnect"`
			}
			json.Unmarshal(data, &closed)
			if !closed.Reconnect {
				f.end(fmt.Errorf("forwarding %s to %s: %s: %w", f.client.BaseURL, f.forwardTo, closed.Reason, ErrForwardingStopped))
				return false
			}
			return true // a reset (or the session closing: the next connect says which)
		}
	}
}

// forwardedAttempt is one delivery attempt as the emulator hands it over (docs/webhooks.md#listen).
type forwardedAttempt struct {
	AttemptID string            `json:"attemptId"`
	URL       string            `json:"url"`
	Headers   map[string]string `json:"headers"`
	Body      string            `json:"body"`
	TimeoutMs int64             `json:"timeoutMs"`
}

// newAppClient is the client attempts go to the app with. It does not follow redirects: a 3xx is the app's
// answer, a failed attempt, as with direct delivery (docs/webhooks.md#delivery-rules).
func newAppClient() *http.Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.DisableCompression = true // the app gets the emulator's headers, not an Accept-Encoding of ours
	return &http.Client{
		Transport:     transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// send posts the attempt to the app as it is: its URL (the forward-to URL, with the query the emulator sent it
// with, if any), its headers and its bytes. The result is the status, and at most answerBytesReported bytes of
// the body read within answerBodyWait: direct delivery's outcome for the same answer (src/lib/http-post.ts).
func (f *Forwarder) send(ctx context.Context, attempt forwardedAttempt) ListenAttemptResult {
	started := time.Now()
	result := ListenAttemptResult{AttemptID: attempt.AttemptID}
	timeout := time.Duration(attempt.TimeoutMs) * time.Millisecond
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	deadline := started.Add(timeout)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	failed := func(err error) ListenAttemptResult {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %d ms (timeout)", timeout.Milliseconds())
		}
		result.Error = Ptr(err.Error())
		result.LatencyMs = latency(started)
		return result
	}
	target := attempt.URL
	if target == "" {
		target = f.forwardTo
	}
	req, err := http.NewRequestWithContext(ctx, "POST", target, strings.NewReader(attempt.Body))
	if err != nil {
		return failed(err)
	}
	for name, value := range attempt.Headers {
		switch strings.ToLower(name) {
		case "host", "content-length", "connection", "transfer-encoding":
			// net/http writes these itself
		default:
			req.Header.Set(name, value)
		}
	}
	if _, ok := req.Header["User-Agent"]; !ok {
		req.Header["User-Agent"] = []string{""} // none of net/http's own: only what the emulator would send
	}
	res, err := f.sendTo.Do(req)
	if err != nil {
		return failed(err)
	}
	result.Status = Ptr(int64(res.StatusCode))
	result.LatencyMs = latency(started) // to the status line, as direct delivery measures it
	wait := time.Until(deadline) / 2
	if wait > answerBodyWait {
		wait = answerBodyWait
	}
	// Cancelling the request ends a read of its body at once; cut short or not, the status stands.
	stopReading := time.AfterFunc(wait, cancel)
	answer, _ := io.ReadAll(io.LimitReader(res.Body, answerBytesReported))
	stopReading.Stop()
	res.Body.Close() // unread bytes are left unread: the connection is closed, not drained
	if len(answer) > 0 {
		result.ResponseBody = Ptr(strings.ToValidUTF8(string(answer), "\uFFFD"))
	}
	return result
}

func latency(started time.Time) float64 {
	return float64(time.Since(started).Microseconds()/100) / 10
}

// report posts the app's answer back; a 404 (the attempt no longer waits: it timed out, or a reset) is no error.
func (f *Forwarder) report(ctx context.Context, listenerID, attemptID string, result ListenAttemptResult) {
	raw, err := json.Marshal(struct {
		ListenAttemptResult
		Status *int64 `json:"status"` // null, not absent, when the app did not answer
	}{result, result.Status})
	if err != nil {
		return
	}
	f.client.controlWithin(ctx, f.client.timeout(), "POST", "/webhooks/listen/"+url.PathEscape(listenerID)+"/results", json.RawMessage(raw))
}

// sseReader reads a text/event-stream: `event:` and `data:` lines, a blank line ending each event, `:` comments
// (keep-alives) skipped.
type sseReader struct {
	body   io.ReadCloser
	lines  *bufio.Reader
	cancel context.CancelFunc // ends the stream's request
}

func (s *sseReader) close() {
	s.body.Close()
	if s.cancel != nil {
		s.cancel()
	}
}

func (s *sseReader) next() (string, []byte, error) {
	name := "message"
	var data bytes.Buffer
	for {
		line, err := s.lines.ReadString('\n')
		if err != nil {
			return "", nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if data.Len() > 0 {
				return name, data.Bytes(), nil
			}
			name = "message"
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event:"):
			name = strings.TrimSpace(line[len("event:"):])
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(line[len("data:"):], " "))
		}
	}
}
