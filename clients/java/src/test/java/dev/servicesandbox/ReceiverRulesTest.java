package dev.servicesandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The kit's receiver fed hostile requests over real sockets, rule by rule (docs/clients.md#receivers-one-rule-set):
 * each refusal is an answer (401, or 400 for broken framing) with its reason, never a dropped connection.
 */
class ReceiverRulesTest {
  private static final Key KEY = new Key("wk_sandbox", "whsec_sandbox_secret");

  private static String event(String eventId) {
    return "{\"transaction\":{\"id\":\"txn_1\",\"status\":\"COMPLETED\"},\"metadata\":{\"eventId\":\"" + eventId + "\"}}";
  }

  /** Sends {@code request} as it is on a new connection; the answer's status, or 0 when the connection closed without one. */
  private static int send(WebhookReceiver receiver, String request) throws IOException {
    URI url = URI.create(receiver.url());
    try (Socket socket = new Socket(url.getHost(), url.getPort())) {
      OutputStream out = socket.getOutputStream();
      out.write(request.getBytes(StandardCharsets.UTF_8));
      out.flush();
      String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
      return answer.startsWith("HTTP/1.1 ") ? Integer.parseInt(answer.substring(9, 12)) : 0;
    }
  }

  /**
   * A request signed for the receiver's path with {@code signWith} at now; {@code headers} ("Name: value" lines, with
   * {ts} and {sig} replaced) are sent as given and replace the signing headers of the same name.
   */
  private static String delivery(String method, String body, Key signWith, String... headers) {
    String ts = Long.toString(System.currentTimeMillis());
    String sig = Signer.signature(signWith.secret(), signWith.apiKey(), ts, "POST", WebhookReceiver.PATH, body.getBytes(StandardCharsets.UTF_8));
    List<String> lines = new ArrayList<>(List.of(method + " " + WebhookReceiver.PATH + " HTTP/1.1", "Host: 127.0.0.1",
        "Content-Length: " + body.getBytes(StandardCharsets.UTF_8).length, "X-Service-Event-Type: transaction_status_updated"));
    String given = String.join("\n", headers).toLowerCase(java.util.Locale.ROOT);
    if (!given.contains("x-service-api-key:")) lines.add("X-Service-Api-Key: " + signWith.apiKey());
    if (!given.contains("x-service-timestamp:")) lines.add("X-Service-Timestamp: " + ts);
    if (!given.contains("x-service-signature:")) lines.add("X-Service-Signature: " + sig);
    for (String h : headers) lines.add(h.replace("{ts}", ts).replace("{sig}", sig));
    return String.join("\r\n", lines) + "\r\n\r\n" + body;
  }

  private record Case(String name, String request, int status, WebhookReason reason) {}

