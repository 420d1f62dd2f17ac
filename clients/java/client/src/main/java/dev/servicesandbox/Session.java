package dev.servicesandbox;

import dev.servicesandbox.model.SettleReport;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One session: an isolated sandbox (its own data, clock, webhooks, faults, snapshots) inside the shared server,
 * reached under its own {@link #baseUrl()} (docs/sessions.md). It gives signed clients of the interface
 * ({@link #client()}, {@link #forUser}, {@link #programme()}), its control plane (clock, settle, snapshots,
 * faults, webhook chaos, the delivery log: docs/control-plane.md, docs/faults.md), and a verifying webhook
 * receiver fed by {@code service-sandbox listen} ({@link #listen()}). {@link #close()} ends it.
 */
public final class Session implements AutoCloseable {
  private final Emulator emulator;
  private final String id;
  private final String baseUrl;
  private final Credentials credentials;
  private final Object created;
  private WebhookReceiver webhooks;
  private Listener listener;
  private boolean closed;

  Session(Emulator emulator, String id, String baseUrl, Credentials credentials, Object created) {
    this.emulator = emulator;
    this.id = Objects.requireNonNull(id, "session id");
    this.baseUrl = Objects.requireNonNull(baseUrl, "session baseUrl");
    this.credentials = credentials;
    this.created = created;
  }

  /** The session's id, {@code ses_...}. */
  public String id() {
    return id;
  }

  /** Where it answers, e.g. {@code http://127.0.0.1:4010/_sessions/ses_1a2b...}: the API under {@code /v1}. */
  public String baseUrl() {
    return baseUrl;
  }

  public Credentials credentials() {
    return credentials;
  }

  public Emulator emulator() {
    return emulator;
  }

  /** The answer that created it (label, startedFrom, expiresAt, ...). */
  public Object created() {
    return created;
  }

  /** A client signing with the SINGLE_USER key (its bound user: {@code usr_acme} with the default fixtures). */
  public SandboxClient client() {
    return new SandboxClient(baseUrl, credentials.programmeId(), Objects.requireNonNull(credentials.single(), "the session's fixtures have no SINGLE_USER key"), null);
  }

  /** A client signing with the MULTI_USER key acting for {@code userId} ({@code X-Service-User-Id}). */
  public SandboxClient forUser(String userId) {
    return programme().forUser(userId);
  }

  /** A client signing with the MULTI_USER key, no user: programme-level calls such as {@code POST /v1/auth/users}. */
  public SandboxClient programme() {
    return new SandboxClient(baseUrl, credentials.programmeId(), Objects.requireNonNull(credentials.multi(), "the session's fixtures have no MULTI_USER key"), null);
  }

  /** A control-plane call of this session, e.g. {@code control("POST", "/clock", Map.of("advanceMs", 1000))}. */
  public Response control(String method, String path, Object body) {
    Map<String, String> headers = new LinkedHashMap<>();
    Http.admin(headers);
    if (body != null) headers.put("Content-Type", body instanceof byte[] ? "application/octet-stream" : "application/json");
    return Http.send(method, URI.create(baseUrl + "/_emulator" + path), Http.bytes(body), headers);
  }

  /** The session's emulated time ({@code GET /_emulator/clock}: now). */
  public String now() {
    return control("GET", "/clock", null).ok().string("now");
  }

  /** Moves the session's clock on; the jobs due by then (rail steps, reviews, webhook retries) have run when it returns. */
  public String advanceClock(long ms) {
    return control("POST", "/clock", Map.of("advanceMs", ms)).ok().string("now");
  }

  /**
   * {@code POST /_emulator/settle} (docs/control-plane.md#settle): returns once every job due now has run and every
   * webhook due now has been delivered and answered; the clock does not move. Instead of sleeping for webhooks.
   * An AssertionError when it did not settle within 10 s.
   */
  public SettleReport settle() {
    SettleReport report = control("POST", "/settle", Map.of("timeoutMs", 10_000)).ok().as(SettleReport::from);
    if (!Boolean.TRUE.equals(report.settled())) throw new AssertionError("the session did not settle within 10 s: " + report);
    return report;
  }

  /**
   * Settles, then while a webhook retry (or any job) is due later, moves the clock to it and settles again: for
   * refused deliveries under chaos, whose retries come 5 s, 30 s, ... later (docs/webhooks.md#delivery-rules).
   * Stops when nothing is waiting or after {@code maxRounds}.
   */
  public SettleReport settleRetries(int maxRounds) {
    SettleReport report = settle();
    for (int round = 0; round < maxRounds && report.waiting().deliveries() > 0 && report.nextDueAt() != null; round++) {
      long ms = java.time.Duration.between(java.time.Instant.parse(report.now()), java.time.Instant.parse(report.nextDueAt())).toMillis();
      advanceClock(Math.max(1, ms));
      report = settle();
    }
    return report;
  }

  /** Saves the session's whole state under {@code name} (docs/control-plane.md#snapshots). */
  public Response saveSnapshot(String name) {
    return control("POST", "/snapshots", Map.of("name", name)).ok();
  }

  /** Brings the state saved under {@code name} back, clock included. */
  public Response restoreSnapshot(String name) {
    return control("POST", "/snapshots/" + name + "/restore", null).ok();
  }

  /** A snapshot as one file (a SQLite database), to keep or to upload to the root ({@link Emulator#uploadSnapshot}). */
  public byte[] exportSnapshot(String name) {
    return control("GET", "/snapshots/" + name + "/export", null).ok().bytes();
  }

  /**
   * Adds a fault rule (docs/faults.md#fault-rules), e.g. an ambiguous commit:
   * {@code addFault(Map.of("match", Map.of("method", "POST", "path", "/v1/transaction-intents/* /commit"),
   * "effect", Map.of("type", "ambiguous", "status", 502), "times", 1))}; the rule as stored.
   */
  public Response addFault(Object rule) {
    return control("POST", "/faults", rule).ok();
  }

  /** Removes every fault rule. */
  public void clearFaults() {
    control("DELETE", "/faults", null).ok();
  }

  /** Replaces the webhook chaos settings (docs/faults.md#webhook-chaos); the view with its counters. */
  public Response chaos(Object settings) {
    return control("PUT", "/webhooks/chaos", settings).ok();
  }

  /** Chaos off; held attempts are sent at once. */
  public void clearChaos() {
    control("DELETE", "/webhooks/chaos", null).ok();
  }

  /** The delivery log (docs/webhooks.md#delivery-log-and-replay), e.g. {@code deliveries("?transactionId=txn_...")}: its data. */
  public List<?> deliveries(String query) {
    Object data = control("GET", "/webhooks/deliveries" + (query == null ? "" : query), null).ok().get("data");
    return data instanceof List<?> list ? list : List.of();
  }

  /**
   * Webhooks through the CLI: a verifying, deduplicating receiver on a free port, and
   * {@code service-sandbox listen --forward-to <it> --url <server> --session <id>}, ready when this returns
   * (docs/webhooks.md#listen). The emulator never connects to the receiver itself, so this works when it runs in a
   * container. Both stop with {@link #close()}.
   */
  public synchronized WebhookReceiver listen() {
    if (webhooks != null) throw new IllegalStateException("the session already has a receiver");
    WebhookReceiver receiver = WebhookReceiver.start(credentials.webhook());
    webhooks = receiver; // closed by close() even if the listener does not start
    listener = new Listener(receiver.url(), emulator.url(), id);
    return receiver;
  }

  /** The session's receiver: null before {@link #listen()} (or a session made with a receiver as its webhookUrl). */
  public synchronized WebhookReceiver webhooks() {
    return webhooks;
  }

  synchronized void attach(WebhookReceiver receiver, Listener l) {
    webhooks = receiver;
    listener = l;
  }

  /** Stops the listener, ends the session ({@code DELETE /_emulator/sessions/{id}}: 204, or 404 when it had ended) and the receiver. */
  @Override
  public synchronized void close() {
    if (closed) return;
    closed = true;
    try {
      if (listener != null) listener.close(); // first: Ctrl+C while the session still exists
      Response res = emulator.control("DELETE", "/sessions/" + id, null);
      if (res.status() != 204 && res.status() != 404) throw new IllegalStateException("DELETE session " + id + " answered " + res);
    } finally {
      if (webhooks != null) webhooks.close();
    }
  }

  @Override
  public String toString() {
    return "Session[" + id + " " + baseUrl + "]";
  }
}
