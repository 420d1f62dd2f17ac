package dev.servicesandbox.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.servicesandbox.Credentials;
import dev.servicesandbox.DeliveryQuery;
import dev.servicesandbox.Emulator;
import dev.servicesandbox.SandboxClient;
import dev.servicesandbox.Session;
import dev.servicesandbox.WebhookForwarder;
import dev.servicesandbox.WebhookForwarderAccess;
import dev.servicesandbox.junit.SandboxExtension;
import dev.servicesandbox.model.WebhookDelivery;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * docs/webhooks.md#listen, in-process: the kit forwards a sandbox's webhooks to an app with its own endpoint
 * ({@link PaymentsApp}, verifying with the kit's verifier), with no CLI process; the app's answers are recorded as
 * direct ones; forwarding stops with one reason when its session is gone.
 */
@ExtendWith(SandboxExtension.class)
class ForwardingTest {
  private static final Map<String, String> DEPOSIT = Map.of("depositInstructionId", "di_acme_usd_ach", "amount", "42.00");
  private static final Duration WAIT = Duration.ofSeconds(30);

  @Test
  void a_sessions_webhooks_reach_the_apps_own_endpoint(Session session) {
    try (PaymentsApp app = PaymentsApp.start(session.credentials().webhook().secret())) {
      WebhookForwarder forwarding = session.forwardWebhooks(app.webhookUrl());
      assertTrue(forwarding.running());
      String txn = session.client().post("/v1/sandbox/accounts/acct_acme_usd/deposits", DEPOSIT).ok().locationId();
      session.advanceClock(1_000); // the rail completes the deposit
      session.settle(); // every webhook due has been forwarded and answered by the app

      assertEquals("COMPLETED", app.status(txn), "the app applied both events of the deposit");
      assertEquals(2, app.eventsHandled());
      assertEquals(List.of(), app.refused());
      List<WebhookDelivery> log = session.deliveries(DeliveryQuery.all().transactionId(txn));
      assertEquals(2, log.size());
      for (WebhookDelivery delivery : log) {
        assertEquals("DELIVERED", delivery.status());
        assertEquals(200L, delivery.lastResponseStatus(), "the app's own answer, recorded");
        assertTrue(delivery.attempts().get(0).url().startsWith(app.webhookUrl().toString()), delivery.attempts().get(0).url());
      }
    } // the extension closes the session, and with it the forwarding
  }

  @Test
  void forwarding_connects_again_after_a_reset(Session session) throws InterruptedException {
    try (PaymentsApp app = PaymentsApp.start(session.credentials().webhook().secret())) {
      WebhookForwarder forwarding = session.forwardWebhooks(app.webhookUrl());
      String before = forwarding.listenerId();
      session.control("POST", "/reset", null).ok(); // ends the stream with reconnect: true
      assertTrue(WebhookForwarderAccess.awaitConnections(forwarding, 2, WAIT), "connected again after the reset");
      assertFalse(before.equals(forwarding.listenerId()), "a new listener");
      String txn = session.client().post("/v1/sandbox/accounts/acct_acme_usd/deposits", DEPOSIT).ok().locationId();
      session.settle();
      assertEquals("PENDING", app.status(txn), "the reset sandbox's webhooks reach the app too");
    }
  }

  @Test
  void forwarding_stops_with_one_reason_when_its_session_is_gone(Emulator emulator) throws InterruptedException {
    try (PaymentsApp app = PaymentsApp.start("unused"); Session session = emulator.createSession()) {
      WebhookForwarder forwarding = session.forwardWebhooks(app.webhookUrl());
      emulator.control("DELETE", "/sessions/" + session.id(), null).ok(); // ended elsewhere (an idle timeout, say)
      assertTrue(forwarding.awaitStop(WAIT), "it stops by itself");
      assertFalse(forwarding.running());
      assertTrue(forwarding.stopReason().contains("session " + session.id() + " is gone"), forwarding.stopReason());
    } // closing the ended session is fine (404)
  }

  @Test
  void the_root_sandbox_forwards_too(Emulator emulator) throws InterruptedException {
    Credentials root = Credentials.defaults();
    try (PaymentsApp app = PaymentsApp.start(root.webhook().secret())) {
      WebhookForwarder forwarding = emulator.forwardWebhooks(app.webhookUrl());
      SandboxClient api = new SandboxClient(emulator.url(), root.programmeId(), root.single(), null);
      String txn = api.post("/v1/sandbox/accounts/acct_acme_usd/deposits", DEPOSIT).ok().locationId();
      emulator.control("POST", "/settle", Map.of("timeoutMs", 10_000)).ok();
      assertTrue(app.status(txn) != null, "the root's webhook reached the app");
      assertEquals(List.of(), app.refused());
      forwarding.close();
      assertTrue(forwarding.awaitStop(WAIT));
      assertEquals(null, forwarding.stopReason(), "closed, not stopped by the emulator");
    }
  }
}
