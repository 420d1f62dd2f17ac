package recipe_test

import (
	"context"
	"os"
	"testing"

	"service-sandbox.dev/go/sandboxtest"
)

// One emulator for every test of the package: the one at SANDBOX_URL, or one started for the run.
func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// ctx is the context of the package's direct client calls: each call is bounded by the client's own per-call
// deadline (sandbox.DefaultTimeout); a test that wants a shorter one derives its own.
var ctx = context.Background()
