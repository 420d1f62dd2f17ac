package recipe_test

import (
	"encoding/json"
	"strings"
	"testing"

	"example.com/sandbox-recipe/sandboxtest"
)

func balance(t *testing.T, sb *sandboxtest.Sandbox, which string) string {
	t.Helper()
	res := sb.Signed("GET", "/v1/accounts/acct_acme_usd", "")
	if res.Status != 200 {
		t.Fatal(res)
	}
	return res.Str("balances", which)
}

func status(t *testing.T, sb *sandboxtest.Sandbox, id string) string {
	t.Helper()
	res := sb.Signed("GET", "/v1/transactions/"+id, "")
	if res.Status != 200 {
		t.Fatal(res)
	}
	return res.Str("status")
}

func completed(id string) func(sandboxtest.Webhook) bool {
	return func(w sandboxtest.Webhook) bool {
		return w.Str("transaction", "id") == id && w.Str("transaction", "status") == "COMPLETED"
	}
}

func TestASimulatedDepositCompletesWhenTheClockMovesAndIsReportedByWebhook(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.New(t)
	sb.Listen() // `service-sandbox listen` forwards the session's webhooks to sb.Webhooks

	// docs/money-in.md#simulated-deposits: money arrives through one of the account's deposit instructions.
	accepted := sb.Signed("POST", "/v1/sandbox/accounts/acct_acme_usd/deposits",
		`{"depositInstructionId":"di_acme_usd_ach","amount":"125.00","reference":"INV-42"}`)
	if accepted.Status != 202 {
		t.Fatal(accepted)
	}

	// The 202 points at the new transaction: Location: {session prefix}/v1/transactions/{id}.
	location := accepted.Header.Get("Location")
	id := location[strings.LastIndex(location, "/")+1:]
	list := sb.Signed("GET", "/v1/transactions?accountId=acct_acme_usd&pageSize=1", "")
	if list.Status != 200 || list.Str("data", 0, "id") != id || list.Str("data", 0, "status") != "PENDING" ||
		list.Str("data", 0, "debitReference") != "INV-42" {
		t.Fatal(location, list)
	}
	sb.Settle() // every delivery due now has been answered by the receiver: no sleep, no polling
	sb.Webhook(func(w sandboxtest.Webhook) bool {
		return w.EventType == "transaction_created" && w.Str("transaction", "id") == id
	})

	// The session's clock is frozen: the deposit completes when it is moved past the rail's 1 s.
	sb.AdvanceClock(1000)

	tx := sb.Signed("GET", "/v1/transactions/"+id, "")
	if tx.Str("status") != "COMPLETED" || tx.Str("completedAt") != "2026-03-01T12:00:01.000Z" {
		t.Fatal(tx)
	}
	if got := balance(t, sb, "current"); got != "88187.80" {
		t.Errorf("current balance %q, want 88187.80", got)
	}

	if settled := sb.Settle(); settled.Get("waiting", "deliveries") != json.Number("0") {
		t.Errorf("deliveries still waiting: %s", settled.Body)
	}
	done := sb.Webhook(completed(id))
	if done.EventType != "transaction_status_updated" || done.Str("transaction", "debitReference") != "INV-42" ||
		done.Str("metadata", "userId") != "usr_acme" {
		t.Errorf("webhook %s %s", done.EventType, done.RawBody)
	}
	if r := sb.Webhooks.Rejected(); len(r) != 0 {
		t.Errorf("rejected deliveries: %v", r)
	}
}

func TestAnInjectedWithdrawalFollowsTheRailTimeline(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.New(t)
	sb.Listen()

	// docs/control-plane.md#transactions: the control plane writes any transaction through the ledger.
	created := sb.Control("POST", "/accounts/acct_acme_usd/transactions",
		`{"type":"WITHDRAWAL","direction":"OUTGOING","debitAmount":"40.00"}`)
	if created.Status != 201 || created.Str("status") != "PENDING" {
		t.Fatal(created)
	}
	id := created.Str("id")
	// The debit is held at once (docs/money-in.md#balances).
	if got := balance(t, sb, "available"); got != "88022.80" {
		t.Errorf("available balance %q, want 88022.80", got)
	}

	sb.AdvanceClock(1000)
	if got := status(t, sb, id); got != "PROCESSING" {
		t.Errorf("after 1 s: %s, want PROCESSING", got)
	}
	sb.AdvanceClock(3000)
	if got := status(t, sb, id); got != "COMPLETED" {
		t.Errorf("after 4 s: %s, want COMPLETED", got)
	}
	if got := balance(t, sb, "current"); got != "88022.80" {
		t.Errorf("current balance %q, want 88022.80", got)
	}

	sb.Settle()
	sb.Webhook(completed(id))
	if r := sb.Webhooks.Rejected(); len(r) != 0 {
		t.Errorf("rejected deliveries: %v", r)
	}
}
