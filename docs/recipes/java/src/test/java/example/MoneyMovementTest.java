package example;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.servicesandbox.Session;
import dev.servicesandbox.WebhookReceiver;
import dev.servicesandbox.junit.SandboxExtension;
import dev.servicesandbox.model.Transaction;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(SandboxExtension.class)
class MoneyMovementTest {
  @Test
  void a_deposit_completes_when_the_clock_moves_and_is_reported_by_webhook(Session session) {
    WebhookReceiver webhooks = session.listen(); // the kit forwards the session's webhooks to a verifying receiver
    String id = session.client().post("/v1/sandbox/accounts/acct_acme_usd/deposits",
        Map.of("depositInstructionId", "di_acme_usd_ach", "amount", "125.00", "reference", "INV-42")).ok().locationId();

    session.advanceClock(1_000); // the session's clock is frozen; the deposit completes before this returns
    Transaction done = session.client().get("/v1/transactions/" + id).ok().as(Transaction::from);
    assertEquals("COMPLETED", done.status());
    session.settle();            // every webhook due has been answered: no sleep, no polling
    assertEquals("INV-42", webhooks.find(w -> id.equals(w.transactionId()) && "COMPLETED".equals(w.status())).event().transaction().debitReference());
    assertEquals(List.of(), webhooks.rejected());
  }
}
