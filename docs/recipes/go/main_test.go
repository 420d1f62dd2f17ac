package recipe_test

import (
	"os"
	"testing"

	"service-sandbox.dev/go/sandboxtest"
)

// One emulator for every test of the package: the one at SANDBOX_URL, or one started for the run.
func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }
