package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultURL is where the emulator listens unless told otherwise.
const DefaultURL = "http://127.0.0.1:4010"

// Server is an emulator process: its root sandbox (Client, signed with the default credentials) and its
// sessions (docs/sessions.md).
type Server struct {
	*Client
	// LimitWait is how long CreateSession keeps asking while the server's session limit is reached (429).
	LimitWait time.Duration

	mu   sync.Mutex
	live map[string]bool // the sessions CreateSession made that were not ended through this Server
}

// NewServer is the emulator at url (e.g. DefaultURL).
func NewServer(url string) *Server {
	return &Server{Client: NewClient(url, DefaultCredentials()), LimitWait: 2 * time.Minute}
}

// Health is GET /_emulator/health (status, the emulated clock's now, the server's version). The first answer
// of a server is also its version check (docs/clients.md#go-defaults).
func (s *Server) Health(ctx context.Context) (Health, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	health, err := s.fetchHealth(ctx, s.BaseURL)
	if err == nil {
		noteVersion(s.BaseURL, health)
	}
	return health, err
}

// Healthy says whether GET /_emulator/health answers 200 within 2 s.
func (s *Server) Healthy(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := s.Health(ctx)
	return err == nil
}

// DefaultClock is the instant a session starts frozen at unless SessionOptions.Clock (or a snapshot) says
// otherwise, the same in every kit, so dates in answers do not depend on the day a suite runs
// (docs/clients.md#go-defaults).
const DefaultClock = "2026-03-01T12:00:00.000Z"

// SessionOptions are what a session starts from (docs/sessions.md#what-a-session-starts-from); all optional.
type SessionOptions struct {
	Label      string // names the run's sessions, to end them together (EndLabel)
	Seed       string // the session's ids follow this seed: the same seed and requests give the same answers
	Clock      string // "realtime" or an instant to start frozen at; "" is DefaultClock (or the snapshot's clock)
	Snapshot   string // a snapshot of the root sandbox to start from (not with Clock or Fixtures)
	WebhookURL string // where the session sends its webhooks (default: nowhere; see Receiver and ForwardWebhooks)
	Fixtures   any    // a fixtures object (docs/configuration.md#fixtures-file-format)
	// Scenario starts the session from a scenario (docs/sessions.md#scenarios): the name of one the server knows,
	// a scenario file's text (a string), or the scenario as a map or struct. Its seed, clock and fixtures apply and its
	// given is built before CreateSession returns (Session.Scenario says what it made); DefaultClock does not apply.
	Scenario any
	// ScenarioFile is the path of a scenario file (YAML or JSON), read here and sent as Scenario's text.
	ScenarioFile string
}

// Sandbox is a session: the server's description of it, and a Client on its baseUrl signed with its
// credentials. End it when done.
type Sandbox struct {
	*Client
	Session Session // as POST /_emulator/sessions answered
	ID      string
	server  *Server
}

// CreateSession is POST /_emulator/sessions, frozen at DefaultClock unless opts say otherwise. At the server's
// session limit (429) it asks again after the answer's Retry-After for up to LimitWait (docs/sessions.md#limits);
// cancelling ctx ends that wait at once.
func (s *Server) CreateSession(ctx context.Context, opts SessionOptions) (*Sandbox, error) {
	if opts.ScenarioFile != "" {
		if opts.Scenario != nil {
			return nil, fmt.Errorf("SessionOptions: give Scenario or ScenarioFile, not both")
		}
		text, err := os.ReadFile(opts.ScenarioFile)
		if err != nil {
			return nil, fmt.Errorf("reading the scenario file: %w", err)
		}
		opts.Scenario = string(text)
	}
	if opts.Clock == "" && opts.Snapshot == "" && opts.Scenario == nil {
		opts.Clock = DefaultClock
	}
	body := map[string]any{}
	for name, value := range map[string]string{"label": opts.Label, "seed": opts.Seed, "clock": opts.Clock, "snapshot": opts.Snapshot, "webhookUrl": opts.WebhookURL} {
		if value != "" {
			body[name] = value
		}
	}
	if opts.Fixtures != nil {
		body["fixtures"] = opts.Fixtures
	}
	if opts.Scenario != nil {
		body["scenario"] = opts.Scenario
	}
	deadline := time.Now().Add(s.LimitWait)
	for {
		res, err := s.Control(ctx, "POST", "/sessions", body)
		if err != nil {
			return nil, fmt.Errorf("cannot reach the emulator at %s: %w", s.BaseURL, err)
		}
		if res.Status == http.StatusTooManyRequests && time.Now().Before(deadline) {
			wait, err := strconv.Atoi(res.Header.Get("Retry-After"))
			if err != nil || wait < 1 {
				wait = 1
			}
			timer := time.NewTimer(time.Duration(wait) * time.Second) // the server's own figure for when a slot frees up
			select {
			case <-ctx.Done():
				timer.Stop()
				return nil, fmt.Errorf("waiting for a session slot at %s: %w", s.BaseURL, ctx.Err())
			case <-timer.C:
			}
			continue
		}
		var answer struct {
			Session
			Credentials Credentials `json:"credentials"`
		}
		if err := res.Expect(http.StatusCreated, &answer); err != nil {
			return nil, fmt.Errorf("POST %s/_emulator/sessions: %w", s.BaseURL, err)
		}
		json.Unmarshal(res.Body, &answer.Session)
		client := NewClient(answer.BaseURL, answer.Credentials)
		client.AdminToken, client.HTTP, client.Timeout = s.AdminToken, s.HTTP, s.Timeout
		s.mu.Lock()
		if s.live == nil {
			s.live = map[string]bool{}
		}
		s.live[answer.ID] = true
		s.mu.Unlock()
		return &Sandbox{Client: client, Session: answer.Session, ID: answer.ID, server: s}, nil
	}
}

