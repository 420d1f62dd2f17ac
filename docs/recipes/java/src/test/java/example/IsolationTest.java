package example;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.servicesandbox.Emulator;
import dev.servicesandbox.Session;
import dev.servicesandbox.SessionOptions;
import dev.servicesandbox.junit.SandboxExtension;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(SandboxExtension.class)
class IsolationTest {
  @Test
  void another_session_sees_none_of_this_sessions_changes(Session session, Emulator emulator) {
    String id = session.client().post("/v1/sandbox/accounts/acct_acme_usd/deposits",
        Map.of("depositInstructionId", "di_acme_usd_wire", "amount", "500.00")).ok().locationId();
    session.advanceClock(1_000);

    // A second session by hand; its receiver is given as its webhookUrl (the emulator posts to it directly).
    try (Session other = emulator.createSessionWithReceiver(SessionOptions.defaults())) {
      assertEquals(404, other.client().get("/v1/transactions/" + id).status());
      assertEquals("88062.80", other.client().get("/v1/accounts/acct_acme_usd").ok().string("balances", "current"));
      assertEquals("88562.80", session.client().get("/v1/accounts/acct_acme_usd").ok().string("balances", "current"));
      assertEquals(SessionOptions.START_CLOCK, other.now()); // each session has its own clock ...
      other.settle();
      assertEquals(List.of(), other.webhooks().received()); // ... and its own webhooks
    }
  }
}
