package recipe_test

import (
	"testing"

	"service-sandbox.dev/go/sandbox"
	"service-sandbox.dev/go/sandboxtest"
)

func TestAnotherSessionSeesNoneOfThisSessionsChanges(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.New(t)
	sb.Listen()
	id := sb.Do("POST", "/v1/sandbox/accounts/acct_acme_usd/deposits",
		sandbox.MockDepositRequest{DepositInstructionID: "di_acme_usd_wire", Amount: "500.00"}).Expect(202, nil).LocationID()
	sb.AdvanceClock(1000)
	sb.Settle()
	sb.Webhook(sandbox.Of(id, "COMPLETED"))

	// A second session on the same server; its receiver is the session's webhookUrl (the other way to get
	// webhooks, for a server that can reach the test).
	other := sandboxtest.NewWith(t, sandboxtest.Options{WebhookURL: true})
	if res := other.Do("GET", "/v1/transactions/"+id, nil); res.Status != 404 {
		t.Errorf("the other session reads %s: %v", id, res)
	}
	if a, b := balances(t, sb).Current, balances(t, other).Current; a != "88562.80" || b != "88062.80" {
		t.Errorf("balances %s / %s", a, b)
	}
	if clock, _ := other.Clock(ctx); clock.Now != sandbox.DefaultClock {
		t.Errorf("the other session's clock %s", clock.Now)
	}
	other.Settle()
	if got := other.Webhooks.Events(); len(got) != 0 {
		t.Errorf("the other session received %d webhooks", len(got))
	}
}
