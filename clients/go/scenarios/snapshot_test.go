package scenarios_test

import (
	"strconv"
	"testing"
	"time"

	"service-sandbox.dev/go/sandbox"
	"service-sandbox.dev/go/sandboxtest"
)

// docs/sessions.md#what-a-session-starts-from: a state built once (here: a completed deposit), saved, exported
// and uploaded to the server's root sandbox, is where new sessions start: each test from the same state, none
// seeing another's changes.
func TestASessionStartsFromASnapshot(t *testing.T) {
	t.Parallel()
	origin := sandboxtest.New(t)
	id := origin.Do("POST", "/v1/sandbox/accounts/acct_acme_usd/deposits",
		sandbox.MockDepositRequest{DepositInstructionID: "di_acme_usd_wire", Amount: "500.00"}).Expect(202, nil).LocationID()
	origin.AdvanceClock(1000)
	if _, err := origin.SaveSnapshot(ctx, "funded"); err != nil {
		t.Fatal(err)
	}
	file, err := origin.ExportSnapshot(ctx, "funded")
	if err != nil {
		t.Fatal(err)
	}
	// A root snapshot's name is the server's, shared by every test binary using it: the run's label makes it ours.
	name := sandboxtest.Label() + "-funded"
	if _, err := sandboxtest.Server().UploadSnapshot(ctx, name, file); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sandboxtest.Server().DeleteSnapshot(ctx, name); err != nil {
			t.Error(err)
		}
	})

	first := sandboxtest.NewWith(t, sandboxtest.Options{Snapshot: name})
	second := sandboxtest.NewWith(t, sandboxtest.Options{Snapshot: name})
	if first.Session.StartedFrom.Snapshot == nil || *first.Session.StartedFrom.Snapshot != name {
		t.Errorf("startedFrom: %+v", first.Session.StartedFrom)
	}
	for _, sb := range []*sandboxtest.Sandbox{first, second} {
		if tx := transaction(t, sb, id); tx.Status != "COMPLETED" {
			t.Errorf("the snapshot's deposit in %s: %s", sb.ID, tx.Status)
		}
		if got := account(t, sb, "acct_acme_usd").Balances.Current; got != "88562.80" {
			t.Errorf("balance in %s: %s, want 88562.80", sb.ID, got)
		}
		if clock, err := sb.Clock(ctx); err != nil || clock.Now != "2026-03-01T12:00:01.000Z" {
			t.Errorf("clock in %s: %+v %v", sb.ID, clock, err)
		}
	}

	// What one session does from there is its own.
	first.Do("POST", "/v1/sandbox/accounts/acct_acme_usd/deposits",
		sandbox.MockDepositRequest{DepositInstructionID: "di_acme_usd_ach", Amount: "1.00"}).Expect(202, nil)
	first.AdvanceClock(1000)
	if a, b := account(t, first, "acct_acme_usd").Balances.Current, account(t, second, "acct_acme_usd").Balances.Current; a != "88563.80" || b != "88562.80" {
		t.Errorf("balances after a deposit in the first: %s / %s", a, b)
	}
}

// docs/authentication.md: what the server refuses comes back as an *sandbox.APIError with the error body.
func TestABadSignatureIsRefusedWithTheErrorBody(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.New(t)
	res := sb.Do("GET", "/v1/accounts", nil, sandbox.Unsigned(),
		sandbox.WithHeader("X-Service-Api-Key", sb.Credentials.Single.APIKey),
		sandbox.WithHeader("X-Service-Timestamp", strconv.FormatInt(time.Now().UnixMilli(), 10)),
		sandbox.WithHeader("X-Service-Program-Id", sb.Credentials.ProgrammeID),
		sandbox.WithHeader("X-Service-Signature", "00"))
	apiErr, ok := res.Err().(*sandbox.APIError)
	if !ok || apiErr.Status != 401 || apiErr.Body.ErrorCode == nil || *apiErr.Body.ErrorCode != "UNAUTHORIZED" || apiErr.Body.Message == "" {
		t.Fatalf("answer: %v", res)
	}
	// The payout variant refuses the millisecond mode's headers.
	payload := sandbox.PayoutJSONPayload{EntityID: "acct_acme_usd", BeneficiaryID: "ben_globex", Amount: "1.00", Currency: "USD", Reference: "X-1"}
	signed := sandbox.SignHeaders(sb.Credentials.Single.Key, sb.Credentials.ProgrammeID, "GET", "/v1/accounts", nil, time.Now())
	var opts []sandbox.Option
	for name := range signed {
		opts = append(opts, sandbox.WithHeader(name, signed.Get(name)))
	}
	if res := sb.Must(sb.Payout(ctx, "json", payload, "wrong-variant-1", append(opts, sandbox.Unsigned())...)); res.Status != 401 {
		t.Errorf("a payout with the other variant's headers: %v", res)
	}
}
