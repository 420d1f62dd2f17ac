package recipe_test

import (
	"testing"

	"service-sandbox.dev/go/sandbox"
	"service-sandbox.dev/go/sandboxtest"
)

func TestListsTheUsersAccounts(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.New(t) // a session of its own, ended by t.Cleanup

	// The query is part of the signed request target (docs/authentication.md); the kit signs it.
	var page struct {
		Data         []sandbox.Account
		TotalRecords int
	}
	sb.Do("GET", "/v1/accounts?pageSize=2", nil).Expect(200, &page)

	if page.TotalRecords != 4 || len(page.Data) != 2 || page.Data[0].ID != "acct_acme_usd" || page.Data[1].ID != "acct_acme_eur" {
		t.Errorf("accounts: %+v", page)
	}
}

func TestReadsOneAccountWithItsFixtureBalance(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.New(t)

	var account sandbox.AccountDetail
	sb.Do("GET", "/v1/accounts/acct_acme_usd", nil).Expect(200, &account)

	// A new session starts from the fixtures, whatever other tests did in theirs.
	if account.Balances.Current != "88062.80" || account.DepositInstructions[0].ID != "di_acme_usd_ach" {
		t.Errorf("account: %+v", account)
	}
}
