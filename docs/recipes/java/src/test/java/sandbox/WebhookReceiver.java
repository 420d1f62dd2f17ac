package sandbox;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * A webhook endpoint for one test, reached through {@code listen} or given as the session's {@code webhookUrl}: a JDK {@link HttpServer} on a free loopback port that checks each
 * delivery's signature (docs/webhooks.md#what-a-delivery-looks-like) and keeps the good ones. A delivery
 * that fails the check is answered 401, as your application should, and counted in {@link #rejected()}.
 */
public final class WebhookReceiver implements AutoCloseable {
  /** The path of the receiver's URL: the signature covers it. */
  public static final String PATH = "/webhooks";

  /** How far a delivery's real-clock timestamp may be from ours (the emulator's own verifier uses 5 minutes). */
  public static final Duration TOLERANCE = Duration.ofMinutes(5);

  public record Webhook(String eventType, String rawBody, Object body) {
    /** A field of the body, e.g. {@code get("transaction", "status")}. */
    public Object get(Object... path) {
      return Json.get(body, path);
    }
  }

  private final HttpServer server;
  private final List<Webhook> received = new ArrayList<>();
  private final List<String> rejected = new ArrayList<>();
  private volatile Sandbox.Key key;

  private WebhookReceiver(HttpServer server) {
    this.server = server;
  }

  static WebhookReceiver start() {
    try {
      HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
      WebhookReceiver receiver = new WebhookReceiver(server);
      server.createContext(PATH, receiver::handle);
      server.start();
      return receiver;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The receiver's URL, e.g. {@code http://127.0.0.1:38211/webhooks}: listen's --forward-to, or the webhookUrl. */
  public String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort() + PATH;
  }

  /** The session's webhook key: known only once the session exists, which is after the receiver started. */
  void expect(Sandbox.Key webhookKey) {
    this.key = webhookKey;
  }

  /**
   * docs/webhooks.md: lower-case hex HMAC-SHA256, keyed with the webhook secret, of
   * apiKey + timestamp + "POST" + path of the webhook URL (no query) + raw body.
   */
  public static boolean verify(Sandbox.Key key, String apiKey, String timestamp, String path, byte[] rawBody, String signature) {
    if (apiKey == null || timestamp == null || signature == null || !apiKey.equals(key.apiKey())) return false;
    long sent;
    try {
      sent = Long.parseLong(timestamp);
    } catch (NumberFormatException e) {
      return false;
    }
    // The timestamp is the real wall clock even when the session's clock is frozen (docs/webhooks.md).
    if (Math.abs(System.currentTimeMillis() - sent) > TOLERANCE.toMillis()) return false;
    String expected = Sandbox.hmacHex(key.secret(), (apiKey + timestamp + "POST" + path).getBytes(StandardCharsets.UTF_8), rawBody);
    // Constant time, so the comparison does not tell an attacker how much of a guess was right.
    return MessageDigest.isEqual(expected.getBytes(StandardCharsets.US_ASCII), signature.getBytes(StandardCharsets.US_ASCII));
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex; InputStream in = ex.getRequestBody()) {
      byte[] raw = in.readAllBytes(); // the raw bytes: the signature covers them before any JSON parsing
      Sandbox.Key k = key;
      if (k == null) { // a delivery before the session answered: not possible in practice; the emulator retries
        ex.sendResponseHeaders(503, -1);
        return;
      }
      var h = ex.getRequestHeaders();
      boolean ok = "POST".equals(ex.getRequestMethod())
          && verify(k, h.getFirst("X-Service-Api-Key"), h.getFirst("X-Service-Timestamp"), PATH, raw, h.getFirst("X-Service-Signature"));
      synchronized (this) {
        if (ok) {
          String text = new String(raw, StandardCharsets.UTF_8);
          received.add(new Webhook(h.getFirst("X-Service-Event-Type"), text, Json.parse(text)));
        } else {
          rejected.add(ex.getRequestMethod() + " " + h.getFirst("X-Service-Signature"));
        }
      }
      ex.sendResponseHeaders(ok ? 204 : 401, -1);
    }
  }

  /** The verified deliveries so far, in arrival order. */
  public synchronized List<Webhook> received() {
    return List.copyOf(received);
  }

  /** The deliveries refused for a bad signature, key or timestamp. */
  public synchronized List<String> rejected() {
    return List.copyOf(rejected);
  }

  /** The first verified delivery matching {@code test} so far; fails with what did arrive. No waiting: settle first. */
  public synchronized Webhook find(Predicate<Webhook> test) {
    for (Webhook w : received) if (test.test(w)) return w;
    throw new AssertionError("no matching webhook; received " + received.stream()
        .map(w -> w.eventType() + " " + w.get("transaction", "id") + " " + w.get("transaction", "status")).toList()
        + ", rejected " + rejected.size());
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
