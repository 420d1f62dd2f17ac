package recipe_test

import (
	"testing"

	"service-sandbox.dev/go/sandbox"
	"service-sandbox.dev/go/sandboxtest"
)

func transaction(t *testing.T, sb *sandboxtest.Sandbox, id string) sandbox.Transaction {
	t.Helper()
	var tx sandbox.Transaction
	sb.Do("GET", "/v1/transactions/"+id, nil).Expect(200, &tx)
	return tx
}

func balances(t *testing.T, sb *sandboxtest.Sandbox) sandbox.AccountDetailBalances {
	t.Helper()
	var account sandbox.AccountDetail
	sb.Do("GET", "/v1/accounts/acct_acme_usd", nil).Expect(200, &account)
	return account.Balances
}

func TestASimulatedDepositCompletesWhenTheClockMovesAndIsReportedByWebhook(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.New(t)
	webhooks := sb.Listen() // the kit forwards the session's webhooks to a verifying receiver (no CLI process)

	// docs/money-in.md#simulated-deposits: money arrives through one of the account's deposit instructions.
	id := sb.Do("POST", "/v1/sandbox/accounts/acct_acme_usd/deposits",
		sandbox.MockDepositRequest{DepositInstructionID: "di_acme_usd_ach", Amount: "125.00", Reference: sandbox.Ptr("INV-42")}).
		Expect(202, nil).LocationID() // Location: {session prefix}/v1/transactions/{id}
	if tx := transaction(t, sb, id); tx.Status != "PENDING" {
		t.Fatalf("new deposit: %+v", tx)
	}

	sb.AdvanceClock(1000) // the session's clock is frozen: the deposit completes when it moves past the rail's 1 s
	sb.Settle()           // every delivery due now has been answered by the receiver: no sleep, no polling

	if tx := transaction(t, sb, id); tx.Status != "COMPLETED" || *tx.CompletedAt != "2026-03-01T12:00:01.000Z" {
		t.Fatalf("after 1 s: %+v", tx)
	}
	if got := balances(t, sb).Current; got != "88187.80" {
		t.Errorf("current balance %s, want 88187.80", got)
	}
	sb.Webhook(func(e sandbox.Event) bool { return e.EventType == "transaction_created" && e.Transaction.ID == id })
	done := sb.Webhook(sandbox.Of(id, "COMPLETED"))
	if *done.Transaction.DebitReference != "INV-42" || len(webhooks.Rejected()) != 0 {
		t.Errorf("webhook %s; rejected %v", done.Raw, webhooks.Rejected())
	}
}

func TestAnInjectedWithdrawalWalksThroughItsStatuses(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.New(t)

	// docs/control-plane.md#transactions: the control plane writes any transaction through the ledger.
	var created sandbox.EmulatorTransaction
	res, err := sb.Control(ctx, "POST", "/accounts/acct_acme_usd/transactions",
		map[string]string{"type": "WITHDRAWAL", "direction": "OUTGOING", "debitAmount": "40.00"})
	if err != nil || res.Expect(201, &created) != nil || created.Status != "PENDING" {
		t.Fatal(res, err)
	}
	if got := balances(t, sb).Available; got != "88022.80" { // the debit is held at once
		t.Errorf("available %s, want 88022.80", got)
	}
	sb.AdvanceClock(1000)
	if got := transaction(t, sb, created.ID).Status; got != "PROCESSING" {
		t.Errorf("after 1 s: %s", got)
	}
	sb.AdvanceClock(3000)
	if got := transaction(t, sb, created.ID).Status; got != "COMPLETED" {
		t.Errorf("after 4 s: %s", got)
	}
}
