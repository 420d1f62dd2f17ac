package example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import sandbox.Sandbox;
import sandbox.SandboxExtension;

@ExtendWith(SandboxExtension.class)
class IsolationTest {
  @Test
  void another_session_sees_none_of_this_sessions_changes(Sandbox sandbox) {
    sandbox.listen();
    Sandbox.Response accepted = sandbox.signed("POST", "/v1/sandbox/accounts/acct_acme_usd/deposits",
        "{\"depositInstructionId\":\"di_acme_usd_wire\",\"amount\":\"500.00\",\"reference\":\"ISOLATION\"}");
    assertEquals(202, accepted.status(), accepted.body());
    String id = (String) sandbox.signed("GET", "/v1/transactions?accountId=acct_acme_usd&pageSize=1", null).get("data", 0, "id");
    sandbox.advanceClock(1000);
    sandbox.settle();
    sandbox.webhook(w -> id.equals(w.get("transaction", "id")) && "COMPLETED".equals(w.get("transaction", "status")));

    // A second session, opened by hand, on the same emulator process. Its receiver is the other way to get
    // webhooks: given as the session's webhookUrl, the emulator posts to it directly.
    try (Sandbox other = Sandbox.openWithWebhookUrl()) {
      assertNotEquals(sandbox.baseUrl(), other.baseUrl());

      Sandbox.Response missing = other.signed("GET", "/v1/transactions/" + id, null);
      assertEquals(404, missing.status(), missing.body());
      assertEquals("NOT_FOUND", missing.get("errorCode"));
      assertEquals("88062.80", other.signed("GET", "/v1/accounts/acct_acme_usd", null).get("balances", "current"));
      assertEquals("88562.80", sandbox.signed("GET", "/v1/accounts/acct_acme_usd", null).get("balances", "current"));

      // Each session has its own clock ...
      assertEquals(Sandbox.START_CLOCK, other.control("GET", "/clock", null).get("now"));
      assertEquals("2026-03-01T12:00:01.000Z", sandbox.control("GET", "/clock", null).get("now"));
      // ... and its own webhooks: nothing of this session's deposit went to the other's receiver, which gets the
      // other session's own.
      other.settle();
      assertEquals(List.of(), other.webhooks().received());
      Sandbox.Response created = other.control("POST", "/accounts/acct_acme_usd/transactions",
          "{\"type\":\"DEPOSIT\",\"direction\":\"INCOMING\",\"creditAmount\":\"5.00\"}");
      assertEquals(201, created.status(), created.body());
      other.settle();
      other.webhook(w -> created.get("id").equals(w.get("transaction", "id")));
    }
  }
}
