// Package sandboxtest gives each Go test its own service-sandbox session: an isolated sandbox (own data,
// clock and webhooks) inside one shared emulator process, so tests can run with t.Parallel().
//
//	func TestAccounts(t *testing.T) {
//		t.Parallel()
//		sb := sandboxtest.New(t) // labelled with the run's label, deleted by t.Cleanup
//		res := sb.Signed("GET", "/v1/accounts", "")
//		if res.Status != 200 { t.Fatal(res) }
//	}
//
// The emulator is the one at SANDBOX_URL (default http://127.0.0.1:4010), or, with Main in TestMain, one started
// for the run with the CLI (SANDBOX_CLI) when nothing answers there. Webhooks come through the CLI's `listen`
// (Listen), and Settle waits for them.
// Standard library only.
package sandboxtest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// DefaultURL is where the emulator listens unless SANDBOX_URL says otherwise.
const DefaultURL = "http://127.0.0.1:4010"

// StartClock is the instant every session starts frozen at, so dates in answers do not depend on the day the
// suite runs. Move it with AdvanceClock.
const StartClock = "2026-03-01T12:00:00.000Z"

// Key is an API key and its secret.
type Key struct {
	APIKey string `json:"apiKey"`
	Secret string `json:"secret"`
}

// Credentials are the keys of a session's fixtures (docs/authentication.md; the same in every session).
type Credentials struct {
	ProgrammeID string `json:"programmeId"`
	Single      struct {
		Key
		UserID string `json:"userId"`
	} `json:"single"`
	Multi   Key `json:"multi"`
	Webhook Key `json:"webhook"`
}

// Sandbox is one session of the emulator, made by New.
type Sandbox struct {
	ID          string      `json:"id"`
	BaseURL     string      `json:"baseUrl"` // e.g. http://127.0.0.1:4010/_sessions/ses_1a2b; the API is under BaseURL + "/v1"
	Credentials Credentials `json:"credentials"`
	Webhooks    *Receiver   `json:"-"` // nil until Listen, or made with Options{WebhookURL: true}

	t      testing.TB
	server string
}

// client is shared by every session: it pools connections across parallel tests.
var client = &http.Client{Timeout: 30 * time.Second}

// ServerURL is the emulator at SANDBOX_URL, else DefaultURL (Main may start another: see there).
func ServerURL() string {
	if u := strings.TrimRight(os.Getenv("SANDBOX_URL"), "/"); u != "" {
		return u
	}
	return DefaultURL
}

// Options are what a session is created with besides the run's label and the frozen clock.
type Options struct {
	// Seed makes the session's ids reproducible: two sessions with one seed answer the same requests with the
	// same ids (docs/sessions.md#ids). Without it the session's ids are its own: no other session has them.
	Seed string
	// WebhookURL starts a receiver and gives its URL as the session's webhookUrl: the emulator posts to it
	// directly. Without it, Listen carries the webhooks (when the emulator cannot reach the test, too).
	WebhookURL bool
}

// New creates a session for the test, labelled with the run's label; t.Cleanup deletes it. Call it once per
// test (or more, for independent sandboxes). For its webhooks, call Listen.
func New(t testing.TB) *Sandbox { return NewWith(t, Options{}) }

// NewWith is New with options.
func NewWith(t testing.TB, opts Options) *Sandbox {
	t.Helper()
	addr := server
	if addr == "" {
		addr = ServerURL()
	}
	sb := &Sandbox{t: t, server: addr}
	body := map[string]string{"clock": StartClock, "label": Label()}
	if opts.Seed != "" {
		body["seed"] = opts.Seed
	}
	if opts.WebhookURL {
		sb.Webhooks = newReceiver()
		t.Cleanup(sb.Webhooks.Close) // registered first, so it runs after the session is deleted
		body["webhookUrl"] = sb.Webhooks.URL()
	}
	res, err := createSession(sb.server, body)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(res.Body, sb); err != nil {
		t.Fatalf("session answer %s: %v", res.Body, err)
	}
	if sb.Webhooks != nil {
		sb.Webhooks.expect(sb.Credentials.Webhook)
	}
	t.Cleanup(sb.close)
	return sb
}

