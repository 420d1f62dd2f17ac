// Package sandbox is a client of service-sandbox (docs/clients.md#go): signed API calls (both HMAC variants),
// sessions with labels and seeds, settle, the control plane (clock, snapshots, faults, webhook chaos, the
// delivery log), webhook verification and a receiver that verifies and deduplicates, with the resources and
// the error body as structs generated from openapi/openapi.json (models_gen.go). Standard library only.
//
//	server := sandbox.NewServer("http://127.0.0.1:4010")
//	sb, err := server.CreateSession(ctx, sandbox.SessionOptions{Label: "ci-4711"})
//	res, err := sb.Call(ctx, "GET", "/v1/accounts/acct_acme_usd", nil)
//	var account sandbox.AccountDetail
//	err = res.Decode(&account)
//
// Every call that does I/O takes a context.Context first: its deadline (or, without one, the Client's Timeout)
// bounds the call, and cancelling it ends the call. For tests, package sandboxtest gives each testing.T a
// session of its own.
package sandbox

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Version is the kit's version: the server's it was made for. The first call to a server compares it with
// GET /_emulator/health's version and logs one warning when they differ (docs/clients.md#go-defaults).
const Version = "0.2.0"

// DefaultHTTPClient is shared by every Client without one of its own: it pools connections across tests. It has
// no Timeout of its own: each call's deadline comes from its context (see Client.Timeout), so a settle of a
// minute or a forwarding stream that stays open are not cut short.
var DefaultHTTPClient = &http.Client{}

// DefaultTimeout bounds a call whose context has no deadline, when the Client's Timeout is 0.
const DefaultTimeout = 60 * time.Second

// Client calls one sandbox: the root one (BaseURL the server's address) or a session (BaseURL its baseUrl).
// API calls are signed with Credentials; control-plane calls carry AdminToken when set. Safe for concurrent use.
type Client struct {
	BaseURL     string
	Credentials Credentials
	AdminToken  string           // sent as Authorization: Bearer on the control plane (a server started with --admin-token)
	HTTP        *http.Client     // nil: DefaultHTTPClient
	Now         func() time.Time // the signing clock; nil: time.Now (signatures use the real clock, docs/authentication.md)
	// Timeout bounds each call whose context has no deadline (0: DefaultTimeout). Settle adds its own wait to it.
	Timeout time.Duration
}

// NewClient is a client of the sandbox at baseURL signing with creds.
func NewClient(baseURL string, creds Credentials) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), Credentials: creds}
}

// Response is an answer, read whole. A 4xx or 5xx is an answer, not an error: see Err and Expect.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r *Response) String() string { return fmt.Sprintf("%d %s", r.Status, r.Body) }

// Decode unmarshals the JSON body into v.
func (r *Response) Decode(v any) error {
	if err := json.Unmarshal(r.Body, v); err != nil {
		return fmt.Errorf("decoding %d %s: %w", r.Status, truncate(r.Body), err)
	}
	return nil
}

// Err is an *APIError for a status of 400 or more, else nil.
func (r *Response) Err() error {
	if r.Status < 400 {
		return nil
	}
	e := &APIError{Status: r.Status, Raw: r.Body}
	json.Unmarshal(r.Body, &e.Body)
	return e
}

// Expect decodes the body into v (when v is not nil) if the status is want; otherwise it returns an error
// (an *APIError for an error answer).
func (r *Response) Expect(want int, v any) error {
	if r.Status != want {
		if err := r.Err(); err != nil {
			return fmt.Errorf("want %d: %w", want, err)
		}
		return fmt.Errorf("want %d, got %s", want, r)
	}
	if v == nil {
		return nil
	}
	return r.Decode(v)
}

// Get reads a field of the JSON body by object keys and array indexes, e.g. Get("data", 0, "id"); nil when
// absent. Numbers come as json.Number.
func (r *Response) Get(path ...any) any { return Lookup(r.Body, path...) }

// Str is Get for a string ("" when absent or not a string).
func (r *Response) Str(path ...any) string { s, _ := r.Get(path...).(string); return s }

// LocationID is the last segment of the Location header, e.g. the transaction id of a deposit's 202.
func (r *Response) LocationID() string {
	l := r.Header.Get("Location")
	return l[strings.LastIndex(l, "/")+1:]
}

// APIError is an error answer with its body, the ServiceError of interface 7.1 (docs/errors.md).
type APIError struct {
	Status int
	Body   ServiceError
	Raw    []byte
}

func (e *APIError) Error() string {
	code := ""
	if e.Body.ErrorCode != nil {
		code = " " + *e.Body.ErrorCode
	}
	return fmt.Sprintf("%d%s: %s", e.Status, code, truncate(e.Raw))
}

// Option changes one call.
type Option func(*call)

type call struct {
	key      *Key
	userID   string
	header   http.Header
	unsigned bool
}

// AsUser signs with the MULTI_USER key and acts for userID (X-Service-User-Id, docs/authentication.md).
func AsUser(userID string) Option {
	return func(c *call) { c.userID = userID }
}

