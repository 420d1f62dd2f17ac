package dev.servicesandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/**
 * The version warning (docs/clients.md#java-version-and-defaults): one WARNING on the {@code dev.servicesandbox} logger per server
 * URL whose {@code /_emulator/health} answers another version than {@link Sandbox#VERSION}; none when they match.
 * The servers here are real HTTP listeners answering as the emulator would, with a version of the test's choosing.
 */
class VersionWarningTest {
  /** A server answering health with {@code version} and an empty session list. */
  private static HttpServer server(String version) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/_emulator/", ex -> {
      try (ex) {
        String path = ex.getRequestURI().getPath();
        byte[] body = (path.equals("/_emulator/health")
            ? "{\"status\":\"ok\",\"now\":\"2026-03-01T12:00:00.000Z\",\"version\":" + Json.quote(version) + "}"
            : "{\"ended\":[]}").getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().add("Content-Type", "application/json");
        ex.sendResponseHeaders(200, body.length);
        ex.getResponseBody().write(body);
      }
    });
    server.start();
    return server;
  }

  private static final class Captured extends Handler {
    final List<LogRecord> records = new ArrayList<>();

    @Override
    public synchronized void publish(LogRecord record) {
      if (record.getLevel().intValue() >= Level.WARNING.intValue()) records.add(record);
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}

    synchronized List<String> messages(String containing) {
      return records.stream().map(r -> java.text.MessageFormat.format(r.getMessage(), r.getParameters()))
          .filter(m -> m.contains(containing)).toList();
    }
  }

  @Test
  void a_different_server_version_warns_once_per_url() throws IOException {
    HttpServer other = server("9.9.9");
    HttpServer same = server(Sandbox.VERSION);
    Logger logger = Logger.getLogger("dev.servicesandbox");
    Captured captured = new Captured();
    logger.addHandler(captured);
    try {
      String otherUrl = "http://127.0.0.1:" + other.getAddress().getPort();
      String sameUrl = "http://127.0.0.1:" + same.getAddress().getPort();
      Emulator.connect(otherUrl).endSessions("a");
      Emulator.connect(otherUrl).endSessions("b"); // another object, the same URL: no second warning
      Emulator.connect(sameUrl).endSessions("c");
      List<String> warnings = captured.messages(otherUrl);
      assertEquals(1, warnings.size(), "one warning for " + otherUrl + ": " + warnings);
      assertTrue(warnings.get(0).contains("9.9.9") && warnings.get(0).contains(Sandbox.VERSION), warnings.get(0));
      assertEquals(List.of(), captured.messages(sameUrl), "none for a server of the kit's version");
      assertEquals("9.9.9", Emulator.connect(otherUrl).serverVersion());
    } finally {
      logger.removeHandler(captured);
      other.stop(0);
      same.stop(0);
    }
  }
}