// Listen gives the session a verifying receiver (sb.Webhooks) reached through the CLI:
// `service-sandbox listen --forward-to <receiver> --url <server> --session <id>` runs until the test ends
// (docs/webhooks.md#listen). The emulator never connects to the receiver itself; deliveries go through the
// listener from the moment Listen returns.
func (s *Sandbox) Listen() *Receiver {
	s.t.Helper()
	if s.Webhooks != nil {
		s.t.Fatal("the session already has a receiver")
	}
	receiver := newReceiver()
	receiver.expect(s.Credentials.Webhook)
	s.t.Cleanup(receiver.Close) // runs after the listener stopped and the session was deleted
	listener, err := startListener(receiver.URL(), s.server, s.ID)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(listener.Stop) // runs first: Ctrl+C while the session still exists
	s.Webhooks = receiver
	return receiver
}

// LimitWait is how long createSession keeps asking while the emulator's session limit is reached.
var LimitWait = 2 * time.Minute

// createSession is POST /_emulator/sessions. At the emulator's session limit (429) it asks again after the
// answer's Retry-After (seconds until a slot is expected, docs/sessions.md#limits) for up to LimitWait, so a
// suite running more tests at once than --max-sessions still runs: another test's session ends soon.
func createSession(server string, fields map[string]string) (*Response, error) {
	body, _ := json.Marshal(fields)
	deadline := time.Now().Add(LimitWait)
	for {
		req, _ := http.NewRequest("POST", server+"/_emulator/sessions", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		res, err := do(admin(req))
		if err != nil {
			return nil, fmt.Errorf("cannot reach the emulator at %s (start it, or set SANDBOX_URL or SANDBOX_CLI): %w", server, err)
		}
		if res.Status == http.StatusCreated {
			return res, nil
		}
		if res.Status == http.StatusTooManyRequests && time.Now().Before(deadline) {
			wait, err := strconv.Atoi(res.Header.Get("Retry-After"))
			if err != nil || wait < 1 {
				wait = 1
			}
			time.Sleep(time.Duration(wait) * time.Second)
			continue
		}
		hint := ""
		if res.Status == http.StatusUnauthorized {
			hint = " (the emulator has --admin-token: set SANDBOX_ADMIN_TOKEN)"
		}
		return nil, fmt.Errorf("POST %s/_emulator/sessions answered %d: %s%s", server, res.Status, res.Body, hint)
	}
}

// close ends the session (DELETE /_emulator/sessions/{id}).
func (s *Sandbox) close() {
	req, _ := http.NewRequest("DELETE", s.server+"/_emulator/sessions/"+s.ID, nil)
	res, err := do(admin(req))
	if err != nil {
		s.t.Errorf("deleting session %s: %v", s.ID, err)
		return
	}
	// 404: the session had already ended (idle timeout); nothing left to clean.
	if res.Status != http.StatusNoContent && res.Status != http.StatusNotFound {
		s.t.Errorf("DELETE session %s answered %d: %s", s.ID, res.Status, res.Body)
	}
}

// Signed is an HMAC-signed call with the SINGLE_USER key (docs/authentication.md#hmac-headers-server-to-server).
// path is relative to BaseURL, e.g. "/v1/accounts?pageSize=5"; body "" sends none.
func (s *Sandbox) Signed(method, path, body string) *Response {
	s.t.Helper()
	return s.SignedWith(s.Credentials.Single.Key, method, path, body)
}

// SignedWith is Signed with another key (the MULTI_USER one needs an X-Service-User-Id: use Send).
func (s *Sandbox) SignedWith(key Key, method, path, body string) *Response {
	s.t.Helper()
	u, err := url.Parse(s.BaseURL + path)
	if err != nil {
		s.t.Fatal(err)
	}
	ts := strconv.FormatInt(time.Now().UnixMilli(), 10)
	h := http.Header{}
	h.Set("X-Service-Api-Key", key.APIKey)
	h.Set("X-Service-Timestamp", ts)
	h.Set("X-Service-Program-Id", s.Credentials.ProgrammeID)
	h.Set("X-Service-Signature", Sign(key.Secret, key.APIKey+ts+strings.ToUpper(method)+Target(u)+body))
	return s.Send(method, path, body, h)
}

// Send is a call under BaseURL with exactly the headers given (no signing): for testing refusals.
func (s *Sandbox) Send(method, path, body string, h http.Header) *Response {
	s.t.Helper()
	req, err := http.NewRequest(method, s.BaseURL+path, bodyReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	return res
}

// Target is the request target the server signs against: the path AS SENT, the session's /_sessions/ses_...
// prefix included, plus ?query exactly as sent (docs/authentication.md). It is what net/http puts on the wire.
func Target(u *url.URL) string {
	return u.RequestURI()
}

// Sign is the lower-case hex HMAC-SHA256 of message keyed with secret.
func Sign(secret, message string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(message))
	return hex.EncodeToString(mac.Sum(nil))
}

// Control is a control-plane call of this session, e.g. Control("POST", "/clock", `{"advanceMs":1000}`)
// (docs/control-plane.md).
func (s *Sandbox) Control(method, path, body string) *Response {
	s.t.Helper()
	req, err := http.NewRequest(method, s.BaseURL+"/_emulator"+path, bodyReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := do(admin(req))
	if err != nil {
		s.t.Fatal(err)
	}
	return res
}

// AdvanceClock moves this session's emulated clock on; jobs due by then (rail steps, retries) have run when
// it returns.
func (s *Sandbox) AdvanceClock(ms int64) {
	s.t.Helper()
	if res := s.Control("POST", "/clock", fmt.Sprintf(`{"advanceMs":%d}`, ms)); res.Status != http.StatusOK {
		s.t.Fatalf("advancing the clock answered %d: %s", res.Status, res.Body)
	}
}

// Settle is POST /_emulator/settle: it answers once every job due at the session's current time has run and
// every webhook delivery due has been attempted and answered (docs/control-plane.md#settle). The clock does not
// move. Use it instead of sleeping or polling for webhooks; it fails the test when the emulator says it did not
// settle within 10 s.
func (s *Sandbox) Settle() *Response {
	s.t.Helper()
	res := s.Control("POST", "/settle", `{"timeoutMs":10000}`)
	if res.Status != http.StatusOK || res.Get("settled") != true {
		s.t.Fatalf("settling answered %d: %s", res.Status, res.Body)
	}
	return res
}

// Webhook is the first verified delivery matching match, or a test failure. It does not wait: Settle first.
func (s *Sandbox) Webhook(match func(Webhook) bool) Webhook {
	s.t.Helper()
	if s.Webhooks == nil {
		s.t.Fatal("the session has no receiver: call Listen, or create it with Options{WebhookURL: true}")
	}
	w, ok := s.Webhooks.Find(match)
	if !ok {
		s.t.Fatalf("no matching webhook; received %s; rejected %d", s.Webhooks.summary(), len(s.Webhooks.Rejected()))
	}
	return w
}

// Response is an answer of the emulator, read whole.
type Response struct {
	Status int
	Body   []byte
	Header http.Header
}

func (r *Response) String() string { return fmt.Sprintf("%d %s", r.Status, r.Body) }

// Get reads a field of the JSON body by object keys and array indexes, e.g. Get("data", 0, "id"); nil when
// absent. Numbers come as json.Number.
func (r *Response) Get(path ...any) any { return get(decode(r.Body), path...) }

// Str is Get for a string field ("" when absent or not a string).
func (r *Response) Str(path ...any) string { s, _ := r.Get(path...).(string); return s }

// With --admin-token the control plane wants the token (docs/control-plane.md); SANDBOX_ADMIN_TOKEN carries it.
func admin(req *http.Request) *http.Request {
	if token := os.Getenv("SANDBOX_ADMIN_TOKEN"); token != "" {
		req.Header.Set("X-Admin-Token", token)
	}
	return req
}

func do(req *http.Request) (*Response, error) {
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	return &Response{Status: res.StatusCode, Body: body, Header: res.Header}, nil
}

func bodyReader(body string) io.Reader {
	if body == "" {
		return nil
	}
	return strings.NewReader(body)
}

func decode(raw []byte) any {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil
	}
	return v
}

func get(node any, path ...any) any {
	for _, key := range path {
		switch k := key.(type) {
		case int:
			list, ok := node.([]any)
			if !ok || k < 0 || k >= len(list) {
				return nil
			}
			node = list[k]
		case string:
			m, ok := node.(map[string]any)
			if !ok {
				return nil
			}
			node = m[k]
		default:
			return nil
		}
	}
	return node
}
