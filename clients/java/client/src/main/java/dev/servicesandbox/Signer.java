package dev.servicesandbox;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The signing rules on their own (docs/authentication.md#hmac-headers-server-to-server): lower-case hex
 * HMAC-SHA256, keyed with the key's secret, of apiKey + timestamp + METHOD + the request target as sent (path, a
 * session's {@code /_sessions/ses_...} prefix included, and {@code ?query}) + the raw body, no separators. Two
 * variants: the HMAC mode (timestamp in epoch milliseconds, bare hex) and the payout endpoint's
 * (docs/payouts.md#signing-the-payout-variant: RFC 3339 UTC timestamp, {@code sha256=<hex>}); both sign the same
 * canonical string. {@link SandboxClient} picks the variant from the path.
 */
public final class Signer {
  /** Requests under this path (after a session's prefix) use the payout variant. */
  public static final String PAYOUT_PATH = "/v1/payout-origination/";

  /** The header naming the key. */
  public static final String API_KEY = "X-Service-Api-Key";
  /** The header with the signing time. */
  public static final String TIMESTAMP = "X-Service-Timestamp";
  /** The header naming the programme. */
  public static final String PROGRAM_ID = "X-Service-Program-Id";
  /** The header naming the user a MULTI_USER key acts for (not signed). */
  public static final String USER_ID = "X-Service-User-Id";
  /** The header with the signature. */
  public static final String SIGNATURE = "X-Service-Signature";

  /** The payout variant's timestamp: RFC 3339 UTC, always with milliseconds ({@code 2026-03-01T12:00:00.000Z}). */
  private static final DateTimeFormatter PAYOUT_TIME = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

  private Signer() {}

  /**
   * Lower-case hex HMAC-SHA256 of the parts, one after the other, keyed with {@code secret}.
   *
   * @param secret the key's secret
   * @param parts the bytes to sign, in order
   * @return 64 lower-case hex digits
   */
  public static String hmacHex(String secret, byte[]... parts) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
      for (byte[] part : parts) mac.update(part);
      return HexFormat.of().formatHex(mac.doFinal());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * The canonical signature: hex HMAC of apiKey + timestamp + METHOD + target + body.
   *
   * @param secret the key's secret
   * @param apiKey the key
   * @param timestamp the timestamp as sent
   * @param method the HTTP method (upper-cased here)
   * @param target the path and query as sent
   * @param body the raw body; null for none
   * @return 64 lower-case hex digits
   */
  public static String signature(String secret, String apiKey, String timestamp, String method, String target, byte[] body) {
    byte[] head = (apiKey + timestamp + method.toUpperCase() + target).getBytes(StandardCharsets.UTF_8);
    return hmacHex(secret, head, body == null ? new byte[0] : body);
  }

  /**
   * The request target as {@code java.net.http} sends it, which is what the server checks: the raw path (or
   * {@code /}) and {@code ?query}, non-ASCII characters percent-encoded as UTF-8 ({@link URI#toASCIIString()}), and
   * an empty query left out as the client leaves it out ({@code /v1/transactions?} goes as {@code /v1/transactions}).
   *
   * @param uri the request's URI
   * @return the target, e.g. {@code /v1/accounts?pageSize=5}
   */
  public static String target(URI uri) {
    URI sent = URI.create(uri.toASCIIString());
    String path = sent.getRawPath() == null || sent.getRawPath().isEmpty() ? "/" : sent.getRawPath();
    String query = sent.getRawQuery();
    return query == null || query.isEmpty() ? path : path + "?" + query;
  }

  /**
   * Whether a request target is on the payout endpoint: its path, after an optional session prefix
   * {@code /_sessions/{id}}, starts with {@link #PAYOUT_PATH} (docs/sessions.md#addresses-and-signing).
   *
   * @param target the path and query as sent
   * @return true for the payout variant
   */
  public static boolean isPayout(String target) {
    return target.replaceFirst("^/_sessions/[^/?]+", "").startsWith(PAYOUT_PATH);
  }

  /**
   * The signed headers for a request ({@code X-Service-User-Id} added when {@code userId} is not null: a
   * MULTI_USER key acting for a user; it is not signed). The variant follows the target; {@code now} is the
   * real clock (the server allows 60 s of skew, 300 s on the payout endpoint).
   *
   * @param key the key to sign with
   * @param programmeId sent as {@code X-Service-Program-Id}
   * @param userId sent as {@code X-Service-User-Id}; null for none
   * @param method the HTTP method
   * @param target the path and query as sent
   * @param body the raw body; null for none
   * @param now the signing time
   * @return the headers, in a stable order
   */
  public static Map<String, String> headers(Key key, String programmeId, String userId, String method, String target, byte[] body, Instant now) {
    boolean payout = isPayout(target);
    String timestamp = payout
        ? PAYOUT_TIME.format(now)
        : Long.toString(now.toEpochMilli());
    String hex = signature(key.secret(), key.apiKey(), timestamp, method, target, body);
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put(API_KEY, key.apiKey());
    headers.put(TIMESTAMP, timestamp);
    headers.put(PROGRAM_ID, programmeId);
    headers.put(SIGNATURE, payout ? "sha256=" + hex : hex);
    if (userId != null) headers.put(USER_ID, userId);
    return headers;
  }

  /**
   * Constant-time comparison of two signatures, so a mismatch does not tell how much of a guess was right.
   *
   * @param expected the signature computed here
   * @param actual the one received
   * @return whether they are equal
   */
  public static boolean equal(String expected, String actual) {
    if (expected == null || actual == null) return false;
    return MessageDigest.isEqual(expected.getBytes(StandardCharsets.US_ASCII), actual.getBytes(StandardCharsets.US_ASCII));
  }
}
