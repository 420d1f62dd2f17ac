package dev.servicesandbox.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.servicesandbox.Key;
import dev.servicesandbox.Response;
import dev.servicesandbox.SandboxClient;
import dev.servicesandbox.Session;
import dev.servicesandbox.Signer;
import dev.servicesandbox.WebhookReason;
import dev.servicesandbox.WebhookReceiver;
import dev.servicesandbox.Webhooks;
import dev.servicesandbox.junit.SandboxExtension;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** docs/authentication.md: both variants, the target as sent, and the receiver's refusals (docs/webhooks.md). */
@ExtendWith(SandboxExtension.class)
class SigningTest {
  @Test
  void the_two_variants_sign_one_canonical_string() {
    Key key = new Key("pk_sandbox_single", "sk_sandbox_single_secret");
    Instant at = Instant.parse("2026-03-01T12:00:00.123Z");
    Map<String, String> hmac = Signer.headers(key, "prg_sandbox", null, "GET", "/v1/accounts?pageSize=2", null, at);
    assertEquals("1772366400123", hmac.get(Signer.TIMESTAMP));
    assertEquals(Signer.signature(key.secret(), key.apiKey(), "1772366400123", "GET", "/v1/accounts?pageSize=2", null), hmac.get(Signer.SIGNATURE));
    byte[] body = "eyJhIjoxfQ==".getBytes(StandardCharsets.UTF_8);
    Map<String, String> payout = Signer.headers(key, "prg_sandbox", "usr_acme", "POST", "/_sessions/ses_1/v1/payout-origination/json", body, at);
    assertEquals("2026-03-01T12:00:00.123Z", payout.get(Signer.TIMESTAMP));
    assertEquals("sha256=" + Signer.signature(key.secret(), key.apiKey(), "2026-03-01T12:00:00.123Z", "POST", "/_sessions/ses_1/v1/payout-origination/json", body),
        payout.get(Signer.SIGNATURE));
    assertEquals("usr_acme", payout.get(Signer.USER_ID));
  }

  @Test
  void a_signature_without_the_session_prefix_is_refused(Session session) {
    Key key = session.credentials().single();
    String ts = Long.toString(System.currentTimeMillis());
    String withoutPrefix = Signer.signature(key.secret(), key.apiKey(), ts, "GET", "/v1/accounts", null);
    SandboxClient api = session.client();
    Map<String, String> headers = Map.of(Signer.API_KEY, key.apiKey(), Signer.TIMESTAMP, ts,
        Signer.PROGRAM_ID, session.credentials().programmeId(), Signer.SIGNATURE, withoutPrefix);
    Response refused = api.send("GET", "/v1/accounts", null, headers);
    assertEquals(401, refused.status(), refused.body());
    assertEquals("UNAUTHORIZED", refused.error().errorCode());
    assertTrue(refused.error().message().startsWith("Signature mismatch"), refused.body());

    String asSent = Signer.signature(key.secret(), key.apiKey(), ts, "GET", Signer.target(URI.create(session.baseUrl() + "/v1/accounts")), null);
    assertNotEquals(withoutPrefix, asSent);
    assertEquals(200, api.send("GET", "/v1/accounts", null, Map.of(Signer.API_KEY, key.apiKey(), Signer.TIMESTAMP, ts,
        Signer.PROGRAM_ID, session.credentials().programmeId(), Signer.SIGNATURE, asSent)).status());
    // The MULTI_USER key acting for Jane sees Jane's accounts.
    assertEquals("acct_jane_usd", session.forUser("usr_jane").get("/v1/accounts").ok().string("data", 0, "id"));
  }

  @Test
  void the_receiver_refuses_forged_stale_and_unknown_key_deliveries() throws Exception {
    Key webhookKey = new Key("wk_sandbox", "whsec_sandbox_secret");
    try (WebhookReceiver receiver = WebhookReceiver.start(webhookKey)) {
      String body = "{\"transaction\":{\"id\":\"txn_1\",\"status\":\"COMPLETED\"},\"metadata\":{\"eventId\":\"evt_1\"}}";
      String now = Long.toString(System.currentTimeMillis());
      String stale = Long.toString(System.currentTimeMillis() - 600_000);
      SandboxClient post = new SandboxClient(receiver.url().replace(WebhookReceiver.PATH, ""), "prg_sandbox", webhookKey, null);
      String good = Signer.hmacHex(webhookKey.secret(), ("wk_sandbox" + now + "POST" + WebhookReceiver.PATH + body).getBytes(StandardCharsets.UTF_8));
      assertEquals(401, post.send("POST", WebhookReceiver.PATH, body, Map.of(Signer.API_KEY, "wk_sandbox", Signer.TIMESTAMP, now,
          Signer.SIGNATURE, Signer.hmacHex("not-the-secret", ("wk_sandbox" + now + "POST" + WebhookReceiver.PATH + body).getBytes(StandardCharsets.UTF_8)))).status());
      assertEquals(401, post.send("POST", WebhookReceiver.PATH, body, Map.of(Signer.API_KEY, "wk_sandbox", Signer.TIMESTAMP, stale,
          Signer.SIGNATURE, Signer.hmacHex(webhookKey.secret(), ("wk_sandbox" + stale + "POST" + WebhookReceiver.PATH + body).getBytes(StandardCharsets.UTF_8)))).status());
      assertEquals(401, post.send("POST", WebhookReceiver.PATH, body, Map.of(Signer.API_KEY, "wk_other", Signer.TIMESTAMP, now, Signer.SIGNATURE, good)).status());
      assertEquals(200, post.send("POST", WebhookReceiver.PATH, body, Map.of(Signer.API_KEY, "wk_sandbox", Signer.TIMESTAMP, now, Signer.SIGNATURE, good)).status());
      assertEquals(200, post.send("POST", WebhookReceiver.PATH, body, Map.of(Signer.API_KEY, "wk_sandbox", Signer.TIMESTAMP, now, Signer.SIGNATURE, good)).status());
      // another key in the header is refused before the signature is looked at (docs/clients.md#receivers-one-rule-set)
      assertEquals(List.of(WebhookReason.SIGNATURE_MISMATCH, WebhookReason.TIMESTAMP_OUT_OF_TOLERANCE, WebhookReason.UNKNOWN_KEY),
          receiver.rejected().stream().map(WebhookReceiver.Rejected::reason).toList());
      assertEquals(List.of("evt_1"), receiver.eventIds());
      assertEquals(1, receiver.duplicates().size());
      assertTrue(Webhooks.verify(webhookKey, "wk_sandbox", now, good, WebhookReceiver.PATH, body.getBytes(StandardCharsets.UTF_8)));
    }
  }
}
