package example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import sandbox.Sandbox;
import sandbox.SandboxExtension;

@ExtendWith(SandboxExtension.class)
class SignatureTest {
  private static Map<String, String> headers(Sandbox sandbox, String timestamp, String signature) {
    return Map.of(
        "X-Service-Api-Key", sandbox.credentials().single().apiKey(),
        "X-Service-Timestamp", timestamp,
        "X-Service-Program-Id", sandbox.credentials().programmeId(),
        "X-Service-Signature", signature);
  }

  @Test
  void a_bad_signature_is_refused_with_the_error_body(Sandbox sandbox) {
    String ts = Long.toString(System.currentTimeMillis());
    Sandbox.Response res = sandbox.send("GET", "/v1/accounts", null, headers(sandbox, ts, "0".repeat(64)));

    assertEquals(401, res.status(), res.body());
    assertEquals("UNAUTHORIZED", res.get("errorCode"));
    assertTrue(((String) res.get("message")).startsWith("Signature mismatch"), res.body());
  }

  @Test
  void the_signature_covers_the_path_as_sent_with_the_session_prefix(Sandbox sandbox) {
    Sandbox.Key key = sandbox.credentials().single();
    String ts = Long.toString(System.currentTimeMillis());
    // Signed over "/v1/accounts" alone, as for a server without the session prefix: refused.
    String withoutPrefix = Sandbox.sign(key.secret(), key.apiKey() + ts + "GET" + "/v1/accounts");
    assertEquals(401, sandbox.send("GET", "/v1/accounts", null, headers(sandbox, ts, withoutPrefix)).status());

    // Signed over the target as sent ("/_sessions/ses_.../v1/accounts"): accepted.
    String asSent = Sandbox.sign(key.secret(), key.apiKey() + ts + "GET" + Sandbox.target(URI.create(sandbox.baseUrl() + "/v1/accounts")));
    assertEquals(200, sandbox.send("GET", "/v1/accounts", null, headers(sandbox, ts, asSent)).status());
  }

  @Test
  void a_stale_timestamp_is_refused(Sandbox sandbox) {
    Sandbox.Key key = sandbox.credentials().single();
    String ts = Long.toString(System.currentTimeMillis() - 120_000); // docs/authentication.md: within 60 s
    String sig = Sandbox.sign(key.secret(), key.apiKey() + ts + "GET" + Sandbox.target(URI.create(sandbox.baseUrl() + "/v1/accounts")));
    Sandbox.Response res = sandbox.send("GET", "/v1/accounts", null, headers(sandbox, ts, sig));

    assertEquals(401, res.status(), res.body());
    assertEquals("UNAUTHORIZED", res.get("errorCode"));
  }

  @Test
  void the_receiver_refuses_a_forged_webhook() throws Exception {
    // A receiver given as the session's webhookUrl (the emulator would post to it directly).
    try (Sandbox sandbox = Sandbox.openWithWebhookUrl()) {
      String body = "{\"transaction\":{\"id\":\"txn_forged\",\"status\":\"COMPLETED\"},\"metadata\":{}}";
      String ts = Long.toString(System.currentTimeMillis());
      Sandbox.Key webhook = sandbox.credentials().webhook();
      // Right key, wrong secret.
      String forged = Sandbox.sign("not-the-secret", webhook.apiKey() + ts + "POST" + "/webhooks" + body);
      HttpResponse<String> res = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build().send(
          HttpRequest.newBuilder(URI.create(sandbox.webhooks().url()))
              .header("Content-Type", "application/json")
              .header("X-Service-Api-Key", webhook.apiKey())
              .header("X-Service-Timestamp", ts)
              .header("X-Service-Signature", forged)
              .POST(HttpRequest.BodyPublishers.ofString(body))
              .build(),
          HttpResponse.BodyHandlers.ofString());

      assertEquals(401, res.statusCode());
      assertEquals(1, sandbox.webhooks().rejected().size());
      assertEquals(List.of(), sandbox.webhooks().received());
    }
  }
}
