// The kit's scenario suite (docs/clients.md#go): the behaviours every kit of service-sandbox checks in its own
// language (test/kits/go.test.ts runs it against one built server), each test in a session of its own, in
// parallel, waiting for webhooks with settle, never with a sleep.
package scenarios_test

import (
	"os"
	"testing"

	"service-sandbox.dev/go/sandboxtest"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }
