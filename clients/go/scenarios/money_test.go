package scenarios_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"service-sandbox.dev/go/sandbox"
	"service-sandbox.dev/go/sandboxtest"
)

func account(t *testing.T, sb *sandboxtest.Sandbox, id string) sandbox.AccountDetail {
	t.Helper()
	var a sandbox.AccountDetail
	sb.Do("GET", "/v1/accounts/"+id, nil).Expect(200, &a)
	return a
}

func transaction(t *testing.T, sb *sandboxtest.Sandbox, id string) sandbox.Transaction {
	t.Helper()
	var tx sandbox.Transaction
	sb.Do("GET", "/v1/transactions/"+id, nil).Expect(200, &tx)
	return tx
}

// statuses is the transaction statuses the receiver got for one transaction, in arrival order.
func statuses(r *sandbox.Receiver, id string) []string {
	var got []string
	for _, e := range r.Events() {
		if e.Transaction.ID == id {
			got = append(got, e.EventType+":"+string(e.Transaction.Status))
		}
	}
	return got
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The payout's rail timeline (docs/money-out.md): created PENDING, PROCESSING after 1 s, COMPLETED 3 s later.
var payoutEvents = []string{"transaction_created:PENDING", "transaction_status_updated:PROCESSING", "transaction_status_updated:COMPLETED"}

// docs/money-in.md#simulated-deposits: a deposit completes when the clock moves, and its webhooks arrive
// through the kit's forwarding (Listen), verified, by the time settle answers.
func TestADepositSettlesAndIsReportedByVerifiedWebhooks(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.New(t)
	webhooks := sb.Listen()

	res := sb.Do("POST", "/v1/sandbox/accounts/acct_acme_usd/deposits",
		sandbox.MockDepositRequest{DepositInstructionID: "di_acme_usd_ach", Amount: "125.00", Reference: sandbox.Ptr("INV-42")}).Expect(202, nil)
	id := res.LocationID() // Location: {session prefix}/v1/transactions/{id}
	if tx := transaction(t, sb, id); tx.Status != "PENDING" || tx.CreditAmount != "125.00" {
		t.Fatalf("the new deposit: %+v", tx)
	}

	sb.AdvanceClock(1000) // the ACH deposit completes after 1 s of emulated time
	report := sb.Settle() // its webhooks have been answered by the receiver: no sleep, no poll
	if report.Waiting.Deliveries != 0 {
		t.Errorf("deliveries still waiting: %+v", report.Waiting)
	}
	if tx := transaction(t, sb, id); tx.Status != "COMPLETED" || tx.CompletedAt == nil || *tx.CompletedAt != "2026-03-01T12:00:01.000Z" {
		t.Fatalf("the deposit after 1 s: %+v", tx)
	}
	if got := account(t, sb, "acct_acme_usd").Balances.Current; got != "88187.80" {
		t.Errorf("balance %s, want 88062.80 + 125.00", got)
	}
	if got := statuses(webhooks, id); !equal(got, []string{"transaction_created:PENDING", "transaction_status_updated:COMPLETED"}) {
		t.Errorf("webhooks of %s: %v", id, got)
	}
	done := sb.Webhook(sandbox.Of(id, "COMPLETED"))
	if done.Metadata.UserID == nil || *done.Metadata.UserID != "usr_acme" || done.Transaction.DebitReference == nil || *done.Transaction.DebitReference != "INV-42" {
		t.Errorf("the COMPLETED event: %s", done.Raw)
	}
	if len(webhooks.Rejected()) != 0 || len(webhooks.Duplicates()) != 0 {
		t.Errorf("rejected %v, duplicates %d", webhooks.Rejected(), len(webhooks.Duplicates()))
	}
}

// docs/payouts.md: a JSON payout, signed with the payout variant by the client, runs to COMPLETED; the session
// posts its webhooks straight to the test's receiver (webhookUrl).
func TestAPayoutByJSONCompletesWithVerifiedWebhooks(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.NewWith(t, sandboxtest.Options{WebhookURL: true})

	payload := sandbox.PayoutJSONPayload{EntityID: "acct_acme_usd", BeneficiaryID: "ben_globex", Amount: "250.00", Currency: "USD", Reference: "INV-1001"}
	var accepted sandbox.PayoutSubmissionResponse
	sb.Must(sb.Payout(ctx, "json", payload, "acme-json-0001")).Expect(202, &accepted)
	if accepted.Status != "RECEIVED" || accepted.TransactionID == "" {
		t.Fatalf("payout answer %+v", accepted)
	}

	sb.AdvanceClock(4000)
	sb.Settle()
	tx := transaction(t, sb, accepted.TransactionID)
	if tx.Type != "WITHDRAWAL" || tx.Status != "COMPLETED" || tx.CreditAmount != "250.00" || tx.DebitMemo == nil || *tx.DebitMemo != "INV-1001" {
		t.Fatalf("the payout's transaction: %+v", tx)
	}
	if got := statuses(sb.Webhooks, tx.ID); !equal(got, payoutEvents) {
		t.Errorf("webhooks of %s: %v", tx.ID, got)
	}
	if len(sb.Webhooks.Rejected()) != 0 {
		t.Errorf("rejected: %v", sb.Webhooks.Rejected())
	}
}

// docs/payouts.md#the-pacs008-payload-iso-20022: the Fedwire-style pacs.008 of the repository's test fixtures,
// from Acme's USD account (by its account number) to Globex, over the wire rail.
func TestAPayoutByPacs008CompletesWithVerifiedWebhooks(t *testing.T) {
	t.Parallel()
	_, here, _, _ := runtime.Caller(0)
	xml, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "..", "..", "test", "fixtures", "pacs008", "fedwire.xml"))
	if err != nil {
		t.Fatal(err)
	}
	sb := sandboxtest.New(t)
	webhooks := sb.Listen()

	var accepted sandbox.PayoutSubmissionResponse
	sb.Must(sb.Payout(ctx, "pacs008", xml, "acme-wire-0018")).Expect(202, &accepted)
	if accepted.MessageID != "20260301SBXFW0000018" {
		t.Errorf("messageId %q", accepted.MessageID)
	}
	tx := transaction(t, sb, accepted.TransactionID)
	if tx.CreditRail == nil || *tx.CreditRail != "US.USD.FEDWIRE" || tx.CreditAmount != "25000.00" || tx.ExternalID == nil || *tx.ExternalID != "ACME-WIRE-0018" {
		t.Fatalf("the pacs.008's transaction: %+v", tx)
	}

	sb.AdvanceClock(4000)
	sb.Settle()
	if tx = transaction(t, sb, tx.ID); tx.Status != "COMPLETED" {
		t.Fatalf("after 4 s: %s", tx.Status)
	}
	if got := statuses(webhooks, tx.ID); !equal(got, payoutEvents) {
		t.Errorf("webhooks of %s: %v", tx.ID, got)
	}
	for _, e := range webhooks.Events() {
		if string(e.Metadata.EventType) != e.EventType || e.Metadata.ProgramID != sb.Credentials.ProgrammeID {
			t.Errorf("event %s: header %s, metadata %+v", e.Metadata.EventID, e.EventType, e.Metadata)
		}
	}
}
