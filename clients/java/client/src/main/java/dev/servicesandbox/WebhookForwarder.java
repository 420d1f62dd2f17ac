package dev.servicesandbox;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.ProtocolException;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Webhook forwarding in-process, the protocol of {@code service-sandbox listen} spoken by the kit itself
 * (docs/webhooks.md#listen), so no Node process runs beside the tests: it holds
 * {@code GET {base}/_emulator/webhooks/listen/stream?forwardTo=URL} open, posts every attempt the emulator hands
 * over to the app as it is (the same headers and bytes, signed for the app URL's path), and reports the app's
 * answer to {@code POST {base}/_emulator/webhooks/listen/{listenerId}/results}. The admin token
 * ({@code SANDBOX_ADMIN_TOKEN}) goes with every request. When the sandbox is reset the stream ends with
 * {@code reconnect: true} and it connects again; when a dropped connection cannot be made again it retries every
 * second; when its session is gone, another listener takes over, or the relay is stopped, it stops with one
 * message ({@link #stopReason()}, logged once at INFO). Made by {@link Session#forwardWebhooks(URI)} or
 * {@link Emulator#forwardWebhooks(URI)}: ready when returned; {@link #close()} stops it (the session's
 * {@code close()} does too).
 */
public final class WebhookForwarder implements AutoCloseable {
  /** How long the first connection may take to answer {@code ready}. */
  public static final Duration READY_TIMEOUT = Duration.ofSeconds(30);

  /** How long to wait before connecting again after a connection failed. */
  static final long RETRY_MS = 1000;

  /** The first bytes of the app's answer read and reported back: what the delivery log keeps (2 KiB). */
  static final int ANSWER_BYTES_REPORTED = 2048;

  /** The longest wait for those bytes once the status has come (docs/clients.md#java-forwarding). */
  static final long ANSWER_BODY_WAIT_MS = 1000;

  /** Headers java.net.http sets itself and refuses from the caller. */
  private static final Set<String> RESTRICTED = Set.of("connection", "content-length", "expect", "host", "upgrade");

  private static final System.Logger LOG = System.getLogger("dev.servicesandbox");

  private final String base;
  private final URI appUrl;
  private final String describedAs;
  private final CountDownLatch ready = new CountDownLatch(1);
  private final CountDownLatch stopped = new CountDownLatch(1);
  private final Object connectedMonitor = new Object();
  private int connections; // ready events seen: 2 after one reconnect
  private final ExecutorService posts;
  private final Thread reader;
  private volatile String listenerId;
  private volatile String stopReason;
  private volatile boolean closed;
  private volatile InputStream stream;

  /**
   * Connects and waits for the emulator's {@code ready}.
   *
   * @param base the sandbox's base URL: the server's (the root sandbox) or a session's
   * @param appUrl the app's webhook endpoint
   * @param describedAs what the base is, for messages ({@code session ses_...} or {@code the root sandbox})
   */
  WebhookForwarder(String base, URI appUrl, String describedAs) {
    this.base = base;
    this.appUrl = appUrl;
    this.describedAs = describedAs;
    this.posts = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "forward-webhooks " + describedAs);
      t.setDaemon(true);
      return t;
    });
    this.reader = new Thread(this::run, "forward-webhooks " + describedAs);
    reader.setDaemon(true);
    reader.start();
    boolean answered;
    try {
      answered = ready.await(READY_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      answered = false;
    }
    if (!answered || listenerId == null) {
      String why = stopReason;
      close();
      throw new SandboxException("webhook forwarding of " + describedAs + " to " + appUrl + " did not start: "
          + (why != null ? why : "no ready event within " + READY_TIMEOUT.toSeconds() + " s"));
    }
  }

  /**
   * The app URL deliveries go to.
   *
   * @return the URL given
   */
  public URI appUrl() {
    return appUrl;
  }

  /**
   * The emulator's id of the current connection ({@code lst_...}).
   *
   * @return the listener id; it changes when the forwarder connects again
   */
  public String listenerId() {
    return listenerId;
  }

  /**
   * Whether it is still forwarding (neither closed nor stopped by the emulator).
   *
   * @return true while running
   */
  public boolean running() {
    return !closed && stopReason == null;
  }

  /**
   * Why it stopped by itself (the session is gone, another listener took over, the relay was stopped).
   *
   * @return the message, or null while running or after {@link #close()}
   */
  public String stopReason() {
    return stopReason;
  }

  private void run() {
    while (!closed && stopReason == null) {
      try {
        connectOnce();
      } catch (Stop stop) {
        if (!closed) {
          stopReason = stop.getMessage();
          // a refusal of the first connection is the constructor's exception; a stop after it, this one line
          if (listenerId != null) LOG.log(System.Logger.Level.INFO, stopReason);
        }
        break;
      } catch (IOException | RuntimeException e) {
        if (closed) break;
        if (listenerId == null) { // never connected: the constructor reports it
          stopReason = "cannot reach " + base + " (" + e + ")";
          break;
        }
        LOG.log(System.Logger.Level.DEBUG, () -> "forwarding of " + describedAs + ": " + e + "; connecting again");
        pause(RETRY_MS);
      } catch (InterruptedException e) {
        break; // close()
      }
    }
    ready.countDown();
    posts.shutdown();
    stopped.countDown();
    synchronized (connectedMonitor) {
      connectedMonitor.notifyAll(); // a waiter for a reconnect that will not come
    }
  }

  /**
   * Waits until it has stopped: by itself ({@link #stopReason()} says why) or by {@link #close()}.
   *
   * @param timeout the longest wait
   * @return true when it has stopped
   * @throws InterruptedException when the waiting thread is interrupted
   */
  public boolean awaitStop(Duration timeout) throws InterruptedException {
    return stopped.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Waits until the emulator has said {@code ready} {@code count} times in all (a reconnect makes 2); for tests. */
  boolean awaitConnections(int count, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (connectedMonitor) {
      while (connections < count) {
        long left = deadline - System.nanoTime();
        if (left <= 0 || !running()) return connections >= count;
        TimeUnit.NANOSECONDS.timedWait(connectedMonitor, left);
      }
      return true;
    }
  }

  /** One connection, until the stream ends: returns to connect again, throws Stop to stop. */
  private void connectOnce() throws IOException, InterruptedException {
    String url = base + "/_emulator/webhooks/listen/stream?forwardTo=" + URLEncoder.encode(appUrl.toString(), StandardCharsets.UTF_8);
    HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(url)).GET().header("Accept", "text/event-stream");
    Map<String, String> admin = new LinkedHashMap<>();
    Http.admin(admin);
    admin.forEach(req::header);
    HttpResponse<InputStream> res = Http.CLIENT.send(req.build(), HttpResponse.BodyHandlers.ofInputStream());
    if (res.statusCode() != 200) {
      String body;
      try (InputStream in = res.body()) {
        body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
      if (res.statusCode() == 404 && listenerId != null) throw new Stop(describedAs + " is gone (ended or expired): forwarding to " + appUrl + " stopped");
      String refusal = base + " refused the listener: " + res.statusCode() + " " + body;
      if (res.statusCode() / 100 == 4) throw new Stop(refusal);
      throw new IOException(refusal);
    }
    stream = res.body();
    if (closed) stream.close();
    try (BufferedReader in = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
      String event = "message";
      StringBuilder data = new StringBuilder();
      for (String line; (line = in.readLine()) != null; ) {
        if (line.isEmpty()) {
          if (data.length() > 0 && handle(event, data.toString())) return;
          event = "message";
          data.setLength(0);
        } else if (line.startsWith("event:")) {
          event = line.substring(6).trim();
        } else if (line.startsWith("data:")) {
          if (data.length() > 0) data.append('\n');
          data.append(line.substring(5).stripLeading());
        } // a line starting with ':' is a keep-alive comment
      }
    }
  }

  /** One event of the stream; true when the stream is over (connect again), Stop to stop. */
  private boolean handle(String event, String data) {
    Object payload = Json.parse(data);
    switch (event) {
      case "ready" -> {
        listenerId = (String) Json.get(payload, "listenerId");
        synchronized (connectedMonitor) {
          connections++;
          connectedMonitor.notifyAll();
        }
        ready.countDown();
        return false;
      }
      case "attempt" -> {
        String id = listenerId;
        posts.execute(() -> forward(id, payload));
        return false;
      }
      case "replaced" -> throw new Stop("another listener took over the webhooks of " + describedAs + ": forwarding to " + appUrl + " stopped");
      case "closed" -> {
        if (Boolean.TRUE.equals(Json.get(payload, "reconnect"))) return true;
        throw new Stop("the emulator ended forwarding of " + describedAs + ": " + Json.get(payload, "reason"));
      }
      default -> {
        return false;
      }
    }
  }

  /**
   * Posts one attempt to the app exactly as the emulator would have sent it, and reports the answer as direct
   * delivery records it (src/lib/http-post.ts, docs/webhooks.md#delivery-rules): the status once it comes (a redirect
   * is not followed: java.net.http's default), with at most {@link #ANSWER_BYTES_REPORTED} bytes of the body read for
   * at most {@link #ANSWER_BODY_WAIT_MS} (and half the time the attempt has left), then the connection is let go; a
   * connection closed without an answer, or an answer that is not HTTP, is reported at once as what it is.
   */
  private void forward(String id, Object attempt) {
    long started = System.nanoTime();
    String attemptId = (String) Json.get(attempt, "attemptId");
    Object target = Json.get(attempt, "url");
    long timeoutMs = Json.get(attempt, "timeoutMs") instanceof Number n ? Math.max(1, n.longValue()) : 10_000;
    long deadline = started + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    Integer status = null;
    String answer = null;
    String error = null;
    Double latencyMs = null;
    try {
      HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(target instanceof String s ? s : appUrl.toString()))
          .timeout(Duration.ofMillis(timeoutMs))
          .POST(HttpRequest.BodyPublishers.ofString(String.valueOf(Json.get(attempt, "body")), StandardCharsets.UTF_8));
      if (Json.get(attempt, "headers") instanceof Map<?, ?> headers) {
        headers.forEach((name, value) -> {
          if (!RESTRICTED.contains(String.valueOf(name).toLowerCase(java.util.Locale.ROOT))) req.header(String.valueOf(name), String.valueOf(value));
        });
      }
      CompletableFuture<Integer> statusLine = new CompletableFuture<>();
      AnswerPreview preview = new AnswerPreview(ANSWER_BYTES_REPORTED);
      Http.CLIENT.sendAsync(req.build(), info -> {
        statusLine.complete(info.statusCode());
        return preview;
      }).whenComplete((res, failure) -> {
        if (failure != null) statusLine.completeExceptionally(failure);
      });
      status = statusLine.get(); // the request's timeout bounds the wait (HttpTimeoutException)
      latencyMs = millisSince(started); // to the status line, as direct delivery measures it
      long wait = Math.min(ANSWER_BODY_WAIT_MS, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()) / 2);
      byte[] first;
      try {
        first = preview.getBody().toCompletableFuture().get(Math.max(0, wait), TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) { // the body stalls: what came is kept, the status stands
        first = preview.stop();
      }
      answer = first.length == 0 ? null : new String(first, StandardCharsets.UTF_8);
    } catch (ExecutionException e) {
      error = describe(e.getCause(), timeoutMs);
    } catch (IllegalArgumentException e) {
      error = "not a URL to post to: " + e.getMessage();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      error = "forwarding stopped";
    }
    Map<String, Object> result = new LinkedHashMap<>(); // status null, not absent, when the app did not answer
    result.put("attemptId", attemptId);
    result.put("status", status);
    if (answer != null) result.put("responseBody", answer);
    if (error != null) result.put("error", error);
    result.put("latencyMs", latencyMs != null ? latencyMs : millisSince(started));
    Map<String, String> headers = new LinkedHashMap<>();
    Http.admin(headers);
    headers.put("Content-Type", "application/json");
    try {
      Http.send("POST", URI.create(base + "/_emulator/webhooks/listen/" + URLEncoder.encode(id, StandardCharsets.UTF_8) + "/results"),
          Http.bytes(result), headers);
    } catch (SandboxException e) {
      // the stream dropped meanwhile: the emulator counts the attempt as failed and retries it
    }
  }

  private static double millisSince(long started) {
    return Math.round((System.nanoTime() - started) / 100_000.0) / 10.0;
  }

  /** Why no status came, in the delivery log's words: a timeout, a connection closed without an answer, not HTTP. */
  static String describe(Throwable failure, long timeoutMs) {
    if (failure instanceof HttpTimeoutException) return "no answer within " + timeoutMs + " ms (timeout)";
    if (failure instanceof ProtocolException) return "the answer is not HTTP (" + failure.getMessage() + ")";
    if (failure instanceof EOFException || failure instanceof IOException && String.valueOf(failure.getMessage()).contains("received no bytes")) {
      return "the connection was closed without an answer (" + failure.getMessage() + ")";
    }
    return String.valueOf(failure);
  }

  /** The first bytes of the app's answer: at most {@code limit}, then the subscription (and the connection) is let go. */
  private static final class AnswerPreview implements HttpResponse.BodySubscriber<byte[]> {
    private final int limit;
    private final ByteArrayOutputStream kept = new ByteArrayOutputStream();
    private final CompletableFuture<byte[]> body = new CompletableFuture<>();
    private Flow.Subscription subscription;

    AnswerPreview(int limit) {
      this.limit = limit;
    }

    @Override
    public synchronized void onSubscribe(Flow.Subscription s) {
      subscription = s;
      if (body.isDone()) s.cancel();
      else s.request(1);
    }

    @Override
    public synchronized void onNext(List<ByteBuffer> items) {
      if (body.isDone()) return;
      for (ByteBuffer item : items) {
        byte[] chunk = new byte[Math.min(item.remaining(), limit - kept.size())];
        item.get(chunk);
        kept.write(chunk, 0, chunk.length);
      }
      if (kept.size() >= limit) stop();
      else subscription.request(1);
    }

    @Override
    public void onError(Throwable failure) {
      stop(); // the status already came; a body cut short does not change the outcome
    }

    @Override
    public void onComplete() {
      stop();
    }

    /** Ends the read: what came so far is the preview. */
    synchronized byte[] stop() {
      if (body.complete(kept.toByteArray()) && subscription != null) subscription.cancel();
      return body.join();
    }

    @Override
    public CompletionStage<byte[]> getBody() {
      return body;
    }
  }

  private void pause(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Stops forwarding: the stream is closed (the emulator then fails attempts to the app URL until a listener connects). */
  @Override
  public void close() {
    if (closed) return;
    closed = true;
    InputStream s = stream;
    if (s != null) {
      try {
        s.close();
      } catch (IOException e) {
        // closing a stream being read: nothing to do
      }
    }
    reader.interrupt();
    posts.shutdownNow();
    ready.countDown();
  }

  @Override
  public String toString() {
    return "WebhookForwarder[" + describedAs + " -> " + appUrl + (running() ? "" : ", stopped") + "]";
  }

  /** The forwarder stops by itself, with this message. */
  private static final class Stop extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Stop(String message) {
      super(message, null, false, false);
    }
  }
}
