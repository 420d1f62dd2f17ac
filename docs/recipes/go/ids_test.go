package recipe_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"example.com/sandbox-recipe/sandboxtest"
)

// The same two requests in any session: a user made by the programme, and a simulated deposit.
const newUser = `{"externalId":"customer-7","type":"PERSON","name":"Grace Hopper"}`

type handedOut struct {
	user, transaction string
	userBody          []byte
}

func idsOf(t *testing.T, sb *sandboxtest.Sandbox) handedOut {
	created := sb.SignedWith(sb.Credentials.Multi, "POST", "/v1/auth/users", newUser)
	deposit := sb.Signed("POST", "/v1/sandbox/accounts/acct_acme_usd/deposits", `{"depositInstructionId":"di_acme_usd_ach","amount":"10.00"}`)
	if created.Status != 201 || deposit.Status != 202 {
		t.Errorf("user %v, deposit %v", created, deposit)
	}
	location := deposit.Header.Get("Location")
	return handedOut{created.Str("userId"), location[strings.LastIndex(location, "/")+1:], created.Body}
}

// docs/sessions.md#ids: a service under test that stores the emulator's ids never sees two sessions share one.
func TestSessionsHandOutIdsOfTheirOwnAndASeedReplaysThem(t *testing.T) {
	t.Parallel()

	// Four tests at once (parallel subtests), a session each, the same requests in each: four users and four
	// transactions, no id twice.
	var mu sync.Mutex
	var ids []string
	t.Run("at once", func(t *testing.T) {
		for i := 0; i < 4; i++ {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				got := idsOf(t, sandboxtest.New(t))
				mu.Lock()
				defer mu.Unlock()
				ids = append(ids, got.user, got.transaction)
			})
		}
	}) // returns once every parallel subtest has finished
	seen := map[string]bool{}
	for _, id := range ids {
		if id == "" || seen[id] {
			t.Errorf("id %q handed out twice (or empty): %v", id, ids)
		}
		seen[id] = true
	}

	// Two sessions with one seed answer the same requests byte for byte: the same ids, to replay a failure.
	seed := sandboxtest.Label() + "-replay"
	first := idsOf(t, sandboxtest.NewWith(t, sandboxtest.Options{Seed: seed}))
	second := idsOf(t, sandboxtest.NewWith(t, sandboxtest.Options{Seed: seed}))
	if first.user != second.user || first.transaction != second.transaction || !bytes.Equal(first.userBody, second.userBody) {
		t.Errorf("one seed, two answers: %s / %s", first.userBody, second.userBody)
	}
	if seen[first.user] {
		t.Errorf("the seeded session's user %s was handed out by an unseeded one too", first.user)
	}
}
