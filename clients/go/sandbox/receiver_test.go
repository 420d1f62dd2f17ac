package sandbox

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The receiver fed hostile requests over real sockets, rule by rule (docs/clients.md#receivers-one-rule-set).

var receiverKey = Key{APIKey: "wk_sandbox", Secret: "whsec_sandbox_secret"}

func eventBody(eventID string) string {
	return `{"transaction":{"id":"txn_1","status":"COMPLETED"},"metadata":{"eventId":"` + eventID + `","eventType":"transaction_status_updated"}}`
}

// rawRequest sends text as it is on a new connection and answers the status of the answer (0 when the receiver
// closed the connection without one).
func rawRequest(t *testing.T, url, text string) int {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(strings.TrimSuffix(url, ReceiverPath), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, text); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}

// delivery is a request for the receiver: signed for ReceiverPath with the key's secret at now, with the headers
// given last (each "Name: value" line sent as it is, so a header can come twice or with spaces around it).
func delivery(method, body string, signWith Key, headers ...string) string {
	ts := fmt.Sprint(time.Now().UnixMilli())
	sig := Sign(signWith.Secret, signWith.APIKey+ts+"POST"+ReceiverPath+body)
	lines := []string{
		method + " " + ReceiverPath + " HTTP/1.1", "Host: 127.0.0.1", "Connection: close",
		"Content-Length: " + fmt.Sprint(len(body)), "X-Service-Event-Type: transaction_status_updated",
	}
	given := map[string]bool{}
	for _, h := range headers {
		given[strings.ToLower(strings.SplitN(h, ":", 2)[0])] = true
	}
	for name, value := range map[string]string{"X-Service-Api-Key": signWith.APIKey, "X-Service-Timestamp": ts, "X-Service-Signature": sig} {
		if !given[strings.ToLower(name)] {
			lines = append(lines, name+": "+value)
		}
	}
	for _, h := range headers {
		lines = append(lines, strings.ReplaceAll(strings.ReplaceAll(h, "{ts}", ts), "{sig}", sig))
	}
	return strings.Join(lines, "\r\n") + "\r\n\r\n" + body
}

func TestReceiverFollowsTheRulesInTheirOrder(t *testing.T) {
	r, err := StartReceiver(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	other := Key{APIKey: "wk_other", Secret: receiverKey.Secret}
	cases := []struct {
		name    string
		request string
		status  int
		reason  WebhookReason
	}{
		{"no key given to the receiver yet", delivery("POST", eventBody("evt_0"), receiverKey), 401, ReasonUnknownKey},
		{"no headers at all, no key yet: MISSING_HEADER comes first",
			"POST /webhooks HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}", 401, ReasonMissingHeader},
	}
	for _, c := range cases {
		if got := rawRequest(t, r.URL(), c.request); got != c.status {
			t.Errorf("%s: %d, want %d", c.name, got, c.status)
		}
	}
	r.Expect(receiverKey)
	cases = []struct {
		name    string
		request string
		status  int
		reason  WebhookReason
	}{
		{"GET", delivery("GET", "", receiverKey), 401, ReasonMethod},
		{"PUT, genuinely signed", delivery("PUT", eventBody("evt_put"), receiverKey), 401, ReasonMethod},
		{"an empty signature", delivery("POST", eventBody("evt_1"), receiverKey, "X-Service-Signature: "), 401, ReasonMissingHeader},
		{"another X-Service-Api-Key with a valid HMAC", delivery("POST", eventBody("evt_1"), other), 401, ReasonUnknownKey},
		{"the timestamp sent twice, the same value", delivery("POST", eventBody("evt_1"), receiverKey, "X-Service-Timestamp: {ts}", "X-Service-Timestamp: {ts}"), 401, ReasonMalformedTimestamp},
		{"the signature sent twice, the first genuine", delivery("POST", eventBody("evt_1"), receiverKey, "X-Service-Signature: {sig}", "X-Service-Signature: {sig}"), 401, ReasonMalformedSignature},
		{"a signature over another body", delivery("POST", eventBody("evt_1"), receiverKey, "X-Service-Signature: "+strings.Repeat("ab", 32)), 401, ReasonSignatureMismatch},
		{"genuine, body not JSON", delivery("POST", "not json", receiverKey), 401, ReasonNotJSON},
		{"genuine, body a JSON array", delivery("POST", `[1,2]`, receiverKey), 401, ReasonNotJSON},
		{"genuine, eventId a number", delivery("POST", `{"metadata":{"eventId":7}}`, receiverKey), 401, ReasonNotJSON},
		{"genuine, eventId a list", delivery("POST", `{"metadata":{"eventId":["a"]}}`, receiverKey), 401, ReasonNotJSON},
		{"genuine, eventId empty", delivery("POST", `{"metadata":{"eventId":""}}`, receiverKey), 401, ReasonNotJSON},
		{"genuine, no metadata", delivery("POST", `{"transaction":{}}`, receiverKey), 401, ReasonNotJSON},
		{"genuine, metadata null", delivery("POST", `{"metadata":null}`, receiverKey), 401, ReasonNotJSON},
		{"genuine, metadata an array", delivery("POST", `{"metadata":["evt_1"]}`, receiverKey), 401, ReasonNotJSON},
		{"genuine, whitespace around the values", delivery("POST", eventBody("evt_1"), receiverKey, "X-Service-Timestamp: \t {ts} \t", "X-Service-Signature:   {sig}  "), 200, ""},
		{"genuine again: a duplicate, acknowledged", delivery("POST", eventBody("evt_1"), receiverKey), 200, ""},
		{"genuine, a field of another type than the model's: still an event", delivery("POST", `{"transaction":{"amount":5},"metadata":{"eventId":"evt_2"}}`, receiverKey), 200, ""},
	}
	var want []WebhookReason
	for _, c := range cases {
		if got := rawRequest(t, r.URL(), c.request); got != c.status {
			t.Errorf("%s: %d, want %d", c.name, got, c.status)
		}
		if c.reason != "" {
			want = append(want, c.reason)
		}
	}
	var got []WebhookReason
	for i, rejected := range r.Rejected() {
		if i >= 2 { // the two before Expect
			got = append(got, rejected.Reason)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rejected with %v\nwant %v", got, want)
	}
	if rejected := r.Rejected(); len(rejected) < 2 || rejected[0].Reason != ReasonUnknownKey || rejected[1].Reason != ReasonMissingHeader || string(rejected[0].Raw) != eventBody("evt_0") {
		t.Errorf("before Expect: %+v", rejected)
	}
	if events := r.Events(); len(events) != 2 || events[0].Metadata.EventID != "evt_1" || events[1].Metadata.EventID != "evt_2" {
		t.Errorf("events %+v", events)
	}
	if len(r.Duplicates()) != 1 {
		t.Errorf("duplicates %+v", r.Duplicates())
	}
}

func TestReceiverFraming(t *testing.T) {
	r, err := StartReceiver(&receiverKey)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	body := eventBody("evt_chunked")
	chunked := delivery("POST", body, receiverKey)
	chunked = strings.Replace(chunked, fmt.Sprintf("Content-Length: %d\r\n", len(body)), "Transfer-Encoding: chunked\r\n", 1)
	chunked = strings.TrimSuffix(chunked, body) + fmt.Sprintf("%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n", 10, body[:10], len(body)-10, body[10:])
	if got := rawRequest(t, r.URL(), chunked); got != 200 {
		t.Errorf("a genuine chunked delivery: %d", got)
	}
	for _, length := range []string{"abc", "-1", "1e3"} {
		request := strings.Replace(delivery("POST", body, receiverKey), fmt.Sprintf("Content-Length: %d", len(body)), "Content-Length: "+length, 1)
		if got := rawRequest(t, r.URL(), request); got != 400 {
			t.Errorf("Content-Length %s: %d, want 400", length, got)
		}
	}
	if events := r.Events(); len(events) != 1 || events[0].Metadata.EventID != "evt_chunked" || len(r.Rejected()) != 0 {
		t.Errorf("events %+v, rejected %+v", events, r.Rejected())
	}
}

// A sender that stops in the middle of its body is cut off after the idle timeout (here 50 ms: the test waits
// for the close, however long it takes, and asserts nothing about time).
func TestReceiverClosesAConnectionThatSendsNothing(t *testing.T) {
	r, err := startReceiver(&receiverKey, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for name, request := range map[string]string{
		"in its headers": "POST /webhooks HTTP/1.1\r\nHost: x\r\nX-Service-Api",
		"in its body":    "POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"metadata\"",
	} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(strings.TrimSuffix(r.URL(), ReceiverPath), "http://"))
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(conn, request)
		answer, err := io.ReadAll(conn) // returns when the receiver closes the connection
		conn.Close()
		if err != nil || (len(answer) > 0 && !strings.HasPrefix(string(answer), "HTTP/1.1 400") && !strings.HasPrefix(string(answer), "HTTP/1.1 408")) {
			t.Errorf("%s: %q %v", name, answer, err)
		}
	}
	if len(r.Rejected()) != 0 || len(r.Events()) != 0 {
		t.Errorf("rejected %+v, events %+v", r.Rejected(), r.Events())
	}
}
