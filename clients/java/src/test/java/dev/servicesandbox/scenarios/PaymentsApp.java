package dev.servicesandbox.scenarios;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.servicesandbox.Json;
import dev.servicesandbox.WebhookReason;
import dev.servicesandbox.Webhooks;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The application under test of the forwarding tests, as a team would write it (docs/clients.md#java): its own
 * webhook endpoint ({@code POST /hooks/service}), which verifies each delivery with the kit's verifier (401 with the
 * reason when it does not verify), handles each event once (a repeat is acknowledged, 200, and not applied again),
 * and keeps the last status of each transaction in its "database".
 */
final class PaymentsApp implements AutoCloseable {
  static final String WEBHOOK_PATH = "/hooks/service";

  private final HttpServer server;
  private final String webhookSecret;
  private final Set<String> seenEvents = new HashSet<>();
  private final Map<String, String> statusByTransaction = new LinkedHashMap<>();
  private final List<WebhookReason> refused = new ArrayList<>();

  private PaymentsApp(String webhookSecret) throws IOException {
    this.webhookSecret = webhookSecret;
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext(WEBHOOK_PATH, this::webhook);
    server.start();
  }

  static PaymentsApp start(String webhookSecret) {
    try {
      return new PaymentsApp(webhookSecret);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  URI webhookUrl() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + WEBHOOK_PATH);
  }

  private void webhook(HttpExchange ex) throws IOException {
    try (ex; InputStream in = ex.getRequestBody()) {
      byte[] raw = in.readAllBytes(); // verified as received, before parsing
      var h = ex.getRequestHeaders();
      Webhooks.Result result = Webhooks.check(webhookSecret, h.getFirst("X-Service-Api-Key"), h.getFirst("X-Service-Timestamp"),
          h.getFirst("X-Service-Signature"), ex.getRequestURI().getRawPath(), raw);
      if (!result.valid()) {
        synchronized (this) {
          refused.add(result.reason());
        }
        ex.sendResponseHeaders(401, -1);
        return;
      }
      Object event = Json.parse(new String(raw, java.nio.charset.StandardCharsets.UTF_8));
      synchronized (this) {
        if (seenEvents.add((String) Json.get(event, "metadata", "eventId"))) {
          statusByTransaction.put((String) Json.get(event, "transaction", "id"), (String) Json.get(event, "transaction", "status"));
        }
      }
      ex.sendResponseHeaders(200, -1);
    }
  }

  synchronized String status(String transactionId) {
    return statusByTransaction.get(transactionId);
  }

  synchronized int eventsHandled() {
    return seenEvents.size();
  }

  synchronized List<WebhookReason> refused() {
    return List.copyOf(refused);
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
