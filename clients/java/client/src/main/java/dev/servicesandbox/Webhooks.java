package dev.servicesandbox;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Verification of a webhook delivery in your app (docs/webhooks.md#verifying-deliveries-in-your-app), the rules
 * every kit shares (clients/signing-vectors.json): the three headers present, {@code X-Service-Timestamp} epoch
 * milliseconds within {@link #TOLERANCE} of the receiver's clock either way (inclusive), {@code X-Service-Signature}
 * 64 hex digits (either case) equal, in constant time, to the hex HMAC-SHA256 keyed with the webhook secret of
 * apiKey + timestamp + {@code POST} + the path the delivery was posted to (its query left out) + the raw body.
 * Checked in that order; the first failure is the {@link WebhookReason}.
 *
 * <pre>{@code
 * Webhooks.Result result = Webhooks.check(webhookKey.secret(), headers.getFirst("X-Service-Api-Key"),
 *     headers.getFirst("X-Service-Timestamp"), headers.getFirst("X-Service-Signature"), "/webhooks", rawBody);
 * if (!result.valid()) respond(401, result.reason().name());
 * }</pre>
 */
public final class Webhooks {
  /** How far a delivery's timestamp may be from the receiver's clock, either way. */
  public static final Duration TOLERANCE = Duration.ofMinutes(5);

  private static final Pattern TIMESTAMP = Pattern.compile("[0-9]{1,16}");
  private static final Pattern SIGNATURE = Pattern.compile("[0-9a-fA-F]{64}");
  private static final Result VALID = new Result(null);

  private Webhooks() {}

  /**
   * The outcome of a check.
   *
   * @param reason why the delivery was refused; null when it verifies
   */
  public record Result(WebhookReason reason) {
    /**
     * Whether the delivery verifies.
     *
     * @return true when there is no reason to refuse it
     */
    public boolean valid() {
      return reason == null;
    }
  }

  /**
   * Checks a delivery against the receiver's clock now, with the default tolerance.
   *
   * @param secret the webhook secret (a session's {@code credentials().webhook().secret()})
   * @param apiKey the delivery's {@code X-Service-Api-Key}
   * @param timestamp its {@code X-Service-Timestamp}
   * @param signature its {@code X-Service-Signature}
   * @param path the path it was posted to, e.g. {@code /webhooks} (a query is ignored)
   * @param rawBody the body's bytes as received, before any parsing
   * @return valid, or the reason it is refused
   */
  public static Result check(String secret, String apiKey, String timestamp, String signature, String path, byte[] rawBody) {
    return check(secret, apiKey, timestamp, signature, path, rawBody, Instant.now(), TOLERANCE);
  }

  /**
   * Checks a delivery against a given clock and tolerance.
   *
   * @param secret the webhook secret
   * @param apiKey the delivery's {@code X-Service-Api-Key}
   * @param timestamp its {@code X-Service-Timestamp}
   * @param signature its {@code X-Service-Signature}
   * @param path the path it was posted to (a query is ignored)
   * @param rawBody the body's bytes as received
   * @param now the receiver's clock
   * @param tolerance the largest accepted distance between the timestamp and {@code now}
   * @return valid, or the reason it is refused
   */
  public static Result check(String secret, String apiKey, String timestamp, String signature, String path, byte[] rawBody,
      Instant now, Duration tolerance) {
    if (isEmpty(apiKey) || isEmpty(timestamp) || isEmpty(signature)) return new Result(WebhookReason.MISSING_HEADER);
    if (!TIMESTAMP.matcher(timestamp).matches()) return new Result(WebhookReason.MALFORMED_TIMESTAMP);
    if (Math.abs(now.toEpochMilli() - Long.parseLong(timestamp)) > tolerance.toMillis()) return new Result(WebhookReason.TIMESTAMP_OUT_OF_TOLERANCE);
    if (!SIGNATURE.matcher(signature).matches()) return new Result(WebhookReason.MALFORMED_SIGNATURE);
    int query = path.indexOf('?');
    String target = query < 0 ? path : path.substring(0, query);
    String expected = Signer.hmacHex(secret, (apiKey + timestamp + "POST" + target).getBytes(StandardCharsets.UTF_8), rawBody);
    boolean same = MessageDigest.isEqual(expected.getBytes(StandardCharsets.US_ASCII), signature.toLowerCase(Locale.ROOT).getBytes(StandardCharsets.US_ASCII));
    return same ? VALID : new Result(WebhookReason.SIGNATURE_MISMATCH);
  }

  /**
   * Whether a delivery verifies (see {@link #check(String, String, String, String, String, byte[])}).
   *
   * @param webhookKey the session's webhook key (its secret is used)
   * @param apiKey the delivery's {@code X-Service-Api-Key}
   * @param timestamp its {@code X-Service-Timestamp}
   * @param signature its {@code X-Service-Signature}
   * @param path the path it was posted to
   * @param rawBody the body's bytes as received
   * @return true when it verifies
   */
  public static boolean verify(Key webhookKey, String apiKey, String timestamp, String signature, String path, byte[] rawBody) {
    return check(webhookKey.secret(), apiKey, timestamp, signature, path, rawBody).valid();
  }

  /**
   * Verifies a delivery, or throws.
   *
   * @param webhookKey the session's webhook key (its secret is used)
   * @param apiKey the delivery's {@code X-Service-Api-Key}
   * @param timestamp its {@code X-Service-Timestamp}
   * @param signature its {@code X-Service-Signature}
   * @param path the path it was posted to
   * @param rawBody the body's bytes as received
   * @throws WebhookVerificationException with the reason when it does not verify
   */
  public static void verifyOrThrow(Key webhookKey, String apiKey, String timestamp, String signature, String path, byte[] rawBody) {
    Result result = check(webhookKey.secret(), apiKey, timestamp, signature, path, rawBody);
    if (!result.valid()) throw new WebhookVerificationException(result.reason());
  }

  private static boolean isEmpty(String value) {
    return value == null || value.isEmpty();
  }
}