  @Test
  void every_rule_in_its_order() throws IOException {
    try (WebhookReceiver receiver = WebhookReceiver.start(null)) {
      assertEquals(401, send(receiver, delivery("POST", event("evt_0"), KEY)), "no key given yet");
      assertEquals(401, send(receiver, "POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"), "no headers, no key yet");
      receiver.expect(KEY);
      Key other = new Key("wk_other", KEY.secret());
      List<Case> cases = List.of(
          new Case("GET", delivery("GET", "", KEY), 401, WebhookReason.METHOD),
          new Case("PUT, genuinely signed", delivery("PUT", event("evt_put"), KEY), 401, WebhookReason.METHOD),
          new Case("an empty signature", delivery("POST", event("evt_1"), KEY, "X-Service-Signature: "), 401, WebhookReason.MISSING_HEADER),
          new Case("another key with a valid HMAC", delivery("POST", event("evt_1"), other), 401, WebhookReason.UNKNOWN_KEY),
          new Case("the timestamp twice", delivery("POST", event("evt_1"), KEY, "X-Service-Timestamp: {ts}", "X-Service-Timestamp: {ts}"), 401, WebhookReason.MALFORMED_TIMESTAMP),
          new Case("the signature twice, the first genuine", delivery("POST", event("evt_1"), KEY, "X-Service-Signature: {sig}", "X-Service-Signature: {sig}"), 401, WebhookReason.MALFORMED_SIGNATURE),
          new Case("a signature over another body", delivery("POST", event("evt_1"), KEY, "X-Service-Signature: " + "ab".repeat(32)), 401, WebhookReason.SIGNATURE_MISMATCH),
          new Case("genuine, not JSON", delivery("POST", "not json", KEY), 401, WebhookReason.NOT_JSON),
          new Case("genuine, a JSON array", delivery("POST", "[1,2]", KEY), 401, WebhookReason.NOT_JSON),
          new Case("genuine, eventId a number", delivery("POST", "{\"metadata\":{\"eventId\":7}}", KEY), 401, WebhookReason.NOT_JSON),
          new Case("genuine, eventId a list", delivery("POST", "{\"metadata\":{\"eventId\":[\"a\"]}}", KEY), 401, WebhookReason.NOT_JSON),
          new Case("genuine, eventId empty", delivery("POST", "{\"metadata\":{\"eventId\":\"\"}}", KEY), 401, WebhookReason.NOT_JSON),
          new Case("genuine, no metadata", delivery("POST", "{\"transaction\":{}}", KEY), 401, WebhookReason.NOT_JSON),
          new Case("genuine, metadata null", delivery("POST", "{\"metadata\":null}", KEY), 401, WebhookReason.NOT_JSON),
          new Case("genuine, whitespace around the values", delivery("POST", event("evt_1"), KEY, "X-Service-Timestamp: \t {ts} \t", "X-Service-Signature:   {sig}  "), 200, null),
          new Case("genuine again: a duplicate", delivery("POST", event("evt_1"), KEY), 200, null),
          new Case("genuine, odd field types", delivery("POST", "{\"transaction\":{\"id\":5},\"metadata\":{\"eventId\":\"evt_2\"}}", KEY), 200, null));
      List<WebhookReason> want = new ArrayList<>(List.of(WebhookReason.UNKNOWN_KEY, WebhookReason.MISSING_HEADER));
      for (Case c : cases) {
        assertEquals(c.status(), send(receiver, c.request()), c.name());
        if (c.reason() != null) want.add(c.reason());
      }
      assertEquals(want, receiver.rejected().stream().map(WebhookReceiver.Rejected::reason).toList());
      assertEquals(event("evt_0"), receiver.rejected().get(0).rawBody(), "the refused body as received");
      assertEquals(List.of("evt_1", "evt_2"), receiver.eventIds());
      assertEquals(1, receiver.duplicates().size());
    }
  }

  @Test
  void framing_chunked_and_content_length() throws IOException {
    try (WebhookReceiver receiver = WebhookReceiver.start(KEY)) {
      String body = event("evt_chunked");
      String plain = delivery("POST", body, KEY);
      String chunked = plain.replace("Content-Length: " + body.length() + "\r\n", "Transfer-Encoding: chunked\r\n");
      chunked = chunked.substring(0, chunked.length() - body.length())
          + Integer.toHexString(10) + "\r\n" + body.substring(0, 10) + "\r\n" + Integer.toHexString(body.length() - 10) + ";ext=1\r\n" + body.substring(10) + "\r\n0\r\n\r\n";
      assertEquals(200, send(receiver, chunked), "a genuine chunked delivery");
      for (String length : List.of("abc", "-1", "1e3", "5, 5")) {
        assertEquals(400, send(receiver, plain.replace("Content-Length: " + body.length(), "Content-Length: " + length)), "Content-Length " + length);
      }
      assertEquals(List.of("evt_chunked"), receiver.eventIds());
      assertEquals(List.of(), receiver.rejected());
    }
  }

  /** A sender that stops in its headers or body is cut off after the idle timeout (50 ms here; the test waits for the close, however long). */
  @Test
  void a_connection_that_sends_nothing_is_closed() throws IOException {
    try (WebhookReceiver receiver = WebhookReceiver.start(KEY, Duration.ofMillis(50))) {
      URI url = URI.create(receiver.url());
      for (String partial : List.of("POST /webhooks HTTP/1.1\r\nHost: x\r\nX-Service-Api", "POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"metadata\"")) {
        try (Socket socket = new Socket(url.getHost(), url.getPort())) {
          socket.getOutputStream().write(partial.getBytes(StandardCharsets.US_ASCII));
          InputStream in = socket.getInputStream();
          assertEquals(-1, in.read(), "closed without an answer: " + partial);
        }
      }
      assertTrue(receiver.rejected().isEmpty() && receiver.received().isEmpty());
    }
  }
}
