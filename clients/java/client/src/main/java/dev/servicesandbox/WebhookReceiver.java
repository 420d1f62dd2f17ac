package dev.servicesandbox;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * A webhook endpoint on a free loopback port that behaves as a correct receiver should
 * (docs/faults.md#receiver-check): it verifies every delivery ({@link Webhooks}), answers 401 to a bad one and
 * records why, answers 200 to a good one, and dedupes on {@code metadata.eventId}: a repeat (a retry, a chaos
 * duplicate) is acknowledged again (200) and recorded once, its copies counted in {@link #duplicates()}. Fed by
 * forwarding ({@link Session#listen()}) or given as a session's {@code webhookUrl}.
 */
public final class WebhookReceiver implements AutoCloseable {
  /** The path of the receiver's URL: the signature covers it. */
  public static final String PATH = "/webhooks";

  /**
   * A refused delivery: why, and the headers it came with.
   *
   * @param reason why it was refused; null for a request that was not a POST
   * @param apiKey its {@code X-Service-Api-Key}
   * @param timestamp its {@code X-Service-Timestamp}
   * @param signature its {@code X-Service-Signature}
   * @param rawBody its body as text
   */
  public record Rejected(WebhookReason reason, String apiKey, String timestamp, String signature, String rawBody) {}

  private final HttpServer server;
  private final Map<String, Webhook> received = new LinkedHashMap<>(); // by eventId, first arrival order
  private final List<Webhook> duplicates = new ArrayList<>();
  private final List<Rejected> rejected = new ArrayList<>();
  private volatile Key key;

  private WebhookReceiver(HttpServer server, Key key) {
    this.server = server;
    this.key = key;
  }

  /**
   * A receiver on a free loopback port.
   *
   * @param webhookKey the key to check deliveries against; null: set it later with {@link #expect}
   * @return the receiver, listening
   */
  public static WebhookReceiver start(Key webhookKey) {
    try {
      HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
      WebhookReceiver receiver = new WebhookReceiver(server, webhookKey);
      server.createContext(PATH, receiver::handle);
      server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "webhook-receiver");
        t.setDaemon(true);
        return t;
      }));
      server.start();
      return receiver;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The receiver's URL: a forwarding target, or a session's webhookUrl.
   *
   * @return e.g. {@code http://127.0.0.1:38211/webhooks}
   */
  public String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort() + PATH;
  }

  /**
   * The webhook key to check against (known once the session exists).
   *
   * @param webhookKey the key
   */
  public void expect(Key webhookKey) {
    this.key = webhookKey;
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex; InputStream in = ex.getRequestBody()) {
      byte[] raw = in.readAllBytes(); // the raw bytes: the signature covers them, before any parsing
      Key k = key;
      if (k == null) { // not possible in practice (the session answers first); the emulator retries
        ex.sendResponseHeaders(503, -1);
        return;
      }
      var h = ex.getRequestHeaders();
      boolean post = "POST".equals(ex.getRequestMethod());
      WebhookReason reason = post
          ? Webhooks.check(k.secret(), h.getFirst(Signer.API_KEY), h.getFirst(Signer.TIMESTAMP), h.getFirst(Signer.SIGNATURE), PATH, raw).reason()
          : null;
      boolean accepted = post && reason == null;
      String text = new String(raw, StandardCharsets.UTF_8);
      synchronized (this) {
        if (!accepted) {
          rejected.add(new Rejected(reason, h.getFirst(Signer.API_KEY), h.getFirst(Signer.TIMESTAMP), h.getFirst(Signer.SIGNATURE), text));
        } else {
          Object body = Json.parse(text);
          Webhook w = new Webhook((String) Json.get(body, "metadata", "eventId"), h.getFirst("X-Service-Event-Type"), text, body);
          if (w.eventId() != null && received.containsKey(w.eventId())) duplicates.add(w);
          else received.put(w.eventId() == null ? "#" + received.size() : w.eventId(), w);
        }
      }
      ex.sendResponseHeaders(accepted ? 200 : post ? 401 : 405, -1);
    }
  }

  /**
   * The verified events, each once (deduplicated on metadata.eventId), in the order they first arrived.
   *
   * @return a copy of the list
   */
  public synchronized List<Webhook> received() {
    return List.copyOf(received.values());
  }

  /**
   * The verified events' ids, in the order they first arrived.
   *
   * @return a copy of the list
   */
  public synchronized List<String> eventIds() {
    return List.copyOf(received.keySet());
  }

  /**
   * Verified repeats of an event already received (acknowledged, not recorded again).
   *
   * @return a copy of the list
   */
  public synchronized List<Webhook> duplicates() {
    return List.copyOf(duplicates);
  }

  /**
   * The refused deliveries (each with its reason code).
   *
   * @return a copy of the list
   */
  public synchronized List<Rejected> rejected() {
    return List.copyOf(rejected);
  }

  /**
   * The first verified event matching {@code test}. It does not wait: settle first.
   *
   * @param test the condition
   * @return the event
   * @throws AssertionError listing what arrived, when none matches (a test's failure)
   */
  public synchronized Webhook find(Predicate<Webhook> test) {
    for (Webhook w : received.values()) if (test.test(w)) return w;
    throw new AssertionError("no matching webhook; received " + received.values().stream()
        .map(w -> w.eventType() + " " + w.transactionId() + " " + w.status()).toList() + ", rejected " + rejected.size());
  }

  /**
   * The verified events of one transaction, in arrival order.
   *
   * @param transactionId the transaction
   * @return the events
   */
  public synchronized List<Webhook> of(String transactionId) {
    return received.values().stream().filter(w -> transactionId.equals(w.transactionId())).toList();
  }

  @Override
  public void close() {
    server.stop(0);
    if (server.getExecutor() instanceof java.util.concurrent.ExecutorService pool) pool.shutdownNow();
  }
}
