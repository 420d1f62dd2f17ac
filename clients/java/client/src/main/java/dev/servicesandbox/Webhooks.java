package dev.servicesandbox;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;

/**
 * Verification of a webhook delivery (docs/webhooks.md#verifying-deliveries-in-your-app): the key must be the
 * webhook key, the real-clock {@code X-Service-Timestamp} within {@link #TOLERANCE} of ours (either way), and
 * {@code X-Service-Signature} the hex HMAC-SHA256, keyed with the webhook secret, of apiKey + timestamp +
 * {@code POST} + the path of the webhook URL (no query string) + the raw body, compared in constant time.
 */
public final class Webhooks {
  /** How far a delivery's timestamp may be from the receiver's clock. */
  public static final Duration TOLERANCE = Duration.ofMinutes(5);

  private Webhooks() {}

  /** Why a delivery is refused, or null when it verifies. */
  public static String refusal(Key webhookKey, String apiKey, String timestamp, String signature, String path, byte[] rawBody, Instant now) {
    if (apiKey == null || timestamp == null || signature == null) return "missing X-Service-Api-Key, X-Service-Timestamp or X-Service-Signature";
    if (!apiKey.equals(webhookKey.apiKey())) return "unknown key " + apiKey;
    long sent;
    try {
      sent = Long.parseLong(timestamp);
    } catch (NumberFormatException e) {
      return "timestamp is not epoch milliseconds: " + timestamp;
    }
    if (Math.abs(now.toEpochMilli() - sent) > TOLERANCE.toMillis()) return "timestamp outside the tolerance: " + timestamp;
    String expected = Signer.hmacHex(webhookKey.secret(), (apiKey + timestamp + "POST" + path).getBytes(StandardCharsets.UTF_8), rawBody);
    return Signer.equal(expected, signature) ? null : "signature mismatch";
  }

  /** Whether a delivery verifies (see {@link #refusal}). */
  public static boolean verify(Key webhookKey, String apiKey, String timestamp, String signature, String path, byte[] rawBody) {
    return refusal(webhookKey, apiKey, timestamp, signature, path, rawBody, Instant.now()) == null;
  }
}
