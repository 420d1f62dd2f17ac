package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// relay is an emulator's relay for one session, spoken over real HTTP (docs/webhooks.md#listen): the first
// stream hands one attempt over and then ends as a reset does; the second ends as a session's end does; after
// that the session answers 404.
type relay struct {
	t         *testing.T
	mu        sync.Mutex
	auth      []string
	results   []map[string]any
	streams   int
	reported  chan struct{}
	second    chan struct{}
	endSecond chan struct{}
}

func (r *relay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.auth = append(r.auth, req.Method+" "+req.URL.Path+" "+req.Header.Get("Authorization"))
	r.mu.Unlock()
	switch {
	case req.URL.Path == "/_emulator/health":
		io.WriteString(w, `{"status":"ok","now":"2026-03-01T12:00:00.000Z","version":"`+Version+`"}`)
	case req.URL.Path == "/_sessions/ses_1/_emulator/webhooks/listen/stream":
		r.mu.Lock()
		r.streams++
		n := r.streams
		r.mu.Unlock()
		if n > 2 {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"errorCode":"NOT_FOUND","message":"No session ses_1: it ended or idled out"}`)
			return
		}
		forwardTo := req.URL.Query().Get("forwardTo")
		w.Header().Set("Content-Type", "text/event-stream")
		flush := func(text string) { io.WriteString(w, text); w.(http.Flusher).Flush() }
		flush(fmt.Sprintf(": keep-alive\n\nevent: ready\ndata: {\"listenerId\":\"lst_%d\",\"forwardTo\":%q,\"endpoints\":1}\n\n", n, forwardTo))
		if n == 1 {
			attempt, _ := json.Marshal(map[string]any{
				"listenerId": "lst_1", "attemptId": "att_1", "deliveryId": "dlv_1", "url": forwardTo + "?case=query", "timeoutMs": 5000,
				"headers": map[string]string{"content-type": "application/json", "x-service-event-type": "transaction_created", "x-service-signature": "abc"},
				"body":    `{"amount":"10.00","name":"Zoë"}`,
			})
			flush("event: attempt\ndata: " + string(attempt) + "\n\n")
			<-r.reported
			flush("event: closed\ndata: {\"reason\":\"the sandbox was reset\",\"reconnect\":true}\n\n")
			return
		}
		close(r.second)
		<-r.endSecond
		flush("event: closed\ndata: {\"reason\":\"the sandbox closed\",\"reconnect\":true}\n\n")
	case req.URL.Path == "/_sessions/ses_1/_emulator/webhooks/listen/lst_1/results":
		var result map[string]any
		json.NewDecoder(req.Body).Decode(&result)
		r.mu.Lock()
		r.results = append(r.results, result)
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		close(r.reported)
	default:
		r.t.Errorf("unexpected %s %s", req.Method, req.URL)
		w.WriteHeader(http.StatusNotFound)
	}
}

func TestForwarderRelaysAttemptsKeepsTheAdminTokenReconnectsAndStopsWhenTheSessionIsGone(t *testing.T) {
	delay := ForwardReconnectDelay
	ForwardReconnectDelay = 0
	defer func() { ForwardReconnectDelay = delay }()

	var app struct {
		sync.Mutex
		header http.Header
		body   string
		query  string
	}
	appServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		raw, _ := io.ReadAll(req.Body)
		app.Lock()
		app.header, app.body, app.query = req.Header.Clone(), string(raw), req.URL.RawQuery
		app.Unlock()
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "queued")
	}))
	defer appServer.Close()
	r := &relay{t: t, reported: make(chan struct{}), second: make(chan struct{}), endSecond: make(chan struct{})}
	emulator := httptest.NewServer(r)
	defer emulator.Close()

	c := NewClient(emulator.URL+"/_sessions/ses_1", DefaultCredentials())
	c.AdminToken = "admin-secret"
	f, err := c.ForwardWebhooks(context.Background(), appServer.URL+"/hooks")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	if f.ListenerID() != "lst_1" {
		t.Errorf("listener %q", f.ListenerID())
	}

	<-r.second // the attempt was answered, the stream ended for a reset, and the forwarder connected again
	if err := f.Reconnected(context.Background(), "lst_1"); err != nil || f.ListenerID() != "lst_2" {
		t.Fatalf("after the reset: %v, listener %q", err, f.ListenerID())
	}
	app.Lock()
	if app.body != `{"amount":"10.00","name":"Zoë"}` || app.query != "case=query" || app.header.Get("X-Service-Event-Type") != "transaction_created" ||
		app.header.Get("X-Service-Signature") != "abc" || app.header.Get("Accept-Encoding") != "" || app.header.Get("User-Agent") != "" {
		t.Errorf("the app got %q?%s with %v", app.body, app.query, app.header)
	}
	app.Unlock()
	r.mu.Lock()
	result := r.results[0]
	if result["attemptId"] != "att_1" || result["status"] != float64(202) || result["responseBody"] != "queued" || result["latencyMs"] == nil {
		t.Errorf("the reported result %v", result)
	}
	r.mu.Unlock()

	close(r.endSecond) // the session ends: its stream closes and the session no longer answers
	<-f.Done()
	if err := f.Err(); !errors.Is(err, ErrSessionGone) || !strings.Contains(err.Error(), "No session ses_1") {
		t.Errorf("the forwarder ended with %v", err)
	}
	if err := f.Reconnected(context.Background(), "lst_2"); !errors.Is(err, ErrSessionGone) {
		t.Errorf("Reconnected after the end: %v", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, line := range r.auth {
		if !strings.HasPrefix(line, "GET /_emulator/health") && !strings.HasSuffix(line, " Bearer admin-secret") {
			t.Errorf("without the admin token: %s", line)
		}
	}
	if r.streams != 3 {
		t.Errorf("%d stream requests, want 3 (the first, after the reset, after the session closed)", r.streams)
	}
}

func TestForwardWebhooksRefusesAURLThatIsNotHTTP(t *testing.T) {
	for _, bad := range []string{"", "127.0.0.1:3000/hooks", "ftp://x/hooks"} {
		if _, err := NewClient("http://127.0.0.1:1", DefaultCredentials()).ForwardWebhooks(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "http://") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// A stream that never says ready does not hold ForwardWebhooks: the handshake has the client's Timeout.
func TestForwardWebhooksGivesUpOnAStreamThatIsNeverReady(t *testing.T) {
	release := make(chan struct{})
	emulator := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/_emulator/health" {
			io.WriteString(w, `{"status":"ok","now":"2026-03-01T12:00:00.000Z","version":"`+Version+`"}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, ": keep-alive\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-req.Context().Done():
		}
	}))
	defer emulator.Close()
	defer close(release)
	c := NewClient(emulator.URL, DefaultCredentials())
	c.Timeout = 50 * time.Millisecond
	f, err := c.ForwardWebhooks(context.Background(), "http://127.0.0.1:1/hooks")
	if err == nil {
		f.Stop()
		t.Fatal("ForwardWebhooks answered without a ready event")
	}
	if !strings.Contains(err.Error(), "was not ready within 50ms") {
		t.Errorf("the error: %v", err)
	}
}

