package scenarios_test

import (
	"encoding/json"
	"sort"
	"testing"

	"service-sandbox.dev/go/sandbox"
	"service-sandbox.dev/go/sandboxtest"
)

// A one-page PDF (docs/onboarding.md's walkthrough uses the same one).
const pdfBase64 = "JVBERi0xLjQKMSAwIG9iago8PCAvVHlwZSAvQ2F0YWxvZyAvUGFnZXMgMiAwIFIgPj4KZW5kb2JqCjIgMCBvYmoKPDwgL1R5cGUgL1BhZ2VzIC9LaWRzIFszIDAgUl0gL0NvdW50IDEgPj4KZW5kb2JqCjMgMCBvYmoKPDwgL1R5cGUgL1BhZ2UgL1BhcmVudCAyIDAgUiAvTWVkaWFCb3ggWzAgMCA2MTIgNzkyXSAvQ29udGVudHMgNCAwIFIgL1Jlc291cmNlcyA8PCAvRm9udCA8PCAvRjEgNSAwIFIgPj4gPj4gPj4KZW5kb2JqCjQgMCBvYmoKPDwgL0xlbmd0aCA1MiA+PgpzdHJlYW0KQlQgL0YxIDE4IFRmIDcyIDcyMCBUZCAoU2FuZGJveCB0ZXN0IGRvY3VtZW50KSBUaiBFVAplbmRzdHJlYW0KZW5kb2JqCjUgMCBvYmoKPDwgL1R5cGUgL0ZvbnQgL1N1YnR5cGUgL1R5cGUxIC9CYXNlRm9udCAvSGVsdmV0aWNhID4+CmVuZG9iagp4cmVmCjAgNgowMDAwMDAwMDAwIDY1NTM1IGYgCjAwMDAwMDAwMDkgMDAwMDAgbiAKMDAwMDAwMDA1OCAwMDAwMCBuIAowMDAwMDAwMTE1IDAwMDAwIG4gCjAwMDAwMDAyNDEgMDAwMDAgbiAKMDAwMDAwMDM0MyAwMDAwMCBuIAp0cmFpbGVyCjw8IC9TaXplIDYgL1Jvb3QgMSAwIFIgPj4Kc3RhcnR4cmVmCjQxMwolJUVPRgo="

// docs/onboarding.md: a BUSINESS user created through the API fills in its information request, is approved by
// the emulated review, and receives the programme's accounts, whose deposit instructions follow once the
// provider is ready.
func TestOnboardsABusinessToActiveAndItReceivesItsAccounts(t *testing.T) {
	t.Parallel()
	sb := sandboxtest.New(t)
	multi := sandbox.WithKey(sb.Credentials.Multi) // programme-level call: MULTI_USER key, no user

	var user sandbox.User
	sb.Do("POST", "/v1/auth/users", map[string]string{"externalId": "northwind-1", "type": "BUSINESS", "name": "Northwind Traders Inc"}, multi).
		Expect(201, &user)
	if user.EnrollmentStatus != "INACTIVE" {
		t.Fatalf("a new user is %s", user.EnrollmentStatus)
	}
	as := sandbox.AsUser(user.UserID)

	var enrollment sandbox.Enrollment
	sb.Do("GET", "/v1/enrollment", nil, as).Expect(200, &enrollment)
	ir := enrollment.InformationRequest.ID

	entries := []map[string]any{
		{"key": "businessName", "value": "Northwind Traders Inc"},
		{"key": "registrationNumber", "value": "C-4581234"},
		{"key": "incorporationCountry", "value": "US"},
		{"key": "address", "value": map[string]string{"line1": "1 Harbor Road", "city": "Wilmington", "region": "DE", "postalCode": "19801", "country": "US"}},
		{"key": "beneficialOwners", "value": []map[string]any{{"name": "Ada Founder", "dateOfBirth": "1985-02-03", "ownershipPercent": 60}, {"name": "Ben Partner", "dateOfBirth": "1979-11-30", "ownershipPercent": 40}}},
		{"key": "formationDocument", "value": map[string]string{"fileName": "certificate.pdf", "contentType": "application/pdf", "contentBase64": pdfBase64}},
	}
	var detail sandbox.InformationRequestDetail
	sb.Do("POST", "/v1/information-requests/"+ir+"/entries", map[string]any{"entries": entries}, as).Expect(200, &detail)
	if detail.ValidationStatus != "VALID" {
		t.Fatalf("entries: %+v", detail.Requirements)
	}
	sb.Do("POST", "/v1/information-requests/"+ir+"/submit", nil, as).Expect(200, &detail)
	if detail.Status != "PROCESSING_SUBMISSION" {
		t.Fatalf("submitted request is %s", detail.Status)
	}

	sb.AdvanceClock(5000) // the review takes 5 s of emulated time (fixtures timeline.reviewMs)
	sb.Do("GET", "/v1/enrollment", nil, as).Expect(200, &enrollment)
	if enrollment.Status != "ACTIVE" || enrollment.InformationRequest.Decision == nil || *enrollment.InformationRequest.Decision != "APPROVED" {
		t.Fatalf("enrollment after the review: %+v", enrollment)
	}

	// The accounts exist at once, without deposit instructions until the provider is ready.
	var accounts struct{ Data []sandbox.Account }
	sb.Do("GET", "/v1/accounts", nil, as).Expect(200, &accounts)
	currencies := map[string]string{}
	for _, a := range accounts.Data {
		currencies[a.Currency] = a.ID
	}
	if len(accounts.Data) != 2 || currencies["USD"] == "" || currencies["USDC"] == "" {
		t.Fatalf("accounts of the onboarded business: %+v", accounts.Data)
	}
	var usd sandbox.AccountDetail
	sb.Do("GET", "/v1/accounts/"+currencies["USD"], nil, as).Expect(200, &usd)
	if len(usd.DepositInstructions) != 0 || usd.Balances.Current != "0.00" {
		t.Fatalf("a fresh USD account: %+v", usd)
	}

	sb.AdvanceClock(2000) // timeline.providerReadyMs
	sb.Do("GET", "/v1/accounts/"+currencies["USD"], nil, as).Expect(200, &usd)
	var rails []string
	for _, di := range usd.DepositInstructions {
		if di.Status != "ACTIVE" {
			t.Errorf("deposit instruction %s is %s", di.ID, di.Status)
		}
		rails = append(rails, di.Rail.Type)
	}
	sort.Strings(rails)
	if got, _ := json.Marshal(rails); string(got) != `["US.USD.ACH","US.USD.FEDWIRE"]` {
		t.Errorf("USD deposit instructions on %s", got)
	}

	var users struct{ Data []sandbox.User }
	sb.Do("GET", "/v1/users", nil, multi).Expect(200, &users)
	if len(users.Data) == 0 || users.Data[0].UserID != user.UserID || users.Data[0].EnrollmentStatus != "ACTIVE" {
		t.Errorf("GET /v1/users: %+v", users.Data)
	}
}
