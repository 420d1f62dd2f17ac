package dev.servicesandbox;

import dev.servicesandbox.model.SettleReport;
import dev.servicesandbox.model.WebhookChaos;
import dev.servicesandbox.model.WebhookDelivery;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One session: an isolated sandbox (its own data, clock, webhooks, faults, snapshots) inside the shared server,
 * reached under its own {@link #baseUrl()} (docs/sessions.md). It gives signed clients of the interface
 * ({@link #client()}, {@link #forUser}, {@link #programme()}), its control plane (clock, settle, snapshots,
 * faults, webhook chaos, the delivery log: docs/control-plane.md, docs/faults.md), and webhook forwarding to an
 * app ({@link #forwardWebhooks(URI)}) or to the kit's verifying receiver ({@link #listen()}). {@link #close()}
 * stops the forwarding and ends it.
 */
public final class Session implements AutoCloseable {
  /** How long one {@link #settle()} may wait on the server. */
  public static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(10);

  private final Emulator emulator;
  private final String id;
  private final String baseUrl;
  private final Credentials credentials;
  private final Object created;
  private final List<WebhookForwarder> forwarders = new ArrayList<>();
  private WebhookReceiver webhooks;
  private boolean closed;

  Session(Emulator emulator, String id, String baseUrl, Credentials credentials, Object created) {
    this.emulator = emulator;
    this.id = Objects.requireNonNull(id, "session id");
    this.baseUrl = Objects.requireNonNull(baseUrl, "session baseUrl");
    this.credentials = credentials;
    this.created = created;
  }

  /**
   * The session's id.
   *
   * @return {@code ses_...}
   */
  public String id() {
    return id;
  }

  /**
   * Where it answers: the API under {@code /v1}, its control plane under {@code /_emulator}.
   *
   * @return e.g. {@code http://127.0.0.1:4010/_sessions/ses_1a2b...}
   */
  public String baseUrl() {
    return baseUrl;
  }

  /**
   * The session's keys: SINGLE_USER, MULTI_USER and the webhook key.
   *
   * @return the credentials
   */
  public Credentials credentials() {
    return credentials;
  }

  /**
   * The server the session lives in.
   *
   * @return the server
   */
  public Emulator emulator() {
    return emulator;
  }

  /**
   * The answer that created it (label, startedFrom, expiresAt, ...).
   *
   * @return the parsed JSON answer
   */
  public Object created() {
    return created;
  }

  /**
   * The scenario the session started from (docs/sessions.md#scenarios): {@code name}, {@code source},
   * {@code steps}, and {@code given} (each name the scenario made, and its id).
   *
   * @return the parsed {@code scenario} of the answer, or null when the session started from none
   */
  @SuppressWarnings("unchecked")
  public Map<String, Object> scenario() {
    return created instanceof Map<?, ?> answer && answer.get("scenario") instanceof Map<?, ?> scenario ? (Map<String, Object>) scenario : null;
  }

  /**
   * A client signing with the SINGLE_USER key (its bound user: {@code usr_acme} with the default fixtures).
   *
   * @return the client
   */
  public SandboxClient client() {
    return new SandboxClient(baseUrl, credentials.programmeId(), Objects.requireNonNull(credentials.single(), "the session's fixtures have no SINGLE_USER key"), null)
        .withTimeout(emulator.timeout());
  }

  /**
   * A client signing with the MULTI_USER key acting for a user ({@code X-Service-User-Id}).
   *
   * @param userId the user, e.g. {@code usr_jane}
   * @return the client
   */
  public SandboxClient forUser(String userId) {
    return programme().forUser(userId);
  }

  /**
   * A client signing with the MULTI_USER key, no user: programme-level calls such as {@code POST /v1/auth/users}.
   *
   * @return the client
   */
  public SandboxClient programme() {
    return new SandboxClient(baseUrl, credentials.programmeId(), Objects.requireNonNull(credentials.multi(), "the session's fixtures have no MULTI_USER key"), null)
        .withTimeout(emulator.timeout());
  }

  /**
   * A control-plane call of this session, e.g. {@code control("GET", "/jobs", null)} (docs/control-plane.md). The
   * admin token goes with it ({@code SANDBOX_ADMIN_TOKEN}).
   *
   * @param method the HTTP method
   * @param path the path under {@code /_emulator}, query included
   * @param body a record, Map, List, JSON text or byte[]; null for none
   * @return the answer, whatever its status
   */
  public Response control(String method, String path, Object body) {
    return control(method, path, body, emulator.timeout());
  }

  private Response control(String method, String path, Object body, Duration timeout) {
    Map<String, String> headers = new LinkedHashMap<>();
    Http.admin(headers);
    if (body != null) headers.put("Content-Type", body instanceof byte[] ? "application/octet-stream" : "application/json");
    return Http.send(method, URI.create(baseUrl + "/_emulator" + path), Http.bytes(body), headers, timeout);
  }

  private record ClockAdvance(long advanceMs) {}

  private record SettleRequest(long timeoutMs) {}

  private record SnapshotRequest(String name) {}

  /**
   * The session's emulated time ({@code GET /_emulator/clock}).
   *
   * @return an ISO instant
   */
  public String now() {
    return control("GET", "/clock", null).ok().string("now");
  }

  /**
   * Moves the session's clock on; the jobs due by then (rail steps, reviews, webhook retries) have run when it returns.
   *
   * @param ms how far, in milliseconds
   * @return the new emulated time
   */
  public String advanceClock(long ms) {
    return control("POST", "/clock", new ClockAdvance(ms)).ok().string("now");
  }

  /**
   * {@code POST /_emulator/settle} (docs/control-plane.md#settle): returns once every job due now has run and every
   * webhook due now has been delivered and answered; the clock does not move. Instead of sleeping for webhooks.
   *
   * @return the report
   * @throws NotSettledException when it did not settle within {@link #SETTLE_TIMEOUT}
   */
  public SettleReport settle() {
    // the server waits up to SETTLE_TIMEOUT, then answers: the call's own timeout comes on top
    SettleReport report = control("POST", "/settle", new SettleRequest(SETTLE_TIMEOUT.toMillis()), SETTLE_TIMEOUT.plus(emulator.timeout()))
        .ok().as(SettleReport::from);
    if (!Boolean.TRUE.equals(report.settled())) throw new NotSettledException(report);
    return report;
  }

  /**
   * Settles, then while a webhook retry (or any job) is due later, moves the clock to it and settles again: for
   * refused deliveries under chaos, whose retries come 5 s, 30 s, ... later (docs/webhooks.md#delivery-rules).
   * Stops when no delivery is waiting or after {@code maxRounds}.
   *
   * @param maxRounds the most clock moves
   * @return the last report
   * @throws NotSettledException when one settle timed out
   */
  public SettleReport settleUntilIdle(int maxRounds) {
    SettleReport report = settle();
    for (int round = 0; round < maxRounds && report.waiting().deliveries() > 0 && report.nextDueAt() != null; round++) {
      long ms = Duration.between(Instant.parse(report.now()), Instant.parse(report.nextDueAt())).toMillis();
      advanceClock(Math.max(1, ms));
      report = settle();
    }
    return report;
  }

  /**
   * Saves the session's whole state under {@code name} (docs/control-plane.md#snapshots).
   *
   * @param name the snapshot's name
   * @return the answer (the snapshot's summary)
   */
  public Response saveSnapshot(String name) {
    return control("POST", "/snapshots", new SnapshotRequest(name)).ok();
  }

  /**
   * Brings the state saved under {@code name} back, clock included.
   *
   * @param name the snapshot's name (any characters: it is URL-encoded)
   * @return the answer
   */
  public Response restoreSnapshot(String name) {
    return control("POST", "/snapshots/" + encode(name) + "/restore", null).ok();
  }

  /**
   * A snapshot as one file (a SQLite database), to keep or to upload to the root ({@link Emulator#uploadSnapshot}).
   *
   * @param name the snapshot's name (any characters: it is URL-encoded)
   * @return the file's bytes
   */
  public byte[] exportSnapshot(String name) {
    return control("GET", "/snapshots/" + encode(name) + "/export", null).ok().bytes();
  }

  /** One path segment: every reserved character percent-encoded ({@code %20} for a space, never {@code +}). */
  static String encode(String segment) {
    return URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20");
  }

  /**
   * Adds a fault rule (docs/faults.md#fault-rules), e.g. an ambiguous commit:
   * {@code addFault(Fault.on("POST", "/v1/payout-origination/json").ambiguous(503).times(1))}.
   *
   * @param rule the rule
   * @return the answer: the rule as stored, with its id
   */
  public Response addFault(Fault rule) {
    return control("POST", "/faults", rule).ok();
  }

  /** Removes every fault rule. */
  public void clearFaults() {
    control("DELETE", "/faults", null).ok();
  }

  /**
   * Replaces the webhook chaos settings (docs/faults.md#webhook-chaos).
   *
   * @param settings the settings (components left null are off)
   * @return the view, with its counters
   */
  public WebhookChaos chaos(WebhookChaos settings) {
    return control("PUT", "/webhooks/chaos", settings).ok().as(WebhookChaos::from);
  }

  /**
   * Replaces the webhook chaos settings, given as their JSON fields (docs/faults.md#webhook-chaos), e.g.
   * {@code chaos(Map.of("seed", "s1", "duplicate", Map.of()))}.
   *
   * @param settings the settings' fields
   * @return the view, with its counters
   */
  public WebhookChaos chaos(Map<String, ?> settings) {
    return control("PUT", "/webhooks/chaos", settings).ok().as(WebhookChaos::from);
  }

  /** Chaos off; held attempts are sent at once. */
  public void clearChaos() {
    control("DELETE", "/webhooks/chaos", null).ok();
  }

  /**
   * One page of the delivery log (docs/webhooks.md#delivery-log-and-replay), each delivery with its attempts.
   *
   * @param query the filters, e.g. {@code DeliveryQuery.all().transactionId(txn)}
   * @return the deliveries
   */
  public List<WebhookDelivery> deliveries(DeliveryQuery query) {
    Object data = control("GET", "/webhooks/deliveries" + query.toQueryString(), null).ok().get("data");
    List<WebhookDelivery> out = new ArrayList<>();
    if (data instanceof List<?> list) for (Object item : list) out.add(WebhookDelivery.from(item));
    return out;
  }

  /**
   * Forwards the session's webhooks to your app, in-process (docs/webhooks.md#listen): the app's URL becomes the
   * session's webhook endpoint, deliveries are signed for its path, and the app's answers are recorded as direct
   * ones would be. The emulator never connects to the app, so this works with the emulator in a container. Ready
   * when it returns; stopped by the handle's {@code close()} or this session's.
   *
   * @param appUrl the app's webhook endpoint, e.g. {@code http://127.0.0.1:8080/webhooks}
   * @return the handle
   * @throws SandboxException when the emulator refuses or does not answer
   */
  public WebhookForwarder forwardWebhooks(URI appUrl) {
    WebhookForwarder forwarder = new WebhookForwarder(baseUrl, appUrl, "session " + id);
    synchronized (this) {
      if (!closed) {
        forwarders.add(forwarder);
        return forwarder;
      }
    }
    forwarder.close();
    throw new SandboxException("session " + id + " is closed");
  }

  /**
   * The kit's verifying, deduplicating receiver on a free port, fed by {@link #forwardWebhooks(URI)}: for tests that
   * look at the webhooks themselves. Both stop with {@link #close()}.
   *
   * @return the receiver, ready
   */
  public synchronized WebhookReceiver listen() {
    if (webhooks != null) throw new SandboxException("the session already has a receiver");
    WebhookReceiver receiver = WebhookReceiver.start(credentials.webhook());
    webhooks = receiver; // closed by close() even if forwarding does not start
    forwardWebhooks(URI.create(receiver.url()));
    return receiver;
  }

  /**
   * The session's receiver.
   *
   * @return the receiver; null before {@link #listen()} (or a session made with a receiver as its webhookUrl)
   */
  public synchronized WebhookReceiver webhooks() {
    return webhooks;
  }

  synchronized void attach(WebhookReceiver receiver) {
    webhooks = receiver;
  }

  /**
   * Stops the forwarding, ends the session ({@code DELETE /_emulator/sessions/{id}}: 204, or 404 when it had ended)
   * and closes the receiver.
   */
  @Override
  public void close() {
    List<WebhookForwarder> stopping;
    synchronized (this) {
      if (closed) return;
      closed = true;
      stopping = List.copyOf(forwarders);
    }
    try {
      stopping.forEach(WebhookForwarder::close); // first: the session's end then finds no listener to close
      Response res = emulator.control("DELETE", "/sessions/" + encode(id), null);
      if (res.status() != 204 && res.status() != 404) throw new ApiException(res);
      emulator.forget(id);
    } finally {
      synchronized (this) {
        if (webhooks != null) webhooks.close();
      }
    }
  }

  @Override
  public String toString() {
    return "Session[" + id + " " + baseUrl + "]";
  }
}
