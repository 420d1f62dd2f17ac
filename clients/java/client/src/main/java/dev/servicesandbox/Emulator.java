package dev.servicesandbox;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One emulator server: found at a URL, or started here with the CLI. It hands out sessions
 * ({@link #createSession}), isolated sandboxes of their own under one port (docs/sessions.md), and reaches the
 * root's control plane. {@link #shared()} is the one server of the JVM: {@code SANDBOX_URL} (default
 * {@link #DEFAULT_URL}) when {@code GET /_emulator/health} answers there, else one started with {@link #cli()}
 * on a free port and stopped when the JVM exits (docs/recipes.md#how-sessions-isolate-tests).
 */
public final class Emulator implements AutoCloseable {
  /** Where {@code service-sandbox} listens by default. */
  public static final String DEFAULT_URL = "http://127.0.0.1:4010";

  /** How long a server started here may take to answer its health check. */
  public static final Duration START_TIMEOUT = Duration.ofSeconds(60);

  /** How long {@link #createSession} keeps asking while the server's session limit is reached (429). */
  public static final Duration LIMIT_WAIT = Duration.ofSeconds(120);

  private static final String RUN_LABEL = labelOfRun();
  private static Emulator shared;

  /** How long {@link #healthy} waits for the health check's answer. */
  private static final Duration HEALTH_TIMEOUT = Duration.ofSeconds(2);

  private final String url;
  private final Duration timeout;
  /** The sessions made through this object (or a {@link #withTimeout} copy) and not ended yet: what {@link #endRemaining} ends. */
  private final Set<String> live;
  private final AtomicBoolean versionChecked = new AtomicBoolean();
  private volatile Process process; // the server this object started, if any

  private Emulator(String url, Process process, Duration timeout) {
    this(url, process, timeout, ConcurrentHashMap.newKeySet());
  }

  private Emulator(String url, Process process, Duration timeout, Set<String> live) {
    this.url = url.replaceAll("/+$", "");
    this.process = process;
    this.timeout = java.util.Objects.requireNonNull(timeout, "timeout");
    this.live = live;
  }

  /**
   * A server at this URL; nothing is asked of it yet (its version is checked on the first call).
   *
   * @param url the server's URL, e.g. {@code http://127.0.0.1:4010}
   * @return the server
   */
  public static Emulator connect(String url) {
    return new Emulator(url, null, Sandbox.DEFAULT_TIMEOUT);
  }

  /**
   * The same server whose calls (and its sessions' calls) wait at most {@code timeout} for an answer, instead of
   * {@link Sandbox#DEFAULT_TIMEOUT}. It does not own a server this object started ({@link #close()} on it does nothing);
   * the sessions it creates count as this object's for {@link #endRemaining()}.
   *
   * @param timeout the longest wait for one answer (a settle waits its own time on top)
   * @return the server with that timeout
   */
  public Emulator withTimeout(Duration timeout) {
    return new Emulator(url, null, timeout, live);
  }

  /**
   * How long one call waits for its answer.
   *
   * @return {@link Sandbox#DEFAULT_TIMEOUT} unless {@link #withTimeout} said otherwise
   */
  public Duration timeout() {
    return timeout;
  }

  /**
   * The server of this JVM, looked up once: the first caller waits for it, the others find it ready. At JVM exit the
   * sessions created through it and left open are ended ({@link #endRemaining()}; another run's sessions, even with the
   * same label, are left alone) and a server started here is stopped.
   *
   * @return the server
   */
  public static synchronized Emulator shared() {
    if (shared == null) {
      shared = findOrStart();
      Emulator it = shared;
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        try {
          it.endRemaining();
        } catch (RuntimeException e) {
          // the server is gone already: nothing left to end
        } finally {
          it.close();
        }
      }, "service-sandbox shutdown"));
    }
    return shared;
  }

  /**
   * The server at {@code SANDBOX_URL} (default {@link #DEFAULT_URL}) when it answers, else a new one started with the CLI.
   *
   * @return the server
   * @throws SandboxException when none answers and none can be started
   */
  public static Emulator findOrStart() {
    String configured = System.getenv("SANDBOX_URL");
    String url = configured == null || configured.isBlank() ? DEFAULT_URL : configured.replaceAll("/+$", "");
    return healthy(url) ? new Emulator(url, null, Sandbox.DEFAULT_TIMEOUT) : start(url);
  }

  /**
   * The label of every session this JVM creates by default (docs/sessions.md#labels): {@code SANDBOX_LABEL} (a CI
   * job id, say), else {@code java-} and 12 random characters.
   *
   * @return the label
   */
  public static String runLabel() {
    return RUN_LABEL;
  }

  private static String labelOfRun() {
    String configured = System.getenv("SANDBOX_LABEL");
    return configured == null || configured.isBlank() ? "java-" + UUID.randomUUID().toString().substring(0, 12) : configured;
  }

  /**
   * The built CLI's command: {@code SANDBOX_CLI} (a path ending in .mjs or .js runs with node; anything else is a
   * command line), else {@code dist/service-sandbox.mjs} of the service-sandbox checkout the working directory is
   * in (its folders walked upwards), else {@code service-sandbox} on PATH. Never {@code npx}: outside the checkout
   * it would ask the npm registry for a package of that name (docs/recipes.md#how-sessions-isolate-tests).
   *
   * @return the command and its first arguments
   */
  public static List<String> cli() {
    String configured = System.getenv().getOrDefault("SANDBOX_CLI", "").trim();
    if (!configured.isEmpty()) {
      return configured.endsWith(".mjs") || configured.endsWith(".js") ? List.of("node", configured) : List.of(configured.split("\\s+"));
    }
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      Path built = dir.resolve(Path.of("dist", "service-sandbox.mjs"));
      if (Files.isRegularFile(built)) return List.of("node", built.toString());
    }
    return List.of("service-sandbox");
  }

  /**
   * The server's URL.
   *
   * @return e.g. {@code http://127.0.0.1:4010}
   */
  public String url() {
    return url;
  }

  /**
   * Whether this object started the server (and {@link #close()} stops it).
   *
   * @return true for a server started here
   */
  public boolean started() {
    return process != null;
  }

  /**
   * A new session with the defaults: the run's label, the fixtures, a clock frozen at {@link SessionOptions#START_CLOCK}.
   *
   * @return the session (close it: try-with-resources)
   */
  public Session createSession() {
    return createSession(SessionOptions.defaults());
  }

  /**
   * {@code POST /_emulator/sessions} (docs/sessions.md). At the server's session limit (429) it asks again after the
   * answer's {@code Retry-After} for up to {@link #LIMIT_WAIT} (docs/sessions.md#limits), so a suite with more
   * threads than {@code --max-sessions} still runs.
   *
   * @param options what it starts from
   * @return the session (close it: try-with-resources)
   * @throws ApiException when the server refuses (401 without the admin token, 400 for bad options)
   */
  public Session createSession(SessionOptions options) {
    long deadline = System.nanoTime() + LIMIT_WAIT.toNanos();
    while (true) {
      Response res = control("POST", "/sessions", options.toJson());
      if (res.status() == 201) {
        Object doc = res.json();
        Session session = new Session(this, (String) Json.get(doc, "id"), (String) Json.get(doc, "baseUrl"), Credentials.from(Json.get(doc, "credentials")), doc);
        live.add(session.id());
        return session;
      }
      if (res.status() == 429 && System.nanoTime() < deadline) {
        long seconds = res.headers().firstValueAsLong("Retry-After").orElse(1);
        Http.sleep(Math.max(1, seconds) * 1000);
        continue;
      }
      if (res.status() == 401) throw new ApiException(res, "the server has --admin-token: set SANDBOX_ADMIN_TOKEN");
      throw new ApiException(res);
    }
  }

  /**
   * A session whose webhook endpoint is a new {@link WebhookReceiver} (given as its {@code webhookUrl}): the
   * emulator posts to it directly. For an emulator that can reach the tests; otherwise {@link Session#listen()}.
   *
   * @param options what it starts from (its webhookUrl is replaced)
   * @return the session, its receiver at {@link Session#webhooks()}
   */
  public Session createSessionWithReceiver(SessionOptions options) {
    WebhookReceiver receiver = WebhookReceiver.start(null);
    try {
      Session session = createSession(options.webhookUrl(receiver.url()));
      receiver.expect(session.credentials().webhook());
      session.attach(receiver);
      return session;
    } catch (RuntimeException | Error e) {
      receiver.close();
      throw e;
    }
  }

  /**
   * {@code DELETE /_emulator/sessions?label=}: ends every session with the label.
   *
   * @param label the label
   * @return the ids it ended
   */
  public List<String> endSessions(String label) {
    Response res = control("DELETE", "/sessions?label=" + URLEncoder.encode(label, StandardCharsets.UTF_8), null).ok();
    List<String> ended = new ArrayList<>();
    if (res.get("ended") instanceof List<?> list) for (Object id : list) ended.add(String.valueOf(id));
    ended.forEach(this::forget);
    return ended;
  }

  /**
   * Ends the sessions this object created ({@link #createSession}, on it or a {@link #withTimeout} copy) that are still
   * open (not closed, not ended by label): the end-of-run clean-up of {@link #shared()} and the JUnit extension. Unlike
   * {@link #endSessions(String)} it never ends a session of another process, even one with the same label (two CI
   * shards of one job, say: docs/clients.md#java).
   *
   * @return the ids it ended (a session that had idled out is not among them)
   */
  public List<String> endRemaining() {
    List<String> ended = new ArrayList<>();
    for (String id : List.copyOf(live)) {
      Response res = control("DELETE", "/sessions/" + Session.encode(id), null);
      if (res.status() != 204 && res.status() != 404) throw new ApiException(res);
      if (res.status() == 204) ended.add(id);
      forget(id);
    }
    return ended;
  }

  /** The session is no longer this object's to end. */
  void forget(String sessionId) {
    live.remove(sessionId);
  }

  /**
   * A control-plane call of the root sandbox, e.g. {@code control("GET", "/sessions", null)} (docs/control-plane.md).
   * The admin token goes with it ({@code SANDBOX_ADMIN_TOKEN}); the first call checks the server's version.
   *
   * @param method the HTTP method
   * @param path the path under {@code /_emulator}, query included
   * @param body a record, Map, List, JSON text or byte[]; null for none
   * @return the answer, whatever its status
   */
  public Response control(String method, String path, Object body) {
    checkVersion();
    Map<String, String> headers = new LinkedHashMap<>();
    Http.admin(headers);
    if (body != null) headers.put("Content-Type", body instanceof byte[] ? "application/octet-stream" : "application/json");
    return Http.send(method, URI.create(url + "/_emulator" + path), Http.bytes(body), headers, timeout);
  }

  /**
   * Uploads a snapshot file (an export of the root or of a session) to the root (docs/control-plane.md#snapshots).
   *
   * @param name the name to store it under (any characters: it is URL-encoded)
   * @param file the file's bytes
   * @return the answer
   */
  public Response uploadSnapshot(String name, byte[] file) {
    return control("PUT", "/snapshots/" + Session.encode(name), file).ok();
  }

  /**
   * Forwards the root sandbox's webhooks to your app (docs/webhooks.md#listen), as {@link Session#forwardWebhooks}
   * does for a session. It connects again by itself after a reset.
   *
   * @param appUrl the app's webhook endpoint
   * @return the handle; close it to stop
   * @throws SandboxException when the emulator refuses or does not answer
   */
  public WebhookForwarder forwardWebhooks(URI appUrl) {
    checkVersion();
    return new WebhookForwarder(url, appUrl, "the root sandbox at " + url);
  }

  /**
   * The server's version ({@code GET /_emulator/health}).
   *
   * @return e.g. {@code 0.2.0}
   */
  public String serverVersion() {
    return Http.send("GET", URI.create(url + "/_emulator/health"), null, Map.of(), timeout).ok().string("version");
  }

  private void checkVersion() {
    if (versionChecked.compareAndSet(false, true)) VersionCheck.check(url, timeout);
  }

  /**
   * Whether {@code GET /_emulator/health} answers 200 within 2 s.
   *
   * @param url the server's URL
   * @return true when it answers
   */
  public static boolean healthy(String url) {
    try {
      return Http.send("GET", URI.create(url + "/_emulator/health"), null, Map.of(), HEALTH_TIMEOUT).status() == 200;
    } catch (SandboxException e) {
      return false;
    }
  }

  private static Emulator start(String triedUrl) {
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
      throw new SandboxException("nothing answers at " + triedUrl + "/_emulator/health and `" + shown + "` cannot start (set SANDBOX_CLI): " + e, e);
    }
    Emulator emulator = new Emulator("http://127.0.0.1:" + port, process, Sandbox.DEFAULT_TIMEOUT);
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (!healthy(emulator.url)) {
      if (!process.isAlive() || System.nanoTime() > deadline) {
        emulator.close();
        String output;
        try {
          output = Files.readString(log);
        } catch (IOException e) {
          output = e.toString();
        }
        throw new SandboxException("nothing answers at " + triedUrl + "/_emulator/health, and `" + shown + "` did not answer on "
            + emulator.url + "/_emulator/health:\n" + output);
      }
      Http.sleep(200);
    }
    return emulator;
  }

  /** Stops the server if this object started it (a wrapper script's node child too: politely first). */
  @Override
  public synchronized void close() {
    Process p = process;
    if (p == null) return;
    process = null;
    List<ProcessHandle> all = new ArrayList<>(p.descendants().toList());
    all.add(p.toHandle());
    all.forEach(ProcessHandle::destroy);
    for (ProcessHandle handle : all) {
      try {
        handle.onExit().get(10, TimeUnit.SECONDS);
      } catch (Exception e) {
        handle.destroyForcibly();
      }
    }
  }
}
