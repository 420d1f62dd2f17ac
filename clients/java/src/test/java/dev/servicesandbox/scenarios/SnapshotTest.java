package dev.servicesandbox.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.servicesandbox.ApiException;
import dev.servicesandbox.Emulator;
import dev.servicesandbox.Json;
import dev.servicesandbox.Session;
import dev.servicesandbox.SessionOptions;
import dev.servicesandbox.junit.SandboxExtension;
import dev.servicesandbox.model.AccountDetail;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * docs/sessions.md#what-a-session-starts-from: state built once in one session, saved and exported
 * (docs/control-plane.md#snapshots), uploaded to the server's root, and a new session started from it.
 */
@ExtendWith(SandboxExtension.class)
class SnapshotTest {
  @Test
  void a_session_starts_from_a_snapshot_of_another(Session built, Emulator emulator) {
    built.client().post("/v1/sandbox/accounts/acct_acme_usd/deposits",
        Map.of("depositInstructionId", "di_acme_usd_wire", "amount", "500.00")).ok();
    built.advanceClock(1_000);
    built.saveSnapshot("funded");
    byte[] file = built.exportSnapshot("funded");
    // A name is one path segment, URL-encoded: one with a slash is refused by the name rule (400, the interface's
    // error body), never sent to another route.
    ApiException bad = assertThrows(ApiException.class, () -> built.restoreSnapshot("a/../../clock"));
    assertEquals(400, bad.status(), bad.getMessage());
    assertEquals("name", bad.response().error().validationErrors().get(0).fieldRef(), bad.getMessage());

    String name = "funded-" + built.id(); // the root's snapshots are shared by every test of the server
    emulator.uploadSnapshot(name, file);
    try (Session copy = emulator.createSession(SessionOptions.defaults().snapshot(name))) {
      assertEquals(name, Json.get(copy.created(), "startedFrom", "snapshot"));
      assertEquals("2026-03-01T12:00:01.000Z", copy.now(), "the snapshot's clock");
      assertEquals("88562.80", copy.client().get("/v1/accounts/acct_acme_usd").ok().as(AccountDetail::from).balances().current());
      // From there on the two are apart: a deposit in the copy is not in the original.
      copy.client().post("/v1/sandbox/accounts/acct_acme_usd/deposits", Map.of("depositInstructionId", "di_acme_usd_wire", "amount", "1.00")).ok();
      copy.advanceClock(1_000);
      assertEquals("88563.80", copy.client().get("/v1/accounts/acct_acme_usd").ok().as(AccountDetail::from).balances().current());
      assertEquals("88562.80", built.client().get("/v1/accounts/acct_acme_usd").ok().as(AccountDetail::from).balances().current());
    } finally {
      emulator.control("DELETE", "/snapshots/" + name, null).ok();
    }
  }
}
