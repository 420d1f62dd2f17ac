package dev.servicesandbox;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * A webhook endpoint on a free loopback port that behaves as a correct receiver should
 * (docs/faults.md#receiver-check), by the rules every kit's receiver follows, in their order
 * (docs/clients.md#receivers-one-rule-set): a method other than POST, a missing header, another key, a delivery that
 * does not verify ({@link Webhooks}) and a body that is not an event are each answered 401 and recorded with their
 * {@link WebhookReason}; a genuine delivery is answered 200 and deduped on {@code metadata.eventId}: a repeat (a
 * retry, a chaos duplicate) is acknowledged again (200) and recorded once, its copies counted in
 * {@link #duplicates()}. Fed by forwarding ({@link Session#listen()}) or given as a session's {@code webhookUrl}.
 *
 * <p>It speaks HTTP/1.1 itself, one request per connection, over a plain socket: the JDK's
 * {@code com.sun.net.httpserver} cannot close a connection that stops sending in the middle of a body, nor show a
 * header sent twice as Node does, and the rules need both.
 */
public final class WebhookReceiver implements AutoCloseable {
  /** The path of the receiver's URL: the signature covers it. */
  public static final String PATH = "/webhooks";

  /** How long a connection may send nothing (in its headers or its body) before it is closed. */
  public static final Duration IDLE_TIMEOUT = Duration.ofSeconds(10);

  /** The most a request's line and headers may take; more is a 431. */
  private static final int MAX_HEAD_BYTES = 64 * 1024;

  private static final Pattern DIGITS = Pattern.compile("[0-9]{1,18}");
  private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");

  /**
   * A refused delivery: why, and the headers it came with.
   *
   * @param reason why it was refused
   * @param apiKey its {@code X-Service-Api-Key}
   * @param timestamp its {@code X-Service-Timestamp}
   * @param signature its {@code X-Service-Signature}
   * @param rawBody its body as text
   */
  public record Rejected(WebhookReason reason, String apiKey, String timestamp, String signature, String rawBody) {}

  private final ServerSocket server;
  private final int idleMs;
  private final ExecutorService connections;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private final Map<String, Webhook> received = new LinkedHashMap<>(); // by eventId, first arrival order
  private final List<Webhook> duplicates = new ArrayList<>();
  private final List<Rejected> rejected = new ArrayList<>();
  private volatile Key key;

  private WebhookReceiver(ServerSocket server, Key key, Duration idle) {
    this.server = server;
    this.key = key;
    this.idleMs = (int) Math.max(1, Math.min(Integer.MAX_VALUE, idle.toMillis()));
    this.connections = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "webhook-receiver");
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * A receiver on a free loopback port.
   *
   * @param webhookKey the key to check deliveries against; null: set it later with {@link #expect} (until then
   *     every delivery is refused with {@link WebhookReason#UNKNOWN_KEY})
   * @return the receiver, listening
   */
  public static WebhookReceiver start(Key webhookKey) {
    return start(webhookKey, IDLE_TIMEOUT);
  }

  /** A receiver whose connections are closed after {@code idle} without a byte (tests use a short one). */
  static WebhookReceiver start(Key webhookKey, Duration idle) {
    try {
      ServerSocket socket = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
      WebhookReceiver receiver = new WebhookReceiver(socket, webhookKey, idle);
      receiver.connections.execute(receiver::accept);
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
    return "http://127.0.0.1:" + server.getLocalPort() + PATH;
  }

  /**
   * The webhook key to check against (known once the session exists).
   *
   * @param webhookKey the key
   */
  public void expect(Key webhookKey) {
    this.key = webhookKey;
  }

  private void accept() {
    while (!server.isClosed()) {
      Socket socket;
      try {
        socket = server.accept();
      } catch (IOException e) {
        return; // closed
      }
      open.add(socket);
      try {
        connections.execute(() -> serve(socket));
      } catch (RuntimeException e) { // the pool is shut down: close() is under way
        close(socket);
      }
    }
  }

  /** A request that gets an answer without being judged (its framing is wrong). */
  private static final class BadRequest extends Exception {
    private static final long serialVersionUID = 1L;
    final int status;

    BadRequest(int status, String message) {
      super(message, null, false, false);
      this.status = status;
    }
  }

  /** One request, as received: header names lower-cased, a header sent twice joined with ", " as Node joins it. */
  private record Request(String method, Map<String, String> headers, byte[] body) {
    String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }
  }

  private void serve(Socket socket) {
    try (socket) {
      socket.setSoTimeout(idleMs); // each read waits at most this long: a sender that stalls is cut off
      InputStream in = new BufferedInputStream(socket.getInputStream());
      OutputStream out = socket.getOutputStream();
      int status;
      try {
        Request request = read(in, out);
        if (request == null) return; // closed before a request
        status = judge(request);
      } catch (BadRequest e) {
        status = e.status;
      }
      String reason = switch (status) {
        case 200 -> "OK";
        case 401 -> "Unauthorized";
        case 431 -> "Request Header Fields Too Large";
        default -> "Bad Request";
      };
      out.write(("HTTP/1.1 " + status + " " + reason + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      out.flush();
    } catch (IOException e) {
      // nothing for the idle timeout, the peer gone, or the receiver closed: the connection ends unanswered
    } finally {
      open.remove(socket);
    }
  }

  /** Reads one request: its line, its headers, its body whatever its framing; null when the peer closed first. */
  private static Request read(InputStream in, OutputStream out) throws IOException, BadRequest {
    int[] budget = {MAX_HEAD_BYTES};
    String line;
    do {
      line = line(in, budget);
      if (line == null) return null;
    } while (line.isEmpty()); // empty lines before a request line are allowed (RFC 9112 2.2)
    String[] parts = line.split(" ", -1);
    if (parts.length != 3 || !TOKEN.matcher(parts[0]).matches() || !parts[2].startsWith("HTTP/1.")) throw new BadRequest(400, "request line");
    Map<String, List<String>> fields = new LinkedHashMap<>();
    while (true) {
      String field = line(in, budget);
      if (field == null) throw new EOFException("closed in the headers");
      if (field.isEmpty()) break;
      int colon = field.indexOf(':');
      if (colon <= 0 || !TOKEN.matcher(field.substring(0, colon)).matches()) throw new BadRequest(400, "header line"); // obs-fold too
      String value = field.substring(colon + 1).replaceAll("^[ \t]+|[ \t]+$", "");
      fields.computeIfAbsent(field.substring(0, colon).toLowerCase(Locale.ROOT), k -> new ArrayList<>()).add(value);
    }
    Map<String, String> headers = new LinkedHashMap<>();
    fields.forEach((name, values) -> headers.put(name, String.join(", ", values)));
    String length = headers.get("content-length");
    String coding = headers.get("transfer-encoding");
    if (length != null && coding != null) throw new BadRequest(400, "both Content-Length and Transfer-Encoding");
    if (length != null && !DIGITS.matcher(length).matches()) throw new BadRequest(400, "Content-Length");
    if (coding != null && !coding.equalsIgnoreCase("chunked")) throw new BadRequest(400, "Transfer-Encoding");
    if ("100-continue".equalsIgnoreCase(headers.get("expect"))) {
      out.write("HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
    }
    byte[] body;
    if (coding != null) {
      body = chunked(in, budget);
    } else if (length != null) {
      long n = Long.parseLong(length);
      if (n > Integer.MAX_VALUE - 16) throw new BadRequest(400, "Content-Length too large");
      body = in.readNBytes((int) n);
      if (body.length < n) throw new EOFException("closed in the body");
    } else {
      body = new byte[0];
    }
    return new Request(parts[0], headers, body);
  }

  private static byte[] chunked(InputStream in, int[] budget) throws IOException, BadRequest {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    while (true) {
      String size = line(in, budget);
      if (size == null) throw new EOFException("closed in the body");
      int extension = size.indexOf(';');
      String hex = (extension < 0 ? size : size.substring(0, extension)).trim();
      if (!hex.matches("[0-9a-fA-F]{1,7}")) throw new BadRequest(400, "chunk size");
      int n = Integer.parseInt(hex, 16);
      if (n == 0) break;
      byte[] chunk = in.readNBytes(n);
      if (chunk.length < n) throw new EOFException("closed in the body");
      body.write(chunk);
      String end = line(in, budget);
      if (end == null) throw new EOFException("closed in the body");
      if (!end.isEmpty()) throw new BadRequest(400, "chunk end");
    }
    for (String trailer = line(in, budget); ; trailer = line(in, budget)) { // trailers, ignored
      if (trailer == null) throw new EOFException("closed in the trailers");
      if (trailer.isEmpty()) return body.toByteArray();
    }
  }

  /** One line without its CRLF (or LF); null at the end of the stream before any byte. */
  private static String line(InputStream in, int[] budget) throws IOException, BadRequest {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    for (int b = in.read(); ; b = in.read()) {
      if (b < 0) {
        if (bytes.size() == 0) return null;
        throw new EOFException("closed in a line");
      }
      if (--budget[0] < 0) throw new BadRequest(431, "headers too large");
      if (b == '\n') break;
      bytes.write(b);
    }
    byte[] raw = bytes.toByteArray();
    int n = raw.length > 0 && raw[raw.length - 1] == '\r' ? raw.length - 1 : raw.length;
    return new String(raw, 0, n, StandardCharsets.ISO_8859_1);
  }

  /** The status for a whole request, by the rules in their order; what it refuses is recorded with the reason. */
  private int judge(Request request) {
    String apiKey = request.header(Signer.API_KEY);
    String timestamp = request.header(Signer.TIMESTAMP);
    String signature = request.header(Signer.SIGNATURE);
    String text = new String(request.body(), StandardCharsets.UTF_8);
    Key k = key;
    WebhookReason reason;
    if (!"POST".equals(request.method())) {
      reason = WebhookReason.METHOD;
    } else if (isEmpty(apiKey) || isEmpty(timestamp) || isEmpty(signature)) {
      reason = WebhookReason.MISSING_HEADER;
    } else if (k == null || !k.apiKey().equals(apiKey)) {
      reason = WebhookReason.UNKNOWN_KEY;
    } else {
      reason = Webhooks.check(k.secret(), apiKey, timestamp, signature, PATH, request.body()).reason();
    }
    Object body = null;
    String eventId = null;
    if (reason == null) {
      try {
        body = Json.parse(text);
      } catch (JsonException e) {
        // not JSON: refused below
      }
      eventId = body instanceof Map<?, ?> && Json.get(body, "metadata", "eventId") instanceof String id && !id.isEmpty() ? id : null;
      if (eventId == null) reason = WebhookReason.NOT_JSON;
    }
    synchronized (this) {
      if (reason != null) {
        rejected.add(new Rejected(reason, apiKey, timestamp, signature, text));
        return 401;
      }
      Webhook w = new Webhook(eventId, request.header("X-Service-Event-Type"), text, body);
      if (received.containsKey(eventId)) duplicates.add(w);
      else received.put(eventId, w);
      return 200;
    }
  }

  private static boolean isEmpty(String value) {
    return value == null || value.isEmpty();
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

  private static void close(Socket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      // closing: nothing to do
    }
  }

  @Override
  public void close() {
    try {
      server.close();
    } catch (IOException e) {
      // closing: nothing to do
    }
    connections.shutdownNow();
    open.forEach(WebhookReceiver::close);
  }

  @Override
  public String toString() {
    return "WebhookReceiver[" + url() + "]";
  }
}
