package scenarios_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"service-sandbox.dev/go/sandbox"
	"service-sandbox.dev/go/sandboxtest"
)

// paymentsApp is an application under test with a webhook endpoint of its own (/hooks/payments): it verifies
// each delivery with the kit's verifier and the session's webhook key, answers 401 to a bad one, and keeps the
// transaction statuses it learnt, once per event id (docs/webhooks.md#verifying-deliveries-in-your-app).
type paymentsApp struct {
	*httptest.Server
	verifier sandbox.WebhookVerifier
	mu       sync.Mutex
	seen     map[string]bool
	statuses map[string][]string // transaction id -> statuses in arrival order
	refused  []error
}

func startPaymentsApp(t *testing.T, key sandbox.Key) *paymentsApp {
	app := &paymentsApp{verifier: sandbox.WebhookVerifier{Key: key}, seen: map[string]bool{}, statuses: map[string][]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/hooks/payments", func(w http.ResponseWriter, r *http.Request) {
		raw, err := app.verifier.VerifyRequest(r)
		app.mu.Lock()
		defer app.mu.Unlock()
		if err != nil {
			app.refused = append(app.refused, err)
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var event sandbox.TransactionWebhookEvent
		if err := json.Unmarshal(raw, &event); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if !app.seen[event.Metadata.EventID] { // at least once: a repeat is acknowledged, not applied twice
			app.seen[event.Metadata.EventID] = true
			app.statuses[event.Transaction.ID] = append(app.statuses[event.Transaction.ID], string(event.Transaction.Status))
		}
		w.WriteHeader(http.StatusOK)
	})
	app.Server = httptest.NewServer(mux)
	t.Cleanup(app.Close)
	return app
}

func (app *paymentsApp) statusesOf(id string) []string {
	app.mu.Lock()
	defer app.mu.Unlock()
	return append([]string(nil), app.statuses[id]...)
}

// docs/clients.md#go-forwarding: several sessions in parallel, each forwarding its webhooks to its own app
// through the kit (no CLI process); each app gets its session's deposit, verified, and nothing of the others.
func TestForwardingCarriesEachSessionsWebhooksToItsOwnApp(t *testing.T) {
	t.Parallel()
	for i := 0; i < 4; i++ {
		i := i
		t.Run(fmt.Sprintf("session-%d", i), func(t *testing.T) {
			t.Parallel()
			sb := sandboxtest.New(t)
			app := startPaymentsApp(t, sb.Credentials.Webhook)
			sb.ForwardWebhooks(t, app.URL+"/hooks/payments")

			amount := fmt.Sprintf("%d.00", 100+i)
			id := sb.Do("POST", "/v1/sandbox/accounts/acct_acme_usd/deposits",
				sandbox.MockDepositRequest{DepositInstructionID: "di_acme_usd_ach", Amount: amount}).Expect(202, nil).LocationID()
			sb.AdvanceClock(1000)
			sb.Settle()

			if got := app.statusesOf(id); !equal(got, []string{"PENDING", "COMPLETED"}) {
				t.Errorf("the app learnt %v of %s", got, id)
			}
			app.mu.Lock()
			defer app.mu.Unlock()
			if len(app.statuses) != 1 || len(app.refused) != 0 {
				t.Errorf("the app learnt %v and refused %v", app.statuses, app.refused)
			}
		})
	}
}

// docs/webhooks.md#listen: a reset ends the stream; the forwarder connects again by itself and the reset
// sandbox's webhooks reach the app.
func TestForwardingConnectsAgainAfterAReset(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.New(t)
	app := startPaymentsApp(t, sb.Credentials.Webhook)
	f := sb.ForwardWebhooks(t, app.URL+"/hooks/payments")
	before := f.ListenerID()

	sb.Must(sb.Control(ctx, "POST", "/reset", nil)).Expect(200, nil)
	if err := f.Reconnected(ctx, before); err != nil { // the reset ended the stream; the forwarder is back
		t.Fatal(err)
	}

	id := sb.Do("POST", "/v1/sandbox/accounts/acct_acme_usd/deposits",
		sandbox.MockDepositRequest{DepositInstructionID: "di_acme_usd_ach", Amount: "5.00"}).Expect(202, nil).LocationID()
	sb.AdvanceClock(1000)
	sb.Settle()
	if got := app.statusesOf(id); !equal(got, []string{"PENDING", "COMPLETED"}) {
		t.Errorf("after the reset the app learnt %v of %s", got, id)
	}
}

// A session that ends under a forwarder stops it with one clear error, sandbox.ErrSessionGone.
func TestForwardingStopsWithErrSessionGoneWhenTheSessionEnds(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.New(t)
	app := startPaymentsApp(t, sb.Credentials.Webhook)
	f, err := sb.Client.ForwardWebhooks(ctx, app.URL+"/hooks/payments")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	if err := sb.End(ctx); err != nil {
		t.Fatal(err)
	}
	<-f.Done()
	if err := f.Err(); !errors.Is(err, sandbox.ErrSessionGone) {
		t.Errorf("the forwarder ended with %v", err)
	}
	if _, err := sb.Client.ForwardWebhooks(ctx, app.URL+"/hooks/payments"); !errors.Is(err, sandbox.ErrSessionGone) {
		t.Errorf("forwarding an ended session: %v", err)
	}
}
