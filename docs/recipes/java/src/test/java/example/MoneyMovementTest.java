package example;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import sandbox.Sandbox;
import sandbox.SandboxExtension;
import sandbox.WebhookReceiver.Webhook;

@ExtendWith(SandboxExtension.class)
class MoneyMovementTest {
  @Test
  void a_simulated_deposit_completes_when_the_clock_moves_and_is_reported_by_webhook(Sandbox sandbox) {
    sandbox.listen(); // `service-sandbox listen` forwards the session's webhooks to sandbox.webhooks()
    // docs/money-in.md#simulated-deposits: money arrives through one of the account's deposit instructions.
    String body = "{\"depositInstructionId\":\"di_acme_usd_ach\",\"amount\":\"125.00\",\"reference\":\"INV-42\"}";
    Sandbox.Response accepted = sandbox.signed("POST", "/v1/sandbox/accounts/acct_acme_usd/deposits", body);
    assertEquals(202, accepted.status(), accepted.body());

    // The 202 points at the new transaction: Location: {session prefix}/v1/transactions/{id}.
    String location = accepted.headers().firstValue("Location").orElseThrow();
    String id = location.substring(location.lastIndexOf('/') + 1);
    Sandbox.Response list = sandbox.signed("GET", "/v1/transactions?accountId=acct_acme_usd&pageSize=1", null);
    assertEquals(200, list.status(), list.body());
    assertEquals(id, list.get("data", 0, "id"));
    assertEquals("PENDING", list.get("data", 0, "status"));
    assertEquals("INV-42", list.get("data", 0, "debitReference"));
    sandbox.settle(); // every delivery due now has been answered by the receiver: no sleep, no polling
    sandbox.webhook(w -> "transaction_created".equals(w.eventType()) && id.equals(w.get("transaction", "id")));

    // The session's clock is frozen: the deposit completes when it is moved past the rail's 1 s.
    sandbox.advanceClock(1000);

    Sandbox.Response tx = sandbox.signed("GET", "/v1/transactions/" + id, null);
    assertEquals(200, tx.status(), tx.body());
    assertEquals("COMPLETED", tx.get("status"));
    assertEquals("2026-03-01T12:00:01.000Z", tx.get("completedAt"));
    assertEquals("88187.80", sandbox.signed("GET", "/v1/accounts/acct_acme_usd", null).get("balances", "current"));

    assertEquals(0L, ((Number) sandbox.settle().get("waiting", "deliveries")).longValue());
    Webhook done = sandbox.webhook(w -> id.equals(w.get("transaction", "id")) && "COMPLETED".equals(w.get("transaction", "status")));
    assertEquals("transaction_status_updated", done.eventType());
    assertEquals("INV-42", done.get("transaction", "debitReference"));
    assertEquals("usr_acme", done.get("metadata", "userId"));
    assertEquals(List.of(), sandbox.webhooks().rejected());
  }

  @Test
  void an_injected_withdrawal_follows_the_rail_timeline(Sandbox sandbox) {
    sandbox.listen();
    // docs/control-plane.md#transactions: the control plane writes any transaction through the ledger.
    Sandbox.Response created = sandbox.control("POST", "/accounts/acct_acme_usd/transactions",
        "{\"type\":\"WITHDRAWAL\",\"direction\":\"OUTGOING\",\"debitAmount\":\"40.00\"}");
    assertEquals(201, created.status(), created.body());
    String id = (String) created.get("id");
    assertEquals("PENDING", created.get("status"));
    // The debit is held at once (docs/money-in.md#balances).
    assertEquals("88022.80", sandbox.signed("GET", "/v1/accounts/acct_acme_usd", null).get("balances", "available"));

    sandbox.advanceClock(1000);
    assertEquals("PROCESSING", sandbox.signed("GET", "/v1/transactions/" + id, null).get("status"));
    sandbox.advanceClock(3000);
    assertEquals("COMPLETED", sandbox.signed("GET", "/v1/transactions/" + id, null).get("status"));
    assertEquals("88022.80", sandbox.signed("GET", "/v1/accounts/acct_acme_usd", null).get("balances", "current"));

    sandbox.settle();
    sandbox.webhook(w -> id.equals(w.get("transaction", "id")) && "COMPLETED".equals(w.get("transaction", "status")));
    assertEquals(List.of(), sandbox.webhooks().rejected());
  }
}
