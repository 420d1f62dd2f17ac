package example;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.servicesandbox.Emulator;
import dev.servicesandbox.Session;
import dev.servicesandbox.SessionOptions;
import dev.servicesandbox.junit.SandboxExtension;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** docs/sessions.md#ids: sessions never share an id; one seed replays them. */
@ExtendWith(SandboxExtension.class)
class IdsTest {
  static List<String> idsOf(Session session) {
    String user = session.programme().post("/v1/auth/users", Map.of("externalId", "customer-7", "type", "PERSON", "name", "Grace Hopper")).ok().string("userId");
    String txn = session.client().post("/v1/sandbox/accounts/acct_acme_usd/deposits", Map.of("depositInstructionId", "di_acme_usd_ach", "amount", "10.00")).ok().locationId();
    return List.of(user, txn);
  }

  static List<String> inOwnSession(Emulator emulator, SessionOptions options) {
    try (Session session = emulator.createSession(options)) {
      return idsOf(session);
    }
  }

  @Test
  void sessions_hand_out_ids_of_their_own_and_a_seed_replays_them(Emulator emulator) {
    List<CompletableFuture<List<String>>> four = List.of(1, 2, 3, 4).stream()
        .map(i -> CompletableFuture.supplyAsync(() -> inOwnSession(emulator, SessionOptions.defaults()))).toList();
    List<String> ids = four.stream().flatMap(f -> f.join().stream()).toList();
    assertEquals(ids.size(), new HashSet<>(ids).size(), "an id handed out twice: " + ids);

    SessionOptions seeded = SessionOptions.defaults().seed(Emulator.runLabel() + "-replay");
    assertEquals(inOwnSession(emulator, seeded), inOwnSession(emulator, seeded));
  }
}
