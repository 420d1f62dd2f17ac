package dev.servicesandbox.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.servicesandbox.DeliveryQuery;
import dev.servicesandbox.Json;
import dev.servicesandbox.Session;
import dev.servicesandbox.Webhook;
import dev.servicesandbox.WebhookReason;
import dev.servicesandbox.WebhookReceiver;
import dev.servicesandbox.junit.SandboxExtension;
import dev.servicesandbox.model.SettleReport;
import dev.servicesandbox.model.WebhookAttempt;
import dev.servicesandbox.model.WebhookDelivery;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * docs/faults.md#webhook-chaos: every acknowledged delivery sent twice, and one signed with the wrong secret. The
 * receiver refuses the bad one (the emulator retries it 5 s later, emulated), acknowledges each duplicate without
 * recording it again, and ends with each event exactly once: the events of the delivery log.
 */
@ExtendWith(SandboxExtension.class)
class ChaosTest {
  @Test
  void the_receiver_ends_with_exactly_the_right_events_under_duplicates_and_a_bad_signature(Session session) {
    WebhookReceiver webhooks = session.listen();
    session.chaos(Map.of("seed", "java-kit-chaos", "duplicate", Map.of(), "badSignature", Map.of("times", 1)));

    String deposit = session.client().post("/v1/sandbox/accounts/acct_acme_usd/deposits",
        Map.of("depositInstructionId", "di_acme_usd_ach", "amount", "300.00")).ok().locationId();
    session.advanceClock(1_000);
    String withdrawal = session.control("POST", "/accounts/acct_acme_usd/transactions",
        Map.of("type", "WITHDRAWAL", "direction", "OUTGOING", "debitAmount", "40.00")).ok().string("id");
    session.advanceClock(4_000);
    // The refused attempt is retried on the emulated clock: move it to each retry and settle, no sleep.
    SettleReport report = session.settleUntilIdle(10);
    assertEquals(0L, report.waiting().deliveries(), report.toString());

    // The delivery log: one delivery per event, each DELIVERED; the attempts chaos made.
    List<WebhookDelivery> log = session.deliveries(DeliveryQuery.all().page(0, 100));
    List<String> logged = new ArrayList<>();
    int duplicatesSent = 0;
    int refused = 0;
    for (WebhookDelivery delivery : log) {
      assertEquals("DELIVERED", delivery.status(), Json.write(delivery));
      logged.add(delivery.eventId());
      for (WebhookAttempt attempt : delivery.attempts()) {
        if ("DUPLICATE".equals(attempt.kind())) duplicatesSent++;
        if ("FAILED".equals(attempt.outcome())) refused++;
      }
    }
    assertEquals(logged.size(), session.deliveries(DeliveryQuery.all().status("DELIVERED").page(0, 100)).size(), "the status filter");
    assertEquals(List.of(), session.deliveries(DeliveryQuery.all().transactionId("txn_none")), "a transaction with none: an empty page, not a 404");
    assertEquals(1, refused, "badSignature fired once");
    assertEquals(logged.size(), duplicatesSent, "every event acknowledged once and then sent again");

    // Exactly the logged events, each once, though every one came twice and one came three times.
    assertEquals(logged.stream().sorted().toList(), webhooks.eventIds().stream().sorted().toList());
    assertEquals(duplicatesSent, webhooks.duplicates().size());
    assertEquals(1, webhooks.rejected().size());
    assertEquals(WebhookReason.SIGNATURE_MISMATCH, webhooks.rejected().get(0).reason());
    for (String id : List.of(deposit, withdrawal)) {
      List<Webhook> events = webhooks.of(id);
      assertEquals("transaction_created", events.stream().filter(w -> "PENDING".equals(w.status())).findFirst().orElseThrow().eventType());
      assertEquals(1, events.stream().filter(w -> "COMPLETED".equals(w.status())).count(), id + ": " + events);
    }
  }
}
