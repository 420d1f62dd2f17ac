package example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import sandbox.Sandbox;

/** docs/sessions.md#ids: a service under test that stores the emulator's ids never sees two sessions share one. */
class IdsTest {
  static final String NEW_USER = "{\"externalId\":\"customer-7\",\"type\":\"PERSON\",\"name\":\"Grace Hopper\"}";

  /** The same two requests in any session: a user made by the programme, and a simulated deposit. */
  record HandedOut(String user, String transaction, String userBody) {}

  static HandedOut idsOf(Sandbox sandbox) {
    Sandbox.Response created = sandbox.signedWith(sandbox.credentials().multi(), "POST", "/v1/auth/users", NEW_USER);
    assertEquals(201, created.status(), created.body());
    Sandbox.Response deposit = sandbox.signed("POST", "/v1/sandbox/accounts/acct_acme_usd/deposits",
        "{\"depositInstructionId\":\"di_acme_usd_ach\",\"amount\":\"10.00\"}");
    assertEquals(202, deposit.status(), deposit.body());
    String location = deposit.headers().firstValue("Location").orElseThrow();
    return new HandedOut((String) created.get("userId"), location.substring(location.lastIndexOf('/') + 1), created.body());
  }

  static HandedOut inOwnSession() {
    try (Sandbox sandbox = Sandbox.open()) {
      return idsOf(sandbox);
    }
  }

  @Test
  void sessions_hand_out_ids_of_their_own_and_a_seed_replays_them() {
    // Four sessions at once, the same requests in each: four users and four transactions, no id twice.
    List<CompletableFuture<HandedOut>> running = new ArrayList<>();
    for (int i = 0; i < 4; i++) running.add(CompletableFuture.supplyAsync(IdsTest::inOwnSession));
    List<String> ids = new ArrayList<>();
    for (CompletableFuture<HandedOut> one : running) {
      HandedOut got = one.join();
      ids.add(got.user());
      ids.add(got.transaction());
    }
    assertEquals(ids.size(), new HashSet<>(ids).size(), "an id handed out twice: " + ids);

    // Two sessions with one seed answer the same requests byte for byte: the same ids, to replay a failure.
    String seed = Sandbox.LABEL + "-replay";
    try (Sandbox first = Sandbox.openSeeded(seed); Sandbox second = Sandbox.openSeeded(seed)) {
      HandedOut one = idsOf(first);
      assertEquals(one, idsOf(second));
      assertFalse(ids.contains(one.user()), "a seeded session's user was handed out by an unseeded one too");
    }
  }
}