// WithKey signs with another key, e.g. WithKey(creds.Multi) for programme-level calls (POST /v1/auth/users).
func WithKey(k Key) Option { return func(c *call) { c.key = &k } }

// WithHeader adds a header (set after signing: an unsigned header such as Idempotency-Key).
func WithHeader(name, value string) Option {
	return func(c *call) { c.header.Set(name, value) }
}

// IdempotencyKey sets the Idempotency-Key header (the payout endpoint, docs/payouts.md#rules).
func IdempotencyKey(k string) Option { return WithHeader("Idempotency-Key", k) }

// Unsigned sends the call without signature headers (with WithHeader, exactly the headers given): for testing
// refusals.
func Unsigned() Option { return func(c *call) { c.unsigned = true } }

// Call is an API call under BaseURL, signed with the SINGLE_USER key unless an option says otherwise. path is
// e.g. "/v1/accounts?pageSize=5"; body is nil (none), []byte or string (sent as they are), or anything else
// (sent as JSON). A target under /v1/payout-origination/ is signed with the payout variant and sent as
// text/plain (see Payout).
func (c *Client) Call(ctx context.Context, method, path string, body any, opts ...Option) (*Response, error) {
	o := call{header: http.Header{}}
	for _, opt := range opts {
		opt(&o)
	}
	raw, contentType, err := encodeBody(body)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(c.BaseURL + path)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytesReader(raw))
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(path, PayoutPrefix) && contentType != "" {
		contentType = "text/plain" // docs/payouts.md#rules: the Base64 body is text
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if !o.unsigned {
		key := c.Credentials.Single.Key
		if o.userID != "" {
			key = c.Credentials.Multi
			req.Header.Set("X-Service-User-Id", o.userID)
		}
		if o.key != nil {
			key = *o.key
		}
		// The target as net/http writes it on the request line (docs/sessions.md#addresses-and-signing).
		for name, values := range SignHeaders(key, c.Credentials.ProgrammeID, method, req.URL.RequestURI(), raw, c.now()) {
			req.Header[name] = values
		}
	}
	for name, values := range o.header {
		req.Header[name] = values
	}
	return c.do(req, c.timeout())
}

// Payout submits a payout message (docs/payouts.md): format "json" or "pacs008", payload the message (the JSON
// text or a PayoutJSONPayload, or the pacs.008 XML), Base64-encoded here and signed with the payout variant.
func (c *Client) Payout(ctx context.Context, format string, payload any, idempotencyKey string, opts ...Option) (*Response, error) {
	raw, _, err := encodeBody(payload)
	if err != nil {
		return nil, err
	}
	body := base64.StdEncoding.EncodeToString(raw)
	return c.Call(ctx, "POST", PayoutPrefix+format, body, append([]Option{IdempotencyKey(idempotencyKey)}, opts...)...)
}

// Control is a control-plane call of this sandbox: BaseURL + "/_emulator" + path (docs/control-plane.md).
func (c *Client) Control(ctx context.Context, method, path string, body any) (*Response, error) {
	return c.controlWithin(ctx, c.timeout(), method, path, body)
}

func (c *Client) controlWithin(ctx context.Context, timeout time.Duration, method, path string, body any) (*Response, error) {
	raw, contentType, err := encodeBody(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+"/_emulator"+path, bytesReader(raw))
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return c.do(c.admin(req), timeout)
}

// admin adds the admin token the way every kit sends it (docs/control-plane.md): control-plane requests carry
// no HMAC headers.
func (c *Client) admin(req *http.Request) *http.Request {
	if c.AdminToken != "" {
		req.Header.Set("Authorization", "Bearer "+c.AdminToken)
	}
	return req
}

func (c *Client) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return DefaultHTTPClient
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// do sends req, bounded by timeout unless its context has a deadline of its own, after checking the server's
// version once (checkVersion).
func (c *Client) do(req *http.Request, timeout time.Duration) (*Response, error) {
	ctx := req.Context()
	if _, ok := ctx.Deadline(); !ok && timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
		req = req.WithContext(ctx)
	}
	c.checkVersion(ctx)
	res, err := c.httpClient().Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: body}, nil
}

func encodeBody(body any) ([]byte, string, error) {
	switch b := body.(type) {
	case nil:
		return nil, "", nil
	case []byte:
		return b, "application/json", nil
	case string:
		return []byte(b), "application/json", nil
	case json.RawMessage:
		return b, "application/json", nil
	default:
		raw, err := json.Marshal(body)
		return raw, "application/json", err
	}
}

func bytesReader(raw []byte) io.Reader {
	if raw == nil {
		return nil
	}
	return bytes.NewReader(raw)
}

func truncate(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "..."
	}
	return string(b)
}

// Lookup reads a field of a JSON document by object keys (string) and array indexes (int); nil when absent.
// Numbers come as json.Number.
func Lookup(raw []byte, path ...any) any {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var node any
	if d.Decode(&node) != nil {
		return nil
	}
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

// Ptr is a pointer to v: for the optional fields of the generated structs, e.g. FaultMatch{Path: Ptr("/v1/**")}.
func Ptr[T any](v T) *T { return &v }
