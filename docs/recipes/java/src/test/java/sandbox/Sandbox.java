package sandbox;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * One emulator session: an isolated sandbox (own data, clock, webhooks) inside the shared emulator process,
 * reached under its own {@code baseUrl}. {@link SandboxExtension} opens one before each test and closes it
 * after; {@link #open()} does the same by hand (try-with-resources).
 */
public final class Sandbox implements AutoCloseable {
  /** Where the emulator listens unless {@code SANDBOX_URL} says otherwise ({@code service-sandbox}'s default). */
  public static final String DEFAULT_URL = "http://127.0.0.1:4010";

  /** Every session starts frozen at this instant, so dates in answers do not depend on the day the suite runs. */
  public static final String START_CLOCK = "2026-03-01T12:00:00.000Z";

  // One client for the whole JVM: it pools connections across tests. HTTP/1.1 because the emulator
  // speaks plain HTTP/1.1 (no h2c upgrade round trip).
  static final HttpClient HTTP =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();

  public record Key(String apiKey, String secret) {}

  /** The keys of the session's first programme (docs/authentication.md); {@code single}/{@code multi} may be null. */
  public record Credentials(String programmeId, Key single, String singleUserId, Key multi, Key webhook) {}

  public record Response(int status, String body, HttpHeaders headers) {
    /** The body parsed as JSON. */
    public Object json() {
      return Json.parse(body);
    }

    /** A field of the JSON body, e.g. {@code get("data", 0, "id")}. */
    public Object get(Object... path) {
      return Json.get(json(), path);
    }
  }

  private final String serverUrl;
  private final String id;
  private final String baseUrl;
  private final Credentials credentials;
  private WebhookReceiver webhooks; // null until listen(), or opened with openWithWebhookUrl()
  private Listener listener;

  private Sandbox(String serverUrl, String id, String baseUrl, Credentials credentials) {
    this.serverUrl = serverUrl;
    this.id = id;
    this.baseUrl = baseUrl;
    this.credentials = credentials;
  }

  /** How long a server started by {@link #serverUrl()} may take to answer its health check. */
  static final Duration START_TIMEOUT = Duration.ofSeconds(60);

  private static String server; // the emulator every session of this JVM uses, once found
  private static Process startedServer; // the one this JVM started, if any

  /**
   * The label of every session this JVM creates (docs/sessions.md#labels): {@code SANDBOX_LABEL} (a CI job id,
   * say), else one made up per run. When the JVM exits, every session still carrying it is ended.
   */
  public static final String LABEL = labelOfRun();

  private static String labelOfRun() {
    String configured = System.getenv("SANDBOX_LABEL");
    return configured == null || configured.isBlank()
        ? "junit-" + java.util.UUID.randomUUID().toString().substring(0, 12)
        : configured;
  }

  /**
   * The emulator every session of this JVM uses: the one at {@code SANDBOX_URL} (default {@link #DEFAULT_URL})
   * when {@code GET /_emulator/health} answers there, otherwise one started here with the CLI ({@link #cli()},
   * plus {@code --port} on a free port) and stopped when the JVM exits. Looked up once; the first test waits for
   * it, the others find it ready. When the JVM exits, the run's sessions are ended by label first.
   */
  public static synchronized String serverUrl() {
    if (server != null) return server;
    String configured = System.getenv("SANDBOX_URL");
    String url = configured == null || configured.isBlank() ? DEFAULT_URL : configured.replaceAll("/+$", "");
    server = healthy(url) ? url : startServer(url);
    // One hook, so the sessions are ended before a server started here stops (hooks run in no set order).
    Runtime.getRuntime().addShutdownHook(new Thread(Sandbox::endRun));
    return server;
  }

  /**
   * The built CLI's command: {@code SANDBOX_CLI} (a path ending in .mjs or .js runs with node; anything else is a
   * command line), else this checkout's {@code dist/service-sandbox.mjs} three folders up from the recipe's
   * folder (the working directory of run.sh) when it exists, else {@code service-sandbox} on PATH. Never
   * {@code npx}: outside the checkout it would ask the npm registry for a package of that name.
   */
  public static List<String> cli() {
    String configured = System.getenv().getOrDefault("SANDBOX_CLI", "").trim();
    if (!configured.isEmpty()) {
      return configured.endsWith(".mjs") || configured.endsWith(".js")
          ? List.of("node", configured)
          : List.of(configured.split("\\s+"));
    }
    Path built = Path.of("..", "..", "..", "dist", "service-sandbox.mjs").toAbsolutePath().normalize();
    return Files.isRegularFile(built) ? List.of("node", built.toString()) : List.of("service-sandbox");
  }

  // DELETE /_emulator/sessions?label=...: what a test left (a crash before its close) ends with the run.
  private static void endRun() {
    try {
      String query = java.net.URLEncoder.encode(LABEL, StandardCharsets.UTF_8);
      Response res = send(admin(HttpRequest.newBuilder(URI.create(server + "/_emulator/sessions?label=" + query))).DELETE());
      if (res.status() != 200 || !List.of().equals(res.get("ended"))) System.err.println("ended the run's sessions: " + res.body());
    } catch (RuntimeException e) {
      System.err.println("ending the run's sessions: " + e);
    } finally {
      stopServer();
    }
  }

  private static boolean healthy(String url) {
    try {
      HttpRequest req = HttpRequest.newBuilder(URI.create(url + "/_emulator/health")).timeout(Duration.ofSeconds(2)).build();
      return HTTP.send(req, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
    } catch (IOException | IllegalArgumentException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private static String startServer(String triedUrl) {
    List<String> command = new ArrayList<>(cli());
    int port;
    try (ServerSocket socket = new ServerSocket(0, 0, InetAddress.getLoopbackAddress())) {
      port = socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    command.addAll(List.of("--port", Integer.toString(port)));
    String shown = String.join(" ", command);
    Path log;
    Process process;
    try {
      log = Files.createTempFile("service-sandbox-", ".log");
      log.toFile().deleteOnExit();
      process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    } catch (IOException e) {
      throw new IllegalStateException("nothing answers at " + triedUrl + "/_emulator/health and `" + shown + "` cannot start: " + e, e);
    }
    startedServer = process;
    String url = "http://127.0.0.1:" + port;
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (!healthy(url)) {
      if (!process.isAlive() || System.nanoTime() > deadline) {
        stopServer();
        String output;
        try {
          output = Files.readString(log);
        } catch (IOException e) {
          output = e.toString();
        }
        throw new IllegalStateException("nothing answers at " + triedUrl + "/_emulator/health, and `" + shown
            + "` did not answer on " + url + "/_emulator/health:\n" + output);
      }
      sleep(200);
    }
    return url;
  }

  // A `service-sandbox` wrapper script may run node as a child process: end the children too, politely first.
  private static synchronized void stopServer() {
    Process process = startedServer;
    if (process == null) return;
    startedServer = null;
    List<ProcessHandle> all = new ArrayList<>(process.descendants().toList());
    all.add(process.toHandle());
    all.forEach(ProcessHandle::destroy);
    for (ProcessHandle handle : all) {
      try {
        handle.onExit().get(10, TimeUnit.SECONDS);
      } catch (Exception e) {
        handle.destroyForcibly();
      }
    }
  }

  /** A new session on the emulator at {@link #serverUrl()}, labelled {@link #LABEL}. For its webhooks: {@link #listen()}. */
  public static Sandbox open() {
    return open(null, false);
  }

  /**
   * A session whose ids replay: two sessions with one seed answer the same requests with the same ids
   * (docs/sessions.md#ids). Without a seed a session's ids are its own.
   */
  public static Sandbox openSeeded(String seed) {
    return open(seed, false);
  }

  /**
   * A session with a webhook receiver given as its {@code webhookUrl}: the emulator posts to it directly (the
   * other way to {@link #listen()}, for an emulator that can reach the test process).
   */
  public static Sandbox openWithWebhookUrl() {
    return open(null, true);
  }

  private static Sandbox open(String seed, boolean withWebhookUrl) {
    String serverUrl = serverUrl();
    WebhookReceiver receiver = withWebhookUrl ? WebhookReceiver.start() : null;
    try {
      Response created = createSession(serverUrl, seed, receiver == null ? null : receiver.url());
      Object doc = created.json();
      Credentials credentials =
          new Credentials(
              str(doc, "credentials", "programmeId"),
              key(doc, "single"),
              (String) Json.get(doc, "credentials", "single", "userId"),
              key(doc, "multi"),
              key(doc, "webhook"));
      Sandbox sandbox = new Sandbox(serverUrl, str(doc, "id"), str(doc, "baseUrl"), credentials);
      if (receiver != null) {
        receiver.expect(credentials.webhook());
        sandbox.webhooks = receiver;
      }
      return sandbox;
    } catch (RuntimeException | Error e) {
      if (receiver != null) receiver.close();
      throw e;
    }
  }

  /** How long {@link #createSession} keeps asking while the emulator's session limit is reached. */
  static final Duration LIMIT_WAIT = Duration.ofSeconds(120);

  /**
   * {@code POST /_emulator/sessions}: a fresh sandbox with the default fixtures, a frozen clock and the run's
   * label. At the emulator's session limit (429) it asks again after the answer's {@code Retry-After} (seconds
   * until a slot is expected, docs/sessions.md#limits) for up to {@link #LIMIT_WAIT}, so a suite with more
   * threads than {@code --max-sessions} still runs: another test's session ends soon.
   */
  static Response createSession(String serverUrl, String seed, String webhookUrl) {
    String body = "{\"clock\":" + Json.quote(START_CLOCK) + ",\"label\":" + Json.quote(LABEL)
        + (seed == null ? "" : ",\"seed\":" + Json.quote(seed))
        + (webhookUrl == null ? "" : ",\"webhookUrl\":" + Json.quote(webhookUrl)) + "}";
    long deadline = System.nanoTime() + LIMIT_WAIT.toNanos();
    while (true) {
      Response res = send(admin(HttpRequest.newBuilder(URI.create(serverUrl + "/_emulator/sessions")))
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8)));
      if (res.status() == 201) return res;
      if (res.status() == 429 && System.nanoTime() < deadline) {
        long seconds = res.headers().firstValueAsLong("Retry-After").orElse(1);
        sleep(Math.max(1, seconds) * 1000);
        continue;
      }
      throw new IllegalStateException("POST " + serverUrl + "/_emulator/sessions answered " + res.status() + ": " + res.body()
          + (res.status() == 401 ? " (the emulator has --admin-token: set SANDBOX_ADMIN_TOKEN)" : ""));
    }
  }

  /**
   * Webhooks through the CLI: a verifying receiver on a free port, and
   * {@code service-sandbox listen --forward-to <it> --url <server> --session <id>}, ready when this returns.
   * The emulator never connects to the receiver itself (docs/webhooks.md#listen). Stopped by {@link #close()}.
   */
  public synchronized WebhookReceiver listen() {
    if (webhooks != null) throw new IllegalStateException("the session already has a receiver");
    WebhookReceiver receiver = WebhookReceiver.start();
    receiver.expect(credentials.webhook());
    webhooks = receiver; // closed by close() even if the listener does not start
    listener = new Listener(receiver.url(), serverUrl, id);
    return receiver;
  }

  /** The session's id ({@code ses_...}). */
  public String id() {
    return id;
  }

  /** The session's root, e.g. {@code http://127.0.0.1:4010/_sessions/ses_1a2b}; the API is under {@code baseUrl + "/v1"}. */
  public String baseUrl() {
    return baseUrl;
  }

  public Credentials credentials() {
    return credentials;
  }

  /** The webhooks this session delivered to its receiver, signature checked; null before {@link #listen()}. */
  public synchronized WebhookReceiver webhooks() {
    return webhooks;
  }

  /**
   * An HMAC-signed call with the SINGLE_USER key (docs/authentication.md#hmac-headers-server-to-server).
   * {@code path} is relative to {@link #baseUrl()}, e.g. {@code /v1/accounts?pageSize=5}; {@code body} may be null.
   */
  public Response signed(String method, String path, String body) {
    return signedWith(Objects.requireNonNull(credentials.single(), "the session's fixtures have no SINGLE_USER key"), method, path, body);
  }

  /** The same with another key (the MULTI_USER one needs an {@code X-Service-User-Id}: use {@link #send}). */
  public Response signedWith(Key key, String method, String path, String body) {
    URI uri = URI.create(baseUrl + path);
    String timestamp = Long.toString(System.currentTimeMillis());
    String signature = sign(key.secret(), key.apiKey() + timestamp + method.toUpperCase() + target(uri) + (body == null ? "" : body));
    return send(method, path, body, Map.of(
        "X-Service-Api-Key", key.apiKey(),
        "X-Service-Timestamp", timestamp,
        "X-Service-Program-Id", credentials.programmeId(),
        "X-Service-Signature", signature));
  }

  /** A call under {@link #baseUrl()} with exactly the headers given (no signing): for testing refusals. */
  public Response send(String method, String path, String body, Map<String, String> headers) {
    HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(Duration.ofSeconds(30));
    headers.forEach(req::header);
    return send(withBody(req, method, body));
  }

  /** The method and, when there is one, the JSON body (with its Content-Type). */
  private static HttpRequest.Builder withBody(HttpRequest.Builder req, String method, String body) {
    if (body == null) return req.method(method, HttpRequest.BodyPublishers.noBody());
    return req.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
  }

  /**
   * The request target the server signs against: the path AS SENT, the session's {@code /_sessions/ses_...}
   * prefix included, plus {@code ?query} exactly as sent (docs/authentication.md).
   */
  public static String target(URI uri) {
    return uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
  }

  /** Lower-case hex HMAC-SHA256 of {@code message} (UTF-8) keyed with {@code secret}. */
  public static String sign(String secret, String message) {
    return hmacHex(secret, message.getBytes(StandardCharsets.UTF_8));
  }

  /** Lower-case hex HMAC-SHA256 of the parts, one after the other, keyed with {@code secret}. */
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

  /** A control-plane call of this session, e.g. {@code control("POST", "/clock", "{\"advanceMs\":1000}")} (docs/control-plane.md). */
  public Response control(String method, String path, String body) {
    HttpRequest.Builder req = admin(HttpRequest.newBuilder(URI.create(baseUrl + "/_emulator" + path)));
    return send(withBody(req, method, body));
  }

  /** Moves this session's emulated clock on; jobs due by then (rail steps, retries) have run when it returns. */
  public Response advanceClock(long ms) {
    Response res = control("POST", "/clock", "{\"advanceMs\":" + ms + "}");
    if (res.status() != 200) throw new IllegalStateException("advancing the clock answered " + res.status() + ": " + res.body());
    return res;
  }

  /**
   * {@code POST /_emulator/settle}: answers once every job due at the session's current time has run and every
   * webhook delivery due has been attempted and answered (docs/control-plane.md#settle); the clock does not move.
   * Instead of sleeping or polling for webhooks. Fails when the emulator did not settle within 10 s.
   */
  public Response settle() {
    Response res = control("POST", "/settle", "{\"timeoutMs\":10000}");
    if (res.status() != 200 || !Boolean.TRUE.equals(res.get("settled"))) {
      throw new AssertionError("settling answered " + res.status() + ": " + res.body());
    }
    return res;
  }

  /** The first verified webhook matching {@code test}, or an assertion failure. It does not wait: settle first. */
  public WebhookReceiver.Webhook webhook(Predicate<WebhookReceiver.Webhook> test) {
    WebhookReceiver receiver = webhooks();
    if (receiver == null) throw new IllegalStateException("the session has no receiver: call listen()");
    return receiver.find(test);
  }

  /** Stops the listener, ends the session ({@code DELETE /_emulator/sessions/{id}}) and stops the receiver. */
  @Override
  public synchronized void close() {
    try {
      if (listener != null) listener.close(); // first: Ctrl+C while the session still exists
      Response res = send(admin(HttpRequest.newBuilder(URI.create(serverUrl + "/_emulator/sessions/" + id))).DELETE());
      // 404: the session had already ended (idle timeout); nothing left to clean.
      if (res.status() != 204 && res.status() != 404) {
        throw new IllegalStateException("DELETE session " + id + " answered " + res.status() + ": " + res.body());
      }
    } finally {
      if (webhooks != null) webhooks.close();
    }
  }

  // With --admin-token the control plane wants the token (docs/control-plane.md); SANDBOX_ADMIN_TOKEN carries it.
  private static HttpRequest.Builder admin(HttpRequest.Builder req) {
    String token = System.getenv("SANDBOX_ADMIN_TOKEN");
    if (token != null && !token.isEmpty()) req.header("X-Admin-Token", token);
    return req.timeout(Duration.ofSeconds(30));
  }

  private static Response send(HttpRequest.Builder req) {
    try {
      HttpResponse<String> res = HTTP.send(req.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
      return new Response(res.statusCode(), res.body(), res.headers());
    } catch (IOException e) {
      throw new IllegalStateException("cannot reach the emulator (start it with `service-sandbox`, or set SANDBOX_URL or SANDBOX_CLI): " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  // single and multi are null when a session's own fixtures have no such key (docs/sessions.md).
  private static Key key(Object doc, String name) {
    Object apiKey = Json.get(doc, "credentials", name, "apiKey");
    return apiKey == null ? null : new Key((String) apiKey, str(doc, "credentials", name, "secret"));
  }

  private static String str(Object doc, Object... path) {
    Object v = Json.get(doc, path);
    if (!(v instanceof String s)) throw new IllegalStateException("session answer lacks " + String.join(".", java.util.Arrays.stream(path).map(String::valueOf).toList()));
    return s;
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
