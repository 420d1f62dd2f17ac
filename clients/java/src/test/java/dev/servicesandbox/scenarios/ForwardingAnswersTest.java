package dev.servicesandbox.scenarios;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.servicesandbox.DeliveryQuery;
import dev.servicesandbox.Session;
import dev.servicesandbox.junit.SandboxExtension;
import dev.servicesandbox.model.WebhookAttempt;
import dev.servicesandbox.model.WebhookDelivery;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An app that answers badly, through forwarding, is recorded as direct delivery records it
 * (docs/webhooks.md#delivery-rules, docs/clients.md#java-forwarding): a closed connection or a non-HTTP answer is
 * reported at once as what it is (not as the emulator's timeout), a redirect is a failed attempt, and an app that
 * answers 200 and then stalls, or sends a huge body, is DELIVERED with at most 2 KiB of it read.
 */
@ExtendWith(SandboxExtension.class)
class ForwardingAnswersTest {
  /** A misbehaving app on a real socket: one way of answering per path. */
  private static final class BadApp implements AutoCloseable {
    final ServerSocket socket;
    final CountDownLatch release = new CountDownLatch(1);
    final CompletableFuture<Boolean> bigBodyWritten = new CompletableFuture<>();

    BadApp() throws IOException {
      socket = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
      Thread acceptor = new Thread(() -> {
        while (true) {
          Socket c;
          try {
            c = socket.accept();
          } catch (IOException e) {
            return;
          }
          Thread t = new Thread(() -> answer(c));
          t.setDaemon(true);
          t.start();
        }
      });
      acceptor.setDaemon(true);
      acceptor.start();
    }

    URI url(String mode) {
      return URI.create("http://127.0.0.1:" + socket.getLocalPort() + "/" + mode);
    }

    private void answer(Socket c) {
      try (c) {
        InputStream in = c.getInputStream();
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.ISO_8859_1).contains("\r\n\r\n")) {
          int b = in.read();
          if (b < 0) return;
          head.write(b);
        }
        String text = head.toString(StandardCharsets.ISO_8859_1);
        String mode = text.substring(text.indexOf(" /") + 2, text.indexOf(" HTTP/"));
        String length = text.toLowerCase().replaceAll("(?s).*content-length: *([0-9]+).*", "$1");
        in.readNBytes(Integer.parseInt(length));
        OutputStream out = c.getOutputStream();
        switch (mode) {
          case "close" -> { }
          case "garbage" -> out.write("NOT HTTP AT ALL\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
          case "r302" -> out.write("HTTP/1.1 302 Found\r\nLocation: /ok\r\nContent-Length: 0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
          case "stall" -> {
            out.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            release.await();
          }
          case "big" -> {
            out.write(("HTTP/1.1 200 OK\r\nContent-Length: " + (256L << 20) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            byte[] chunk = "x".repeat(1 << 16).getBytes(StandardCharsets.US_ASCII);
            try {
              for (int i = 0; i < 4096; i++) out.write(chunk);
              bigBodyWritten.complete(true);
            } catch (IOException e) {
              bigBodyWritten.complete(false); // the forwarder let the connection go
            }
          }
          default -> out.write("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        }
        out.flush();
      } catch (IOException | InterruptedException e) {
        // the forwarder went away: nothing to answer
      }
    }

    @Override
    public void close() throws IOException {
      release.countDown();
      socket.close();
    }
  }

  /** Forwards the session's webhooks to the app's {@code mode}, makes a deposit, settles: the first attempt. */
  private static WebhookDelivery firstDelivery(Session session, BadApp app, String mode) {
    session.forwardWebhooks(app.url(mode));
    String txn = session.client().post("/v1/sandbox/accounts/acct_acme_usd/deposits",
        Map.of("depositInstructionId", "di_acme_usd_ach", "amount", "12.00")).ok().locationId();
    session.settle(); // the first delivery's attempt has been answered (or the emulator's timeout has ended it)
    List<WebhookDelivery> log = session.deliveries(DeliveryQuery.all().transactionId(txn));
    assertFalse(log.isEmpty(), "no delivery");
    return log.get(0);
  }

  @Test
  void a_closed_connection_is_reported_at_once_as_closed(Session session) throws IOException {
    try (BadApp app = new BadApp()) {
      WebhookAttempt attempt = firstDelivery(session, app, "close").attempts().get(0);
      assertNull(attempt.responseStatus());
      assertTrue(attempt.error().contains("closed without an answer"), attempt.error());
    }
  }

  @Test
  void an_answer_that_is_not_http_is_reported_as_such(Session session) throws IOException {
    try (BadApp app = new BadApp()) {
      WebhookAttempt attempt = firstDelivery(session, app, "garbage").attempts().get(0);
      assertNull(attempt.responseStatus());
      assertTrue(attempt.error().contains("not HTTP"), attempt.error());
    }
  }

  @Test
  void a_redirect_is_a_failed_attempt(Session session) throws IOException {
    try (BadApp app = new BadApp()) {
      WebhookDelivery delivery = firstDelivery(session, app, "r302");
      assertEquals(302L, delivery.attempts().get(0).responseStatus());
      assertFalse("DELIVERED".equals(delivery.status()), delivery.status());
    }
  }

  @Test
  void a_200_whose_body_stalls_is_delivered(Session session) throws IOException {
    try (BadApp app = new BadApp()) {
      WebhookDelivery delivery = firstDelivery(session, app, "stall");
      assertEquals("DELIVERED", delivery.status(), String.valueOf(delivery.attempts()));
      assertEquals(200L, delivery.attempts().get(0).responseStatus());
    }
  }

  @Test
  void of_a_huge_answer_at_most_2_KiB_are_read(Session session) throws Exception {
    try (BadApp app = new BadApp()) {
      WebhookDelivery delivery = firstDelivery(session, app, "big");
      assertEquals("DELIVERED", delivery.status());
      String body = delivery.attempts().get(0).responseBody();
      assertTrue(body != null && body.length() <= 2048 && body.startsWith("xxx"), String.valueOf(body));
      assertFalse(app.bigBodyWritten.get(), "the app wrote all 256 MiB: the forwarder read the whole answer");
    }
  }
}
