package dev.servicesandbox.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.servicesandbox.Response;
import dev.servicesandbox.SandboxClient;
import dev.servicesandbox.Session;
import dev.servicesandbox.Webhook;
import dev.servicesandbox.WebhookReceiver;
import dev.servicesandbox.junit.SandboxExtension;
import dev.servicesandbox.model.AccountDetail;
import dev.servicesandbox.model.Transaction;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** docs/money-in.md#simulated-deposits: a deposit completes when the clock moves, and settle delivers its webhooks. */
@ExtendWith(SandboxExtension.class)
class DepositTest {
  @Test
  void a_deposit_completes_and_its_verified_webhooks_arrive(Session session) {
    WebhookReceiver webhooks = session.listen();
    SandboxClient api = session.client();
    Response accepted = api.post("/v1/sandbox/accounts/acct_acme_usd/deposits",
        Map.of("depositInstructionId", "di_acme_usd_ach", "amount", "1250.00", "reference", "INV-42"));
    assertEquals(202, accepted.status(), accepted.body());
    String id = accepted.locationId();
    assertEquals("PENDING", api.get("/v1/transactions/" + id).ok().as(Transaction::from).status());

    session.advanceClock(1_000); // the rail's 1 s: the deposit completes before this returns
    Transaction done = api.get("/v1/transactions/" + id).ok().as(Transaction::from);
    assertEquals("COMPLETED", done.status());
    assertEquals("DEPOSIT", done.type());
    assertEquals("2026-03-01T12:00:01.000Z", done.completedAt());
    assertEquals("89312.80", api.get("/v1/accounts/acct_acme_usd").ok().as(AccountDetail::from).balances().current());

    assertEquals(0L, session.settle().waiting().deliveries()); // every webhook due was delivered and answered: no sleep
    List<Webhook> events = webhooks.of(id);
    assertEquals(List.of("transaction_created", "transaction_status_updated"), events.stream().map(Webhook::eventType).toList());
    Webhook completed = events.get(1);
    assertEquals("COMPLETED", completed.event().transaction().status());
    assertEquals("usr_acme", completed.event().metadata().userId());
    assertEquals(List.of(), webhooks.rejected());
    assertEquals(List.of(), webhooks.duplicates());
  }
}
