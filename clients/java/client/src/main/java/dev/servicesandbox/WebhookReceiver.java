package dev.servicesandbox;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * A webhook endpoint on a free loopback port that behaves as a correct receiver should
 * (docs/faults.md#receiver-check): it verifies every delivery ({@link Webhooks}), answers 401 to a bad one and
 * records why, answers 204 to a good one, and dedupes on {@code metadata.eventId}: a repeat (a retry, a chaos
 * duplicate) is acknowledged again and recorded once, its copies counted in {@link #duplicates()}. Reached through
 * {@code listen} ({@link Session#listen()}) or given as a session's {@code webhookUrl}.
 */
public final class WebhookReceiver implements AutoCloseable {
  /** The path of the receiver's URL: the signature covers it. */
  public static final String PATH = "/webhooks";

  /** A refused delivery: why, and the headers it came with. */
  public record Rejected(String reason, String apiKey, String timestamp, String signature, String rawBody) {}

  private final HttpServer server;
  private final Map<String, Webhook> received = new LinkedHashMap<>(); // by eventId, first arrival order
  private final List<Webhook> duplicates = new ArrayList<>();
  private final List<Rejected> rejected = new ArrayList<>();
  private volatile Key key;

  private WebhookReceiver(HttpServer server, Key key) {
    this.server = server;
    this.key = key;
  }

  /** A receiver checking deliveries against this webhook key; null: set it later with {@link #expect}. */
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

  /** The receiver's URL, e.g. {@code http://127.0.0.1:38211/webhooks}: listen's --forward-to, or a webhookUrl. */
  public String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort() + PATH;
  }

  /** The webhook key to check against (known once the session exists). */
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
      String reason = "POST".equals(ex.getRequestMethod())
          ? Webhooks.refusal(k, h.getFirst(Signer.API_KEY), h.getFirst(Signer.TIMESTAMP), h.getFirst(Signer.SIGNATURE), PATH, raw, Instant.now())
          : "method " + ex.getRequestMethod();
      String text = new String(raw, StandardCharsets.UTF_8);
      synchronized (this) {
        if (reason != null) {
          rejected.add(new Rejected(reason, h.getFirst(Signer.API_KEY), h.getFirst(Signer.TIMESTAMP), h.getFirst(Signer.SIGNATURE), text));
        } else {
          Object body = Json.parse(text);
          Webhook w = new Webhook((String) Json.get(body, "metadata", "eventId"), h.getFirst("X-Service-Event-Type"), text, body);
          if (w.eventId() != null && received.containsKey(w.eventId())) duplicates.add(w);
          else received.put(w.eventId() == null ? "#" + received.size() : w.eventId(), w);
        }
      }
      ex.sendResponseHeaders(reason == null ? 204 : 401, -1);
    }
  }

  /** The verified events, each once (deduplicated on metadata.eventId), in the order they first arrived. */
  public synchronized List<Webhook> received() {
    return List.copyOf(received.values());
  }

  /** Their event ids, in the same order. */
  public synchronized List<String> eventIds() {
    return List.copyOf(received.keySet());
  }

  /** Verified repeats of an event already received (acknowledged, not recorded again). */
  public synchronized List<Webhook> duplicates() {
    return List.copyOf(duplicates);
  }

  /** The refused deliveries (bad key, signature or timestamp). */
  public synchronized List<Rejected> rejected() {
    return List.copyOf(rejected);
  }

  /** The first verified event matching {@code test}; an AssertionError listing what arrived otherwise. It does not wait: settle first. */
  public synchronized Webhook find(Predicate<Webhook> test) {
    for (Webhook w : received.values()) if (test.test(w)) return w;
    throw new AssertionError("no matching webhook; received " + received.values().stream()
        .map(w -> w.eventType() + " " + w.transactionId() + " " + w.status()).toList() + ", rejected " + rejected.size());
  }

  /** The verified events of one transaction, in arrival order. */
  public synchronized List<Webhook> of(String transactionId) {
    return received.values().stream().filter(w -> transactionId.equals(w.transactionId())).toList();
  }

  @Override
  public void close() {
    server.stop(0);
    if (server.getExecutor() instanceof java.util.concurrent.ExecutorService pool) pool.shutdownNow();
  }
}
