package dev.servicesandbox;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@code service-sandbox listen} for one session, as a child process: it connects out to the emulator and posts
 * each of the session's webhook deliveries to the forward-to URL, signed for its path, and reports the answer
 * back (docs/webhooks.md#listen). Constructed ready: from then on the session's deliveries go through it. To
 * carry a session's webhooks to your own app, give its URL as {@code forwardTo}.
 */
public final class Listener implements AutoCloseable {
  /** How long the CLI may take to print its {@code Ready:} line. */
  static final long READY_TIMEOUT_SECONDS = 30;

  private final Process process;
  private final List<String> lines = new ArrayList<>(); // "Ready: ...", then one per delivery
  private final CountDownLatch ready = new CountDownLatch(1);
  private volatile boolean sawReady;

  public Listener(String forwardTo, String serverUrl, String sessionId) {
    List<String> command = new ArrayList<>(Emulator.cli());
    command.addAll(List.of("listen", "--forward-to", forwardTo, "--url", serverUrl, "--session", sessionId));
    try {
      process = new ProcessBuilder(command).redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new IllegalStateException("`" + String.join(" ", command) + "` cannot start (set SANDBOX_CLI): " + e, e);
    }
    Thread reader = new Thread(this::read, "listen " + sessionId);
    reader.setDaemon(true);
    reader.start();
    boolean answered;
    try {
      answered = ready.await(READY_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      answered = false;
    }
    if (!answered || !sawReady) {
      close();
      throw new IllegalStateException("`" + String.join(" ", command) + "` said no Ready: line:\n" + output());
    }
  }

  private void read() {
    try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = in.readLine()) != null; ) {
        synchronized (lines) {
          lines.add(line);
        }
        if (line.startsWith("Ready:")) {
          sawReady = true;
          ready.countDown();
        }
      }
    } catch (IOException e) {
      // the process is gone: what it printed is kept
    } finally {
      ready.countDown(); // it exited: the constructor reports its output
    }
  }

  /** What the listener printed so far. */
  public String output() {
    synchronized (lines) {
      return String.join("\n", lines);
    }
  }

  /**
   * Stops it as Ctrl+C would: {@link Process#destroy()} is SIGTERM, which the CLI handles as it does SIGINT
   * (it closes the stream and exits 0). Forcibly after 10 s.
   */
  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) process.destroyForcibly().waitFor();
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
