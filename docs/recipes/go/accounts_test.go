package recipe_test

import (
	"encoding/json"
	"testing"

	"example.com/sandbox-recipe/sandboxtest"
)

func TestListsTheUsersAccounts(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.New(t)

	// The query is part of the signed request target (docs/authentication.md).
	res := sb.Signed("GET", "/v1/accounts?pageSize=2", "")

	if res.Status != 200 {
		t.Fatal(res)
	}
	if got := res.Get("totalRecords"); got != json.Number("4") {
		t.Errorf("totalRecords = %v, want 4", got)
	}
	if got := len(res.Get("data").([]any)); got != 2 {
		t.Errorf("%d accounts on the page, want 2", got)
	}
	if got := res.Str("data", 0, "id"); got != "acct_acme_usd" {
		t.Errorf("first account %q", got)
	}
	if got := res.Str("data", 1, "id"); got != "acct_acme_eur" {
		t.Errorf("second account %q", got)
	}
}

func TestReadsOneAccountWithItsFixtureBalance(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.New(t)

	res := sb.Signed("GET", "/v1/accounts/acct_acme_usd", "")

	if res.Status != 200 {
		t.Fatal(res)
	}
	// A new session starts from the fixtures, whatever other tests did in theirs.
	if got := res.Str("balances", "current"); got != "88062.80" {
		t.Errorf("current balance %q, want 88062.80", got)
	}
	if got := res.Str("depositInstructions", 0, "id"); got != "di_acme_usd_ach" {
		t.Errorf("first deposit instruction %q", got)
	}
}