// End deletes the session (DELETE /_emulator/sessions/{id}); a session already gone (idle timeout) is no error.
func (sb *Sandbox) End(ctx context.Context) error { return sb.server.EndSession(ctx, sb.ID) }

// EndSession deletes a session by id; 404 (already ended) is no error.
func (s *Server) EndSession(ctx context.Context, id string) error {
	res, err := s.Control(ctx, "DELETE", "/sessions/"+url.PathEscape(id), nil)
	if err != nil {
		return err
	}
	if res.Status != http.StatusNoContent && res.Status != http.StatusNotFound {
		return fmt.Errorf("DELETE session %s: %s", id, res)
	}
	s.forget(id)
	return nil
}

func (s *Server) forget(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		delete(s.live, id)
	}
}

// EndRemaining ends the sessions this Server created (CreateSession) and has not ended since (End, EndSession,
// EndLabel), and returns the ids of those that were still live. It is the end-of-run clean-up of
// sandboxtest.Main: unlike EndLabel it never touches a session of another process, even one with the same label
// (two CI shards of one job, say: docs/clients.md#go).
func (s *Server) EndRemaining(ctx context.Context) ([]string, error) {
	s.mu.Lock()
	ids := make([]string, 0, len(s.live))
	for id := range s.live {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	sort.Strings(ids)
	var ended []string
	for _, id := range ids {
		res, err := s.Control(ctx, "DELETE", "/sessions/"+url.PathEscape(id), nil)
		if err != nil {
			return ended, err
		}
		switch res.Status {
		case http.StatusNoContent:
			ended = append(ended, id)
		case http.StatusNotFound: // it idled out, or was ended from elsewhere
		default:
			return ended, fmt.Errorf("DELETE session %s: %s", id, res)
		}
		s.forget(id)
	}
	return ended, nil
}

// EndLabel ends every session with the label (docs/sessions.md#labels) and returns their ids.
func (s *Server) EndLabel(ctx context.Context, label string) ([]string, error) {
	res, err := s.Control(ctx, "DELETE", "/sessions?label="+url.QueryEscape(label), nil)
	if err != nil {
		return nil, err
	}
	var answer EndedSessions
	if err := res.Expect(http.StatusOK, &answer); err != nil {
		return nil, err
	}
	s.forget(answer.Ended...)
	return answer.Ended, nil
}

// Sessions lists the live sessions, those of label only when it is not "".
func (s *Server) Sessions(ctx context.Context, label string) ([]Session, error) {
	path := "/sessions"
	if label != "" {
		path += "?label=" + url.QueryEscape(label)
	}
	var answer struct{ Data []Session }
	res, err := s.Control(ctx, "GET", path, nil)
	if err != nil {
		return nil, err
	}
	return answer.Data, res.Expect(http.StatusOK, &answer)
}

// SessionPath is the /_sessions/ses_... prefix of a session's baseUrl: part of every signed target.
func (sb *Sandbox) SessionPath() string {
	u, err := url.Parse(sb.BaseURL)
	if err != nil {
		return ""
	}
	return strings.TrimRight(u.Path, "/")
}
