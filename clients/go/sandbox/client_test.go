package sandbox

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is an http.RoundTripper that answers every request with a canned body and keeps the deadline each
// request's context carried: the client's deadlines come from contexts, not from an http.Client Timeout.
type recorder struct {
	mu        sync.Mutex
	deadlines map[string]time.Time
	answers   map[string]string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	deadline, _ := req.Context().Deadline()
	r.deadlines[req.URL.Path] = deadline
	body := r.answers[req.URL.Path]
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

func TestASettleOfMoreThanAMinuteIsNotCutShortByTheClient(t *testing.T) {
	rec := &recorder{deadlines: map[string]time.Time{}, answers: map[string]string{
		"/_emulator/health": `{"status":"ok","now":"2026-03-01T12:00:00.000Z","version":"` + Version + `"}`,
		"/_emulator/settle": `{"settled":true,"now":"2026-03-01T12:00:00.000Z","waitedMs":0,"jobsRun":0,"waiting":{"jobs":0,"deliveries":0,"items":[]}}`,
		"/_emulator/clock":  `{"now":"2026-03-01T12:00:00.000Z","mode":"frozen","offsetMs":0}`,
	}}
	c := NewClient("http://sandbox.invalid", DefaultCredentials())
	c.HTTP = &http.Client{Transport: rec}
	before := time.Now()
	if _, err := c.Settle(context.Background(), 90*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Clock(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := rec.deadlines["/_emulator/settle"].Sub(before); d < 90*time.Second+DefaultTimeout {
		t.Errorf("the settle's deadline is %v away, less than its 90 s wait plus the call's own %v", d, DefaultTimeout)
	}
	if d := rec.deadlines["/_emulator/clock"].Sub(before); d < DefaultTimeout || d > 2*DefaultTimeout {
		t.Errorf("a plain call's deadline is %v away, want about %v", d, DefaultTimeout)
	}
	if DefaultHTTPClient.Timeout != 0 {
		t.Errorf("DefaultHTTPClient has a fixed Timeout of %v", DefaultHTTPClient.Timeout)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	want, _ := ctx.Deadline()
	if _, err := c.Settle(ctx, 90*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := rec.deadlines["/_emulator/settle"]; !got.Equal(want) {
		t.Errorf("the caller's deadline %v was replaced by %v", want, got)
	}
}

func TestSettleThatTimesOutMatchesErrNotSettled(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/_emulator/health" {
			io.WriteString(w, `{"status":"ok","now":"2026-03-01T12:00:00.000Z","version":"`+Version+`"}`)
			return
		}
		io.WriteString(w, `{"settled":false,"now":"2026-03-01T12:00:00.000Z","waitedMs":10,"jobsRun":0,"waiting":{"jobs":1,"deliveries":2,"items":[]}}`)
	}))
	defer server.Close()
	report, err := NewClient(server.URL, DefaultCredentials()).Settle(context.Background(), 10*time.Millisecond)
	var notSettled *NotSettledError
	if !errors.Is(err, ErrNotSettled) || !errors.As(err, &notSettled) || notSettled.Report.Waiting.Deliveries != 2 || report.Settled {
		t.Errorf("got %v, %+v", err, report)
	}
}

// docs/sessions.md#limits: at the session limit CreateSession waits for the server's Retry-After, and cancelling
// its context ends the wait.
func TestCreateSessionWaitingForASlotIsCancellable(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/_emulator/health" {
			io.WriteString(w, `{"status":"ok","now":"2026-03-01T12:00:00.000Z","version":"`+Version+`"}`)
			return
		}
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"errorCode":"TOO_MANY_REQUESTS","message":"session limit"}`)
		cancel() // the caller gives up while the client waits two minutes for a slot
	}))
	defer server.Close()
	_, err := NewServer(server.URL).CreateSession(ctx, SessionOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want the context's cancellation", err)
	}
}

// docs/clients.md#go-defaults: a session the kit creates is frozen at DefaultClock unless told otherwise.
func TestCreateSessionFreezesTheClockAtTheDefault(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/_emulator/health" {
			io.WriteString(w, `{"status":"ok","now":"2026-03-01T12:00:00.000Z","version":"`+Version+`"}`)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(raw))
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"ses_1","baseUrl":"http://x/_sessions/ses_1","credentials":{}}`)
	}))
	defer server.Close()
	s := NewServer(server.URL)
	for _, opts := range []SessionOptions{{}, {Clock: "realtime"}, {Snapshot: "base"}} {
		if _, err := s.CreateSession(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(bodies[0], `"clock":"2026-03-01T12:00:00.000Z"`) || !strings.Contains(bodies[1], `"clock":"realtime"`) || strings.Contains(bodies[2], "clock") {
		t.Errorf("bodies %v", bodies)
	}
}

// docs/sessions.md#scenarios: a scenario by name, by file (read by the kit and sent as text) or as a map goes in the
// body as scenario, and the kit's default clock is not sent (the scenario's own clock applies).
func TestCreateSessionSendsTheScenario(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/_emulator/health" {
			io.WriteString(w, `{"status":"ok","now":"2026-03-01T12:00:00.000Z","version":"`+Version+`"}`)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(raw))
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"ses_1","baseUrl":"http://x/_sessions/ses_1","credentials":{},"scenario":{"name":"demo","source":"shipped","steps":17,"given":{}}}`)
	}))
	defer server.Close()
	file := filepath.Join(t.TempDir(), "story.yaml")
	if err := os.WriteFile(file, []byte("name: story\nsteps:\n  - advance: 1s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := NewServer(server.URL)
	for _, opts := range []SessionOptions{{Scenario: "demo"}, {ScenarioFile: file}, {Scenario: map[string]any{"name": "inline", "steps": []any{map[string]any{"settle": true}}}}} {
		if _, err := s.CreateSession(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(bodies[0], `"scenario":"demo"`) || !strings.Contains(bodies[1], `"scenario":"name: story\n`) || !strings.Contains(bodies[2], `"scenario":{"name":"inline"`) {
		t.Errorf("bodies %v", bodies)
	}
	for _, body := range bodies {
		if strings.Contains(body, "clock") {
			t.Errorf("a scenario's session got the default clock: %s", body)
		}
	}
	if _, err := s.CreateSession(context.Background(), SessionOptions{Scenario: "demo", ScenarioFile: file}); err == nil {
		t.Error("Scenario and ScenarioFile together were accepted")
	}
}

