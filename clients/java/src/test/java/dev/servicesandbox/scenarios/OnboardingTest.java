package dev.servicesandbox.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.servicesandbox.Response;
import dev.servicesandbox.SandboxClient;
import dev.servicesandbox.Session;
import dev.servicesandbox.junit.SandboxExtension;
import dev.servicesandbox.model.Account;
import dev.servicesandbox.model.AccountDetail;
import dev.servicesandbox.model.DepositInstruction;
import dev.servicesandbox.model.Enrollment;
import dev.servicesandbox.model.User;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** docs/onboarding.md: a BUSINESS user created, its information request filled and submitted, reviewed to ACTIVE, its accounts opened. */
@ExtendWith(SandboxExtension.class)
class OnboardingTest {
  /** A one-page PDF (docs/onboarding.md#walkthrough-with-curl-a-person-user). */
  static final String PDF_BASE64 = "JVBERi0xLjQKMSAwIG9iago8PCAvVHlwZSAvQ2F0YWxvZyAvUGFnZXMgMiAwIFIgPj4KZW5kb2JqCjIgMCBvYmoKPDwgL1R5cGUgL1BhZ2VzIC9LaWRzIFszIDAgUl0gL0NvdW50IDEgPj4KZW5kb2JqCjMgMCBvYmoKPDwgL1R5cGUgL1BhZ2UgL1BhcmVudCAyIDAgUiAvTWVkaWFCb3ggWzAgMCA2MTIgNzkyXSAvQ29udGVudHMgNCAwIFIgL1Jlc291cmNlcyA8PCAvRm9udCA8PCAvRjEgNSAwIFIgPj4gPj4gPj4KZW5kb2JqCjQgMCBvYmoKPDwgL0xlbmd0aCA1MiA+PgpzdHJlYW0KQlQgL0YxIDE4IFRmIDcyIDcyMCBUZCAoU2FuZGJveCB0ZXN0IGRvY3VtZW50KSBUaiBFVAplbmRzdHJlYW0KZW5kb2JqCjUgMCBvYmoKPDwgL1R5cGUgL0ZvbnQgL1N1YnR5cGUgL1R5cGUxIC9CYXNlRm9udCAvSGVsdmV0aWNhID4+CmVuZG9iagp4cmVmCjAgNgowMDAwMDAwMDAwIDY1NTM1IGYgCjAwMDAwMDAwMDkgMDAwMDAgbiAKMDAwMDAwMDA1OCAwMDAwMCBuIAowMDAwMDAwMTE1IDAwMDAwIG4gCjAwMDAwMDAyNDEgMDAwMDAgbiAKMDAwMDAwMDM0MyAwMDAwMCBuIAp0cmFpbGVyCjw8IC9TaXplIDYgL1Jvb3QgMSAwIFIgPj4Kc3RhcnR4cmVmCjQxMwolJUVPRgo=";

  @Test
  void a_business_is_onboarded_to_active_and_receives_its_accounts(Session session) {
    // A programme-level call: the MULTI_USER key without a user.
    Response created = session.programme().post("/v1/auth/users",
        Map.of("externalId", "northwind-1", "type", "BUSINESS", "name", "Northwind Traders Inc"));
    assertEquals(201, created.status(), created.body());
    User user = created.as(User::from);
    assertEquals("INACTIVE", user.enrollmentStatus());

    SandboxClient business = session.forUser(user.userId());
    Enrollment enrollment = business.get("/v1/enrollment").ok().as(Enrollment::from);
    assertEquals("INACTIVE", enrollment.status());
    assertEquals("DRAFT", enrollment.informationRequest().status());
    String request = "/v1/information-requests/" + enrollment.informationRequest().id();

    Response written = business.post(request + "/entries", Map.of("entries", List.of(
        Map.of("key", "businessName", "value", "Northwind Traders Inc"),
        Map.of("key", "registrationNumber", "value", "C-4581234"),
        Map.of("key", "incorporationCountry", "value", "US"),
        Map.of("key", "address", "value", Map.of("line1", "1 Harbor Road", "city", "Wilmington", "region", "DE", "postalCode", "19801", "country", "US")),
        Map.of("key", "beneficialOwners", "value", List.of(
            Map.of("name", "Ada Founder", "dateOfBirth", "1985-02-03", "ownershipPercent", 60),
            Map.of("name", "Ben Partner", "dateOfBirth", "1979-11-30", "ownershipPercent", 40))),
        Map.of("key", "formationDocument", "value", Map.of("fileName", "certificate.pdf", "contentType", "application/pdf", "contentBase64", PDF_BASE64)))));
    assertEquals(200, written.status(), written.body());
    assertEquals("VALID", written.string("validationStatus"));
    assertEquals("PROCESSING_SUBMISSION", business.post(request + "/submit", null).ok().string("status"));

    // The review takes 5 s of emulated time (fixtures timeline.reviewMs); the session's clock is frozen until moved.
    session.advanceClock(5_000);
    Enrollment active = business.get("/v1/enrollment").ok().as(Enrollment::from);
    assertEquals("ACTIVE", active.status());
    assertNull(active.reason());
    assertEquals("APPROVED", active.informationRequest().decision());
    List<?> users = (List<?>) session.programme().get("/v1/users").ok().get("data");
    User listed = User.from(users.stream().filter(u -> user.userId().equals(((Map<?, ?>) u).get("userId"))).findFirst().orElseThrow());
    assertEquals("ACTIVE", listed.enrollmentStatus());

    // docs/onboarding.md#accounts-of-onboarded-users: a USD and a USDC account at once, deposit instructions 2 s later.
    List<Account> accounts = ((List<?>) business.get("/v1/accounts").ok().get("data")).stream().map(Account::from).toList();
    assertEquals(List.of("USD", "USDC"), accounts.stream().map(Account::currency).sorted().toList());
    String usd = accounts.stream().filter(a -> "USD".equals(a.currency())).findFirst().orElseThrow().id();
    assertEquals(List.of(), business.get("/v1/accounts/" + usd).ok().as(AccountDetail::from).depositInstructions());

    session.advanceClock(2_000);
    AccountDetail ready = business.get("/v1/accounts/" + usd).ok().as(AccountDetail::from);
    assertEquals(List.of("US.USD.ACH", "US.USD.FEDWIRE"), ready.depositInstructions().stream().map(DepositInstruction::rail).map(r -> r.type()).sorted().toList());
    assertEquals("0.00", ready.balances().current());
  }
}
