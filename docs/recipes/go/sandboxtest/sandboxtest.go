// Package sandboxtest gives each Go test its own service-sandbox session: an isolated sandbox (own data,
// clock and webhooks) inside one shared emulator process, so tests can run with t.Parallel().
//
//	func TestAccounts(t *testing.T) {
//		t.Parallel()
//		sb := sandboxtest.New(t) // deleted by t.Cleanup
//		res := sb.Signed("GET", "/v1/accounts", "")
//		if res.Status != 200 { t.Fatal(res) }
//	}
//
// The emulator is the one at SANDBOX_URL (default http://127.0.0.1:4010), or, with Main in TestMain, one started
// for the run when nothing answers there.
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
	Webhooks    *Receiver   `json:"-"`

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

// New creates a session with its own webhook receiver for the test; t.Cleanup deletes both.
// Call it once per test (or twice, for two independent sandboxes).
func New(t testing.TB) *Sandbox {
	t.Helper()
	receiver := newReceiver()
	addr := server
	if addr == "" {
		addr = ServerURL()
	}
	sb := &Sandbox{t: t, server: addr, Webhooks: receiver}
	t.Cleanup(receiver.Close) // registered first, so it runs after the session is deleted
	res, err := createSession(sb.server, receiver.URL())
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(res.Body, sb); err != nil {
		t.Fatalf("session answer %s: %v", res.Body, err)
	}
	receiver.expect(sb.Credentials.Webhook)
	t.Cleanup(sb.close)
	return sb
}

// LimitWait is how long createSession keeps asking while the emulator's session limit is reached.
var LimitWait = 2 * time.Minute

// createSession is POST /_emulator/sessions: a fresh sandbox with the default fixtures, a frozen clock and its
// webhooks sent to webhookURL. At the emulator's session limit (429) it asks again every half second for up to
// LimitWait, so a suite running more tests at once than --max-sessions still runs: another test's session ends
// soon. (The 429's Retry-After is when an idle session would expire, up to 15 minutes, too long to wait for.)
func createSession(server, webhookURL string) (*Response, error) {
	body, _ := json.Marshal(map[string]string{"clock": StartClock, "webhookUrl": webhookURL})
	deadline := time.Now().Add(LimitWait)
	for {
		req, _ := http.NewRequest("POST", server+"/_emulator/sessions", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		res, err := do(admin(req))
		if err != nil {
			return nil, fmt.Errorf("cannot reach the emulator at %s (start it with `npx service-sandbox`, or set SANDBOX_URL): %w", server, err)
		}
		if res.Status == http.StatusCreated {
			return res, nil
		}
		if res.Status == http.StatusTooManyRequests && time.Now().Before(deadline) {
			time.Sleep(500 * time.Millisecond)
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

// AwaitWebhook waits up to timeout for a verified webhook matching match, and fails the test otherwise.
func (s *Sandbox) AwaitWebhook(match func(Webhook) bool, timeout time.Duration) Webhook {
	s.t.Helper()
	w, ok := s.Webhooks.Await(match, timeout)
	if !ok {
		s.t.Fatalf("no matching webhook within %v; received %s; rejected %d", timeout, s.Webhooks.summary(), len(s.Webhooks.Rejected()))
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
