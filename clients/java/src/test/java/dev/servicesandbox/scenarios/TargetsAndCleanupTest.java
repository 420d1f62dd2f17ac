package dev.servicesandbox.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.servicesandbox.Emulator;
import dev.servicesandbox.Response;
import dev.servicesandbox.SandboxClient;
import dev.servicesandbox.SandboxException;
import dev.servicesandbox.Session;
import dev.servicesandbox.SessionOptions;
import dev.servicesandbox.Signer;
import dev.servicesandbox.junit.SandboxExtension;
import java.net.URI;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The target signed is the target sent (docs/authentication.md), and the end-of-run clean-up ends only this run's sessions. */
@ExtendWith(SandboxExtension.class)
class TargetsAndCleanupTest {
  @Test
  void a_unicode_query_and_an_empty_query_are_signed_as_sent(Session session) {
    assertEquals("/v1/x?foo=Zo%C3%AB%E6%97%A5", Signer.target(URI.create("http://h/v1/x?foo=Zoë日")));
    assertEquals("/v1/x", Signer.target(URI.create("http://h/v1/x?")));
    SandboxClient api = session.client();
    Response unicode = api.get("/v1/transactions?pageSize=2&foo=Zoë日本");
    assertNotEquals(401, unicode.status(), unicode.body()); // validated (or ignored), never a signature mismatch
    assertEquals(200, api.get("/v1/transactions?").status(), "an empty query, dropped on the way out and in the signature");
    assertEquals(200, api.get("/v1/transactions?pageSize=2").status());
  }

  @Test
  void an_unusable_target_is_the_kits_own_exception(Session session) {
    SandboxClient api = session.client();
    for (String target : List.of("/v1/accounts?name=a b", "/v1/accounts?x=%zz")) {
      SandboxException e = assertThrows(SandboxException.class, () -> api.get(target), target);
      assertEquals(SandboxException.class, e.getClass(), target);
    }
  }

  /** Another run with the same label, in another process (here: sessions this Emulator did not create), keeps its sessions. */
  @Test
  void the_end_of_run_clean_up_leaves_another_runs_sessions_with_the_same_label(Emulator shared) {
    String label = Emulator.runLabel() + "-cleanup-" + java.util.UUID.randomUUID(); // this test's own, even in runs that share SANDBOX_LABEL
    Emulator ours = Emulator.connect(shared.url()); // this run's server object, as the extension holds it
    String theirs = shared.control("POST", "/sessions", Map.of("label", label)).ok().string("id"); // not made by `ours`
    try {
      Session closed = ours.createSession(SessionOptions.defaults().label(label));
      Session left = ours.withTimeout(java.time.Duration.ofSeconds(30)).createSession(SessionOptions.defaults().label(label));
      closed.close();
      assertEquals(List.of(left.id()), ours.endRemaining(), "only the session this object made and left open");
      Object live = shared.control("GET", "/sessions?label=" + label, null).ok().get("data");
      assertEquals(List.of(theirs), ((List<?>) live).stream().map(s -> (String) ((Map<?, ?>) s).get("id")).toList());
      assertEquals(List.of(), ours.endRemaining(), "nothing left to end");
    } finally {
      shared.control("DELETE", "/sessions/" + theirs, null);
    }
  }
}
