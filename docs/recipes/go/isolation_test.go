package recipe_test

import (
	"testing"

	"example.com/sandbox-recipe/sandboxtest"
)

func TestAnotherSessionSeesNoneOfThisSessionsChanges(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.New(t)
	sb.Listen()

	accepted := sb.Signed("POST", "/v1/sandbox/accounts/acct_acme_usd/deposits",
		`{"depositInstructionId":"di_acme_usd_wire","amount":"500.00","reference":"ISOLATION"}`)
	if accepted.Status != 202 {
		t.Fatal(accepted)
	}
	id := sb.Signed("GET", "/v1/transactions?accountId=acct_acme_usd&pageSize=1", "").Str("data", 0, "id")
	sb.AdvanceClock(1000)
	sb.Settle()
	sb.Webhook(completed(id))

	// A second session on the same emulator process, also deleted by t.Cleanup. Its receiver is the other way
	// to get webhooks: given as the session's webhookUrl, the emulator posts to it directly.
	other := sandboxtest.NewWith(t, sandboxtest.Options{WebhookURL: true})
	if other.BaseURL == sb.BaseURL {
		t.Fatalf("both sessions at %s", sb.BaseURL)
	}

	missing := other.Signed("GET", "/v1/transactions/"+id, "")
	if missing.Status != 404 || missing.Str("errorCode") != "NOT_FOUND" {
		t.Errorf("the other session reads %s: %v", id, missing)
	}
	if got := balance(t, other, "current"); got != "88062.80" {
		t.Errorf("the other session's balance %q, want the fixture 88062.80", got)
	}
	if got := balance(t, sb, "current"); got != "88562.80" {
		t.Errorf("this session's balance %q, want 88562.80", got)
	}

	// Each session has its own clock ...
	if got := other.Control("GET", "/clock", "").Str("now"); got != sandboxtest.StartClock {
		t.Errorf("the other session's clock %q", got)
	}
	if got := sb.Control("GET", "/clock", "").Str("now"); got != "2026-03-01T12:00:01.000Z" {
		t.Errorf("this session's clock %q", got)
	}
	// ... and its own webhooks: nothing of this session's deposit went to the other's receiver, which gets the
	// other session's own.
	other.Settle()
	if got := other.Webhooks.Received(); len(got) != 0 {
		t.Errorf("the other session received %d webhooks", len(got))
	}
	created := other.Control("POST", "/accounts/acct_acme_usd/transactions",
		`{"type":"DEPOSIT","direction":"INCOMING","creditAmount":"5.00"}`)
	if created.Status != 201 {
		t.Fatal(created)
	}
	other.Settle()
	other.Webhook(func(w sandboxtest.Webhook) bool { return w.Str("transaction", "id") == created.Str("id") })
}
