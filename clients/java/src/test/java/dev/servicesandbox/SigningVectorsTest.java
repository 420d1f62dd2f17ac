package dev.servicesandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The signing and verification vectors every kit shares (clients/signing-vectors.json, docs/clients.md#test-vectors):
 * each request case signs to exactly its headers, each webhook case verifies or is refused with its reason, and the
 * control plane carries the admin token as a Bearer token.
 */
class SigningVectorsTest {
  static Object vectors() throws IOException {
    String configured = System.getProperty("sandbox.vectors");
    Path file = configured != null ? Path.of(configured) : null;
    for (Path dir = Path.of("").toAbsolutePath(); file == null && dir != null; dir = dir.getParent()) {
      Path candidate = dir.resolve(Path.of("clients", "signing-vectors.json"));
      if (Files.isRegularFile(candidate)) file = candidate;
    }
    if (file == null) throw new IOException("clients/signing-vectors.json not found (set -Dsandbox.vectors)");
    return Json.parse(Files.readString(file));
  }

  @Test
  void every_request_case_signs_to_its_headers() throws IOException {
    List<?> cases = (List<?>) Json.get(vectors(), "requests");
    assertFalse(cases.isEmpty());
    for (Object c : cases) {
      String name = (String) Json.get(c, "name");
      Key key = new Key((String) Json.get(c, "key", "apiKey"), (String) Json.get(c, "key", "secret"));
      Object base64 = Json.get(c, "bodyBase64");
      byte[] body = base64 instanceof String b ? Base64.getDecoder().decode(b) : ((String) Json.get(c, "body")).getBytes(StandardCharsets.UTF_8);
      @SuppressWarnings("unchecked")
      Map<String, Object> expected = (Map<String, Object>) Json.get(c, "headers");
      String target = (String) Json.get(c, "target");
      Map<String, String> headers = Signer.headers(key, (String) Json.get(c, "key", "programmeId"), (String) expected.get(Signer.USER_ID),
          (String) Json.get(c, "method"), target, body.length == 0 ? null : body, Instant.ofEpochMilli(((Number) Json.get(c, "nowMs")).longValue()));
      assertEquals(new LinkedHashMap<>(expected), new LinkedHashMap<String, Object>(headers), name);
      assertEquals("payout".equals(Json.get(c, "variant")), Signer.isPayout(target), name + ": the variant");
    }
  }

  @Test
  void every_webhook_case_verifies_or_is_refused_with_its_reason() throws IOException {
    Object all = vectors();
    List<?> reasons = (List<?>) Json.get(all, "webhookReasons");
    assertEquals(reasons, java.util.Arrays.stream(WebhookReason.values()).limit(reasons.size()).map(Enum::name).toList(),
        "the reason codes, in order, before the receiver's own");
    assertEquals(List.of("METHOD", "UNKNOWN_KEY", "NOT_JSON"),
        java.util.Arrays.stream(WebhookReason.values()).skip(reasons.size()).map(Enum::name).toList(), "the receiver's own");
    List<?> cases = (List<?>) Json.get(all, "webhooks");
    assertFalse(cases.isEmpty());
    for (Object c : cases) {
      String name = (String) Json.get(c, "name");
      Webhooks.Result result = Webhooks.check((String) Json.get(c, "secret"), (String) Json.get(c, "headers", Signer.API_KEY),
          (String) Json.get(c, "headers", Signer.TIMESTAMP), (String) Json.get(c, "headers", Signer.SIGNATURE), (String) Json.get(c, "path"),
          ((String) Json.get(c, "body")).getBytes(StandardCharsets.UTF_8), Instant.ofEpochMilli(((Number) Json.get(c, "nowMs")).longValue()),
          Duration.ofMillis(((Number) Json.get(c, "toleranceMs")).longValue()));
      assertEquals(Json.get(c, "valid"), result.valid(), name);
      Object reason = Json.get(c, "reason");
      assertEquals(reason, result.reason() == null ? null : result.reason().name(), name);
    }
  }

  @Test
  void the_control_plane_carries_the_admin_token_as_a_bearer_token() throws IOException {
    Object plane = Json.get(vectors(), "controlPlane");
    Map<String, String> headers = new LinkedHashMap<>();
    Http.admin(headers, (String) Json.get(plane, "adminToken"));
    assertEquals(Json.get(plane, "headers"), headers);
    for (Object target : (List<?>) Json.get(plane, "targets")) assertFalse(Signer.isPayout((String) target), "not signed as a payout: " + target);
    Map<String, String> none = new LinkedHashMap<>();
    Http.admin(none, null);
    assertEquals(Map.of(), none, "no token: no header");
  }
}
