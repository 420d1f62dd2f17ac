package dev.servicesandbox;

import dev.servicesandbox.model.PayoutJsonPayload;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A signed client of the interface under one base URL (a session's {@code baseUrl}, or the server's own):
 * every call is signed with its key (docs/authentication.md), in the payout variant on
 * {@code /v1/payout-origination/...} (docs/payouts.md#signing-the-payout-variant), so no call site computes a
 * header. Immutable: {@link #withKey} and {@link #forUser} give another client.
 *
 * <pre>{@code
 * SandboxClient api = session.client();                       // the SINGLE_USER key (usr_acme)
 * Account usd = api.get("/v1/accounts/acct_acme_usd").ok().as(Account::from);
 * SandboxClient jane = session.forUser("usr_jane");           // the MULTI_USER key with X-Service-User-Id
 * }</pre>
 */
public final class SandboxClient {
  private final String baseUrl;
  private final String programmeId;
  private final Key key;
  private final String userId;
  private final Duration timeout;

  /**
   * A client of the interface under {@code baseUrl}.
   *
   * @param baseUrl where the interface answers without {@code /v1}, e.g. {@code http://127.0.0.1:4010} or a session's baseUrl
   * @param programmeId sent as X-Service-Program-Id
   * @param key the key every call is signed with
   * @param userId sent as X-Service-User-Id (a MULTI_USER key acting for a user); null for none
   */
  public SandboxClient(String baseUrl, String programmeId, Key key, String userId) {
    this(baseUrl, programmeId, key, userId, Sandbox.DEFAULT_TIMEOUT);
  }

  private SandboxClient(String baseUrl, String programmeId, Key key, String userId, Duration timeout) {
    this.baseUrl = baseUrl.replaceAll("/+$", "");
    this.programmeId = Objects.requireNonNull(programmeId, "programmeId");
    this.key = Objects.requireNonNull(key, "key");
    this.userId = userId;
    this.timeout = Objects.requireNonNull(timeout, "timeout");
  }

  /**
   * The same client, waiting at most {@code timeout} for each answer instead of {@link Sandbox#DEFAULT_TIMEOUT}
   * (a session's clients take the {@link Emulator#timeout()} of their server).
   *
   * @param timeout the longest wait for one answer
   * @return a new client
   */
  public SandboxClient withTimeout(Duration timeout) {
    return new SandboxClient(baseUrl, programmeId, key, userId, timeout);
  }

  /**
   * How long one call waits for its answer.
   *
   * @return the timeout
   */
  public Duration timeout() {
    return timeout;
  }

  /**
   * Where the interface answers.
   *
   * @return the base URL, without a trailing slash
   */
  public String baseUrl() {
    return baseUrl;
  }

  /**
   * The key every call is signed with.
   *
   * @return the key
   */
  public Key key() {
    return key;
  }

  /**
   * The same client signing with another key (no user header).
   *
   * @param other the key
   * @return a new client
   */
  public SandboxClient withKey(Key other) {
    return new SandboxClient(baseUrl, programmeId, other, null, timeout);
  }

  /**
   * The same key acting for a user: {@code X-Service-User-Id} on every call (a MULTI_USER key).
   *
   * @param user the user's id
   * @return a new client
   */
  public SandboxClient forUser(String user) {
    return new SandboxClient(baseUrl, programmeId, key, user, timeout);
  }

  /**
   * A signed GET.
   *
   * @param path the path and query, e.g. {@code /v1/accounts?pageSize=5}
   * @return the answer, whatever its status
   */
  public Response get(String path) {
    return request("GET", path, null, Map.of());
  }

  /**
   * A signed POST with a JSON body: a String is sent as it is, a record, Map or List through {@link Json#write}.
   *
   * @param path the path and query
   * @param body the body; null sends none
   * @return the answer, whatever its status
   */
  public Response post(String path, Object body) {
    return request("POST", path, body, Map.of());
  }

  /**
   * A signed PUT with a JSON body (as {@link #post}).
   *
   * @param path the path and query
   * @param body the body; null sends none
   * @return the answer, whatever its status
   */
  public Response put(String path, Object body) {
    return request("PUT", path, body, Map.of());
  }

  /**
   * A signed DELETE.
   *
   * @param path the path and query
   * @return the answer, whatever its status
   */
  public Response delete(String path) {
    return request("DELETE", path, null, Map.of());
  }

  /**
   * A signed call. {@code path} is relative to the base URL and may carry a query ({@code /v1/accounts?pageSize=5}):
   * it is signed exactly as sent (non-ASCII characters percent-encoded as UTF-8, an empty {@code ?} left out). A body that is a String or byte[] goes as it is, anything else as JSON;
   * {@code extraHeaders} (e.g. {@code Idempotency-Key}) are sent unsigned, as the server expects.
   *
   * @param method the HTTP method
   * @param path the path and query
   * @param body the body; null for none
   * @param extraHeaders more headers
   * @return the answer, whatever its status
   */
  public Response request(String method, String path, Object body, Map<String, String> extraHeaders) {
    URI uri = uri(path);
    byte[] bytes = Http.bytes(body);
    Map<String, String> headers = new LinkedHashMap<>(Signer.headers(key, programmeId, userId, method, Signer.target(uri), bytes, Instant.now()));
    if (bytes != null) headers.put("Content-Type", Signer.isPayout(Signer.target(uri)) ? "text/plain" : "application/json");
    headers.putAll(extraHeaders);
    return Http.send(method.toUpperCase(), uri, bytes, headers, timeout);
  }

  /**
   * A payout (docs/payouts.md): the payload (a JSON payload's text, or a pacs.008 XML document's bytes) is sent
   * Base64-encoded as {@code text/plain} to {@code /v1/payout-origination/{format}}, signed in the payout variant,
   * with the {@code Idempotency-Key}: the same key and payload again replay the first 202 and move no money twice.
   *
   * @param format {@code json} or {@code pacs008}
   * @param payload the payload's bytes (before Base64)
   * @param idempotencyKey the {@code Idempotency-Key}
   * @return the answer (202 when accepted)
   */
  public Response payout(String format, byte[] payload, String idempotencyKey) {
    byte[] base64 = Base64.getEncoder().encode(payload);
    return request("POST", Signer.PAYOUT_PATH + format, base64, Map.of("Idempotency-Key", idempotencyKey));
  }

  /**
   * A payout with the json payload, typed.
   *
   * @param payload the payload ({@code entityId, beneficiaryId, amount, currency, reference}, ...)
   * @param idempotencyKey the {@code Idempotency-Key}
   * @return the answer (202 when accepted)
   */
  public Response payoutJson(PayoutJsonPayload payload, String idempotencyKey) {
    return payout("json", Json.write(payload).getBytes(StandardCharsets.UTF_8), idempotencyKey);
  }

  /**
   * A payout with the json payload as a Map.
   *
   * @param payload the payload's fields
   * @param idempotencyKey the {@code Idempotency-Key}
   * @return the answer (202 when accepted)
   */
  public Response payoutJson(Map<String, ?> payload, String idempotencyKey) {
    return payout("json", Json.write(payload).getBytes(StandardCharsets.UTF_8), idempotencyKey);
  }

  /**
   * A payout with an ISO 20022 pacs.008 message.
   *
   * @param xml the XML document's bytes
   * @param idempotencyKey the {@code Idempotency-Key}
   * @return the answer (202 when accepted)
   */
  public Response payoutPacs008(byte[] xml, String idempotencyKey) {
    return payout("pacs008", xml, idempotencyKey);
  }

  /**
   * A call under the base URL with exactly the headers given, unsigned: for testing refusals.
   *
   * @param method the HTTP method
   * @param path the path and query
   * @param body the body; null for none
   * @param headers every header sent
   * @return the answer, whatever its status
   */
  public Response send(String method, String path, Object body, Map<String, String> headers) {
    return Http.send(method.toUpperCase(), uri(path), Http.bytes(body), headers, timeout);
  }

  /**
   * The URI a call goes to, in the ASCII form {@code java.net.http} sends (non-ASCII characters percent-encoded), so
   * the target signed ({@link Signer#target}) is the target sent.
   *
   * @param path the path and query
   * @return the URI
   * @throws SandboxException for a path and query that are no URI (a space, {@code %zz})
   */
  private URI uri(String path) {
    try {
      return URI.create(URI.create(baseUrl + path).toASCIIString());
    } catch (IllegalArgumentException e) {
      throw new SandboxException("not a request target: " + path + " (" + e.getMessage() + "): percent-encode it, e.g. with URLEncoder", e);
    }
  }
}