// docs/clients.md#go-defaults: one warning per server whose version is not the kit's, however many calls and
// clients (a session's included) talk to it; none for a server of the same version.
func TestAVersionMismatchIsLoggedOncePerServer(t *testing.T) {
	var out bytes.Buffer
	var mu sync.Mutex
	warnings.SetOutput(writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return out.Write(p) }))
	defer warnings.SetOutput(io.Discard)
	serve := func(version string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/_emulator/health" {
				io.WriteString(w, `{"status":"ok","now":"2026-03-01T12:00:00.000Z","version":"`+version+`"}`)
				return
			}
			io.WriteString(w, `{"now":"2026-03-01T12:00:00.000Z","mode":"frozen","offsetMs":0}`)
		}))
	}
	older, same := serve("0.1.0"), serve(Version)
	defer older.Close()
	defer same.Close()
	var wg sync.WaitGroup
	for _, base := range []string{older.URL, older.URL, older.URL + "/_sessions/ses_1", same.URL} {
		for i := 0; i < 3; i++ {
			wg.Add(1)
			go func(base string) {
				defer wg.Done()
				if _, err := NewClient(base, DefaultCredentials()).Clock(context.Background()); err != nil {
					t.Error(err)
				}
			}(base)
		}
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Count(out.String(), "\n"); got != 1 || !strings.Contains(out.String(), older.URL) || !strings.Contains(out.String(), `"0.1.0"`) || !strings.Contains(out.String(), `"`+Version+`"`) {
		t.Errorf("warnings:\n%s", out.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestMain(m *testing.M) {
	warnings.SetOutput(io.Discard) // test servers of other versions: only the warning's own test reads it
	m.Run()
}
