package recipe_test

import (
	"fmt"
	"sync"
	"testing"

	"service-sandbox.dev/go/sandbox"
	"service-sandbox.dev/go/sandboxtest"
)

// The same requests in any session: a user made by the programme, and a simulated deposit.
func idsOf(t *testing.T, sb *sandboxtest.Sandbox) (user sandbox.User, transaction string) {
	sb.Do("POST", "/v1/auth/users", map[string]string{"externalId": "customer-7", "type": "PERSON", "name": "Grace Hopper"},
		sandbox.WithKey(sb.Credentials.Multi)).Expect(201, &user)
	transaction = sb.Do("POST", "/v1/sandbox/accounts/acct_acme_usd/deposits",
		sandbox.MockDepositRequest{DepositInstructionID: "di_acme_usd_ach", Amount: "10.00"}).Expect(202, nil).LocationID()
	return user, transaction
}

// docs/sessions.md#ids: a service under test that stores the emulator's ids never sees two sessions share one.
func TestSessionsHandOutIdsOfTheirOwnAndASeedReplaysThem(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]bool{}
	t.Run("at once", func(t *testing.T) {
		for i := 0; i < 4; i++ {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				user, txn := idsOf(t, sandboxtest.New(t))
				mu.Lock()
				defer mu.Unlock()
				for _, id := range []string{user.UserID, txn} {
					if seen[id] {
						t.Errorf("id %s handed out twice", id)
					}
					seen[id] = true
				}
			})
		}
	}) // returns once every parallel subtest has finished

	// Two sessions with one seed answer the same requests alike: the same ids, to replay a failure.
	seed := sandboxtest.Label() + "-replay"
	firstUser, firstTxn := idsOf(t, sandboxtest.NewWith(t, sandboxtest.Options{Seed: seed}))
	secondUser, secondTxn := idsOf(t, sandboxtest.NewWith(t, sandboxtest.Options{Seed: seed}))
	if firstUser.UserID != secondUser.UserID || firstUser.CreatedAt != secondUser.CreatedAt || firstTxn != secondTxn || seen[firstUser.UserID] {
		t.Errorf("one seed, two answers: %+v %s / %+v %s", firstUser, firstTxn, secondUser, secondTxn)
	}
}
