package scenarios_test

import (
	"encoding/json"
	"net/url"
	"testing"

	"service-sandbox.dev/go/sandbox"
	"service-sandbox.dev/go/sandboxtest"
)

func withdrawals(t *testing.T, sb *sandboxtest.Sandbox) []sandbox.Transaction {
	t.Helper()
	var page struct{ Data []sandbox.Transaction }
	sb.Do("GET", "/v1/transactions?accountId=acct_acme_usd&pageSize=100", nil).Expect(200, &page)
	var out []sandbox.Transaction
	for _, tx := range page.Data {
		if tx.Type == "WITHDRAWAL" {
			out = append(out, tx)
		}
	}
	return out
}

// docs/faults.md#1-the-ambiguous-commit-retry-with-the-same-key-get-one-transaction: the server commits, the
// answer is lost (502); the retry with the same idempotency key gets the stored result: one transaction.
func TestAnAmbiguousCommitRetriedWithTheSameKeyGivesOneTransaction(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.New(t)
	before := len(withdrawals(t, sb))

	rule, err := sb.AddFault(ctx, sandbox.Fault{
		Match:  sandbox.FaultMatch{Method: sandbox.Ptr("POST"), Path: sandbox.Ptr("/v1/transaction-intents/*/commit")},
		Effect: sandbox.FaultEffectAmbiguous{Type: "ambiguous", Status: sandbox.Ptr[int64](502)},
		Times:  1,
	})
	if err != nil {
		t.Fatal(err)
	}

	credit, _ := json.Marshal(sandbox.CreateTransactionIntentRequestCreditBankAccount{InstrumentType: "BANK_ACCOUNT", BeneficiaryID: "ben_globex", InstrumentID: "bi_globex_usd"})
	key := "order-4711"
	var intent sandbox.TransactionIntent
	sb.Do("POST", "/v1/transaction-intents", sandbox.CreateTransactionIntentRequest{
		IdempotencyKey: key, DebitAccountID: sandbox.Ptr("acct_acme_usd"), Credit: credit, CreditAmount: sandbox.Ptr("100.00"),
	}).Expect(201, &intent)

	commit := sandbox.CommitTransactionIntentRequest{IdempotencyKey: key}
	lost := sb.Do("POST", "/v1/transaction-intents/"+intent.ID+"/commit", commit)
	apiErr, ok := lost.Err().(*sandbox.APIError)
	if !ok || apiErr.Status != 502 {
		t.Fatalf("the commit whose answer is lost: %v", lost)
	}
	var retried sandbox.TransactionIntent
	sb.Do("POST", "/v1/transaction-intents/"+intent.ID+"/commit", commit).Expect(200, &retried)
	if retried.Status != "COMMITTED" || retried.RelatedTransactionID == nil {
		t.Fatalf("the retried commit: %+v", retried)
	}
	// And again: still the stored result.
	var again sandbox.TransactionIntent
	sb.Do("POST", "/v1/transaction-intents/"+intent.ID+"/commit", commit).Expect(200, &again)
	if again.RelatedTransactionID == nil || *again.RelatedTransactionID != *retried.RelatedTransactionID {
		t.Errorf("a third commit gave %+v", again)
	}

	after := withdrawals(t, sb)
	if len(after) != before+1 || after[0].ID != *retried.RelatedTransactionID {
		t.Errorf("withdrawals: %d before, %d after; want one more, %s", before, len(after), *retried.RelatedTransactionID)
	}
	if rule, err = sb.FaultRule(ctx, rule.ID); err != nil || rule.Fired != 1 || rule.Active {
		t.Errorf("the rule after firing: %+v %v", rule, err)
	}
}

// The payout endpoint the same way (docs/faults.md: the Idempotency-Key replays the first 202 byte for byte).
func TestAnAmbiguousPayoutRetriedWithTheSameKeyGivesOneTransaction(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.New(t)
	before := len(withdrawals(t, sb))
	if _, err := sb.AddFault(ctx, sandbox.Fault{
		Match:  sandbox.FaultMatch{Method: sandbox.Ptr("POST"), Path: sandbox.Ptr("/v1/payout-origination/*")},
		Effect: sandbox.FaultEffectAmbiguous{Type: "ambiguous", Status: sandbox.Ptr[int64](504)},
		Times:  1,
	}); err != nil {
		t.Fatal(err)
	}
	payload := sandbox.PayoutJSONPayload{EntityID: "acct_acme_usd", BeneficiaryID: "ben_globex", Amount: "75.00", Currency: "USD", Reference: "INV-2002"}
	lost := sb.Must(sb.Payout(ctx, "json", payload, "acme-json-2002"))
	if lost.Status != 504 {
		t.Fatalf("the lost answer: %v", lost)
	}
	first := sb.Must(sb.Payout(ctx, "json", payload, "acme-json-2002")).Expect(202, nil)
	second := sb.Must(sb.Payout(ctx, "json", payload, "acme-json-2002")).Expect(202, nil)
	if string(first.Body) != string(second.Body) {
		t.Errorf("replays differ: %s / %s", first.Body, second.Body)
	}
	if after := withdrawals(t, sb); len(after) != before+1 || after[0].ID != first.Str("transactionId") {
		t.Errorf("withdrawals: %d before, %d after", before, len(after))
	}
}

