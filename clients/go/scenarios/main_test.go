// The kit's scenario suite (docs/clients.md#go): the behaviours every kit of service-sandbox checks in its own
// language (test/kits/go.test.ts runs it against one built server), each test in a session of its own, in
// parallel, waiting for webhooks with settle, never with a sleep.
package scenarios_test

import (
	"context"
	"os"
	"testing"

	"service-sandbox.dev/go/sandboxtest"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// ctx is the context of the package's direct client calls: each call is bounded by the client's own per-call
// deadline (sandbox.DefaultTimeout); a test that wants a shorter one derives its own.
var ctx = context.Background()