// sendTo posts one attempt to url the way a forwarder does, with a generous attempt timeout: the cases below end
// long before it, or the test fails (it never waits for it to pass).
func sendTo(t *testing.T, url string) ListenAttemptResult {
	t.Helper()
	f := &Forwarder{forwardTo: url, sendTo: newAppClient()}
	return f.send(context.Background(), forwardedAttempt{AttemptID: "att_1", URL: url, Body: `{}`, TimeoutMs: 600_000})
}

// A redirect is the app's answer, a failed attempt, as with direct delivery (docs/webhooks.md#delivery-rules):
// the forwarder does not follow it.
func TestForwarderReportsARedirectAsTheAppsAnswer(t *testing.T) {
	followed := make(chan string, 4)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch req.URL.Path {
		case "/r302":
			http.Redirect(w, req, "/ok", http.StatusFound)
		case "/r307":
			http.Redirect(w, req, "/ok", http.StatusTemporaryRedirect)
		default:
			followed <- req.Method + " " + req.URL.Path
		}
	}))
	defer app.Close()
	for path, want := range map[string]float64{"/r302": 302, "/r307": 307} {
		result := sendTo(t, app.URL+path)
		if result.Status == nil || float64(*result.Status) != want || result.Error != nil {
			t.Errorf("%s: status %v, error %v", path, result.Status, result.Error)
		}
	}
	select {
	case got := <-followed:
		t.Errorf("the redirect was followed: %s", got)
	default:
	}
}

// An app that answers 200 and then stalls (a Content-Length it never completes, or a chunked body that never
// ends) is DELIVERED, as with direct delivery: the status is reported with what of the body came. (A forwarder
// that waits for the whole body never returns here, and the test fails by go test's timeout.)
func TestForwarderReportsTheStatusOfAnAnswerWhoseBodyStalls(t *testing.T) {
	wait := answerBodyWait
	answerBodyWait = 20 * time.Millisecond
	defer func() { answerBodyWait = wait }()
	release := make(chan struct{})
	defer close(release)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/length" {
			w.Header().Set("Content-Length", "1000")
		}
		io.WriteString(w, "0123456789")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-req.Context().Done():
		}
	}))
	defer app.Close()
	for _, path := range []string{"/length", "/chunked"} {
		result := sendTo(t, app.URL+path)
		if result.Status == nil || *result.Status != 200 || result.Error != nil || result.ResponseBody != nil && !strings.HasPrefix("0123456789", *result.ResponseBody) {
			t.Errorf("%s: status %v, body %v, error %v", path, result.Status, result.ResponseBody, result.Error)
		}
	}
}

// Of a large answer only the first 2 KiB are read, then the connection is closed: the app cannot write the rest.
func TestForwarderReadsAtMost2KiBOfTheAnswer(t *testing.T) {
	writeErr := make(chan error, 1)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(256<<20))
		chunk := []byte(strings.Repeat("x", 1<<16))
		var err error
		for written := 0; written < 256<<20 && err == nil; written += len(chunk) {
			_, err = w.Write(chunk)
		}
		writeErr <- err
	}))
	defer app.Close()
	result := sendTo(t, app.URL+"/big")
	if result.Status == nil || *result.Status != 200 || result.ResponseBody == nil || len(*result.ResponseBody) != 2048 {
		t.Errorf("status %v, error %v", result.Status, result.Error)
	}
	if err := <-writeErr; err == nil {
		t.Error("the app wrote all 256 MiB: the forwarder read the whole answer")
	}
}