// docs/faults.md#webhook-chaos: the first attempt is badly signed (the receiver refuses it and the emulator
// retries 5 s later), the first acknowledged one is sent twice. The receiver ends with each event exactly once.
func TestUnderWebhookChaosTheReceiverKeepsExactlyTheRightEvents(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.NewWith(t, sandboxtest.Options{WebhookURL: true})
	chaos, err := sb.SetWebhookChaos(ctx, map[string]any{
		"seed":         "go-kit",
		"badSignature": map[string]any{"times": 1},
		"duplicate":    map[string]any{"times": 1},
	})
	if err != nil || chaos.BadSignature == nil || chaos.Duplicate == nil {
		t.Fatalf("chaos settings: %+v %v", chaos, err)
	}

	id := sb.Do("POST", "/v1/sandbox/accounts/acct_acme_usd/deposits",
		sandbox.MockDepositRequest{DepositInstructionID: "di_acme_usd_ach", Amount: "40.00"}).Expect(202, nil).LocationID()
	sb.Settle() // the first attempt went out badly signed and was refused
	if got := len(sb.Webhooks.Rejected()); got != 1 || len(sb.Webhooks.Events()) != 0 {
		t.Fatalf("after the first attempt: %d rejected, %d events", got, len(sb.Webhooks.Events()))
	}

	sb.AdvanceClock(5000) // the retry falls due (and the deposit completes, at 1 s)
	sb.Settle()

	if got := statuses(sb.Webhooks, id); !equal(got, []string{"transaction_created:PENDING", "transaction_status_updated:COMPLETED"}) {
		t.Errorf("events of %s: %v", id, got)
	}
	dups := sb.Webhooks.Duplicates()
	if len(dups) != 1 || dups[0].Metadata.EventID != sb.Webhooks.Events()[0].Metadata.EventID {
		t.Errorf("duplicates: %d, want the created event's one copy", len(dups))
	}
	if got := len(sb.Webhooks.Rejected()); got != 1 {
		t.Errorf("%d rejected, want 1", got)
	}

	// The delivery log says what chaos did: the created event's attempts are refused, delivered, duplicated.
	log, err := sb.Deliveries(ctx, url.Values{"transactionId": {id}, "eventType": {"transaction_created"}})
	if err != nil || len(log.Data) != 1 {
		t.Fatalf("delivery log: %+v %v", log, err)
	}
	var kinds []string
	for _, a := range log.Data[0].Attempts {
		kind := string(a.Kind)
		for _, c := range a.Chaos {
			kind += "/" + string(c.Type)
		}
		kinds = append(kinds, kind)
	}
	if log.Data[0].Status != "DELIVERED" || !equal(kinds, []string{"SCHEDULED/badSignature", "SCHEDULED", "DUPLICATE/duplicate"}) {
		t.Errorf("the created event's delivery: %s %v", log.Data[0].Status, kinds)
	}
}

// SettleUntilIdle: a badly signed first attempt is refused; settling until idle moves the clock to its retry
// (and past the deposit's completion at 1 s), so both events arrive without the test knowing the schedule.
func TestSettleUntilIdleRunsTheRetrySchedule(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.NewWith(t, sandboxtest.Options{WebhookURL: true})
	if _, err := sb.SetWebhookChaos(ctx, map[string]any{"seed": "go-kit-idle", "badSignature": map[string]any{"times": 1}}); err != nil {
		t.Fatal(err)
	}
	id := sb.Do("POST", "/v1/sandbox/accounts/acct_acme_usd/deposits",
		sandbox.MockDepositRequest{DepositInstructionID: "di_acme_usd_ach", Amount: "41.00"}).Expect(202, nil).LocationID()

	report := sb.SettleUntilIdle()
	if report.Waiting.Deliveries != 0 || len(sb.Webhooks.Rejected()) != 1 {
		t.Fatalf("waiting %+v, rejected %d", report.Waiting, len(sb.Webhooks.Rejected()))
	}
	for _, status := range []string{"PENDING", "COMPLETED"} {
		if _, ok := sb.Webhooks.Find(sandbox.Of(id, status)); !ok {
			t.Errorf("no %s event of %s: %s", status, id, sandboxtest.Summary(sb.Webhooks.Events()))
		}
	}
}
