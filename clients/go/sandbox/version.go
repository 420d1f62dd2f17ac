package sandbox

import (
	"context"
	"encoding/json"
	"log"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// Health is GET /_emulator/health's answer (docs/control-plane.md#health-reset-and-clock).
type Health struct {
	Status  string `json:"status"`
	Now     string `json:"now"`
	Version string `json:"version"`
}

// warnings is where the version warning goes: one log line on stderr (a variable so the kit's own test can read it).
var warnings = log.New(os.Stderr, "service-sandbox: ", log.LstdFlags)

// versionChecks holds, per server URL, whether that server's version was read in this process: the warning is
// once per process and server (docs/clients.md#go-defaults), so this state is the process's, not a Client's.
var versionChecks sync.Map // server URL -> *versionCheck

type versionCheck struct {
	mu   sync.Mutex
	done bool
}

func checkOf(root string) *versionCheck {
	entry, _ := versionChecks.LoadOrStore(root, &versionCheck{})
	return entry.(*versionCheck)
}

// record notes the server's version; the caller holds mu.
func (check *versionCheck) record(root string, health Health) {
	check.done = true
	if health.Version != Version {
		warnings.Printf("the server at %s is version %q, this Go kit (service-sandbox.dev/go) is %q: use the same version for both (docs/clients.md#go-defaults)", root, health.Version, Version)
	}
}

// serverURL is the server's own address: a session's base URL without its /_sessions/{id} suffix.
func serverURL(base string) string {
	if i := strings.Index(base, "/_sessions/"); i >= 0 {
		return base[:i]
	}
	return base
}

// checkVersion reads the server's version the first time this process talks to it and warns once when it is
// not Version. A server that does not answer is asked again on the next call; the call itself goes on either way.
func (c *Client) checkVersion(ctx context.Context) {
	root := serverURL(c.BaseURL)
	check := checkOf(root)
	check.mu.Lock() // parallel first calls wait for the one health request instead of sending their own
	defer check.mu.Unlock()
	if check.done {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	health, err := c.fetchHealth(ctx, root)
	if err != nil {
		return
	}
	check.record(root, health)
}

// noteVersion records a health answer read elsewhere (Server.Health), warning as checkVersion does.
func noteVersion(root string, health Health) {
	check := checkOf(root)
	check.mu.Lock()
	defer check.mu.Unlock()
	if check.done {
		return
	}
	check.record(root, health)
}

func (c *Client) fetchHealth(ctx context.Context, root string) (Health, error) {
	var health Health
	req, err := http.NewRequestWithContext(ctx, "GET", root+"/_emulator/health", nil)
	if err != nil {
		return health, err
	}
	res, err := c.httpClient().Do(req)
	if err != nil {
		return health, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return health, &APIError{Status: res.StatusCode}
	}
	return health, json.NewDecoder(res.Body).Decode(&health)
}
