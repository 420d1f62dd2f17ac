package dev.servicesandbox.scenarios;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.servicesandbox.Json;
import dev.servicesandbox.Response;
import dev.servicesandbox.SandboxClient;
import dev.servicesandbox.Session;
import dev.servicesandbox.Webhook;
import dev.servicesandbox.WebhookReceiver;
import dev.servicesandbox.junit.SandboxExtension;
import dev.servicesandbox.model.Beneficiary;
import dev.servicesandbox.model.PayoutSubmissionResponse;
import dev.servicesandbox.model.Transaction;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** docs/payouts.md: a payout by the json payload and one by pacs.008, each to COMPLETED with verified webhooks. */
@ExtendWith(SandboxExtension.class)
class PayoutTest {
  /** The repository's pacs.008 samples: PACS008_DIR, else test/fixtures/pacs008 of the checkout (from clients/java). */
  static Path pacs008(String name) {
    String dir = System.getenv().getOrDefault("PACS008_DIR", "../../test/fixtures/pacs008");
    return Path.of(dir, name);
  }

  /** PENDING -> PROCESSING after 1 s -> COMPLETED 3 s later (docs/money-out.md), then the webhooks, settled. */
  static Transaction completes(Session session, WebhookReceiver webhooks, String id) {
    SandboxClient api = session.client();
    assertEquals("PENDING", api.get("/v1/transactions/" + id).ok().as(Transaction::from).status());
    session.advanceClock(4_000);
    Transaction done = api.get("/v1/transactions/" + id).ok().as(Transaction::from);
    assertEquals("COMPLETED", done.status(), done.toString());
    session.settle();
    List<Webhook> events = webhooks.of(id);
    assertEquals("transaction_created", events.get(0).eventType());
    assertEquals("COMPLETED", events.get(events.size() - 1).status());
    assertEquals(List.of(), webhooks.rejected());
    return done;
  }

  @Test
  void a_json_payout_completes_and_a_retry_with_its_key_replays_it(Session session) {
    WebhookReceiver webhooks = session.listen();
    SandboxClient api = session.client();
    Map<String, String> payload = Map.of("entityId", "acct_acme_usd", "beneficiaryId", "ben_globex", "amount", "250.00",
        "currency", "USD", "reference", "INV-1001");
    // The payout variant (RFC 3339 timestamp, sha256=<hex>) is chosen by the client from the path.
    Response accepted = api.payoutJson(payload, "acme-json-0001");
    assertEquals(202, accepted.status(), accepted.body());
    PayoutSubmissionResponse receipt = accepted.as(PayoutSubmissionResponse::from);
    assertEquals("RECEIVED", receipt.status());

    Response again = api.payoutJson(payload, "acme-json-0001");
    assertEquals(202, again.status());
    assertArrayEquals(accepted.bytes(), again.bytes(), "the same key and body replay the first 202 byte for byte");

    Transaction done = completes(session, webhooks, receipt.transactionId());
    assertEquals("WITHDRAWAL", done.type());
    assertEquals("250.00", done.creditAmount());
    assertEquals("INV-1001", done.externalId());
  }

  @Test
  void a_pacs008_payout_completes_over_the_wire_rail(Session session) throws IOException {
    WebhookReceiver webhooks = session.listen();
    // The creditor named by account number in the message is the fixture beneficiary Globex (docs/money-out.md#fixture-beneficiaries).
    Beneficiary globex = session.client().get("/v1/beneficiaries/ben_globex").ok().as(Beneficiary::from);
    assertEquals("Globex Corporation", globex.businessName());
    assertEquals("6789", globex.instruments().get(0).get("mask"));
    // Fedwire-style, in a wrapper with its application header: Acme's USD account by account number, to Globex.
    byte[] xml = Files.readAllBytes(pacs008("fedwire.xml"));
    Response accepted = session.client().payoutPacs008(xml, "acme-wire-0018");
    assertEquals(202, accepted.status(), accepted.body());
    PayoutSubmissionResponse receipt = accepted.as(PayoutSubmissionResponse::from);
    assertEquals("20260301SBXFW0000018", receipt.messageId());

    Transaction done = completes(session, webhooks, receipt.transactionId());
    assertEquals("25000.00", done.creditAmount());
    assertEquals("US.USD.FEDWIRE", done.creditRail());
    assertEquals("ACME-WIRE-0018", done.externalId());
    assertEquals("Q1 licence true-up", done.debitMemo());
    assertEquals("15.00", done.fees().get(0).amount());
    assertEquals(globex.id(), Json.get(done.creditParty(), "beneficiary", "business", "id")); // a union: a Map
  }
}
