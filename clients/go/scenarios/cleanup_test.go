package scenarios_test

import (
	"fmt"
	"testing"
	"time"

	"service-sandbox.dev/go/sandbox"
	"service-sandbox.dev/go/sandboxtest"
)

// The end-of-run clean-up (sandboxtest.Main: Server.EndRemaining) ends what this process created and left open,
// never a live session of another run with the same label (docs/clients.md#go).
func TestTheEndOfRunCleanUpLeavesAnotherRunsSessionsWithTheSameLabel(t *testing.T) {
	t.Parallel()
	// This test's own label, even in runs that share SANDBOX_LABEL.
	label := fmt.Sprintf("%s-cleanup-%d", sandboxtest.Label(), time.Now().UnixNano())
	otherRun := sandbox.NewServer(sandboxtest.Server().BaseURL) // another test binary, same server, same label
	otherRun.AdminToken = sandboxtest.Server().AdminToken
	theirs, err := otherRun.CreateSession(ctx, sandbox.SessionOptions{Label: label})
	if err != nil {
		t.Fatal(err)
	}
	defer theirs.End(ctx)

	ours := sandbox.NewServer(sandboxtest.Server().BaseURL) // this run's server, as Main holds it
	ours.AdminToken = otherRun.AdminToken
	ended, err := ours.CreateSession(ctx, sandbox.SessionOptions{Label: label})
	if err != nil {
		t.Fatal(err)
	}
	left, err := ours.CreateSession(ctx, sandbox.SessionOptions{Label: label})
	if err != nil {
		t.Fatal(err)
	}
	if err := ended.End(ctx); err != nil {
		t.Fatal(err)
	}

	cleaned, err := ours.EndRemaining(ctx)
	if err != nil || len(cleaned) != 1 || cleaned[0] != left.ID {
		t.Fatalf("EndRemaining ended %v (%v), want only %s", cleaned, err, left.ID)
	}
	live, err := ours.Sessions(ctx, label)
	if err != nil || len(live) != 1 || live[0].ID != theirs.ID {
		t.Fatalf("live with the label: %+v (%v), want only the other run's %s", live, err, theirs.ID)
	}
	if again, err := ours.EndRemaining(ctx); err != nil || len(again) != 0 {
		t.Errorf("a second clean-up ended %v (%v)", again, err)
	}
}
