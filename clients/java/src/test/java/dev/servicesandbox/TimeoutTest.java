package dev.servicesandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A server that accepts and never answers fails the call after the kit's timeout instead of hanging the test
 * (docs/clients.md#java-version-and-defaults). The socket is real; the timeout is short so the test does not wait
 * 60 s, and the guard below only ends a test that would otherwise hang.
 */
class TimeoutTest {
  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS) // not an assertion on time: a hang must end as a failure
  void a_server_that_never_answers_fails_the_call() throws IOException {
    List<Socket> held = new CopyOnWriteArrayList<>();
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))) {
      Thread acceptor = new Thread(() -> {
        try {
          while (true) held.add(silent.accept()); // accepted, read by nobody, never answered
        } catch (IOException e) {
          // closed: the test is over
        }
      });
      acceptor.setDaemon(true);
      acceptor.start();
      String url = "http://127.0.0.1:" + silent.getLocalPort();

      assertEquals(Sandbox.DEFAULT_TIMEOUT, Emulator.connect(url).timeout());
      assertEquals(Duration.ofSeconds(60), Sandbox.DEFAULT_TIMEOUT, "the Go kit's DefaultTimeout");
      SandboxClient api = new SandboxClient(url, "prg_sandbox", new Key("pk", "sk"), null);
      assertEquals(Sandbox.DEFAULT_TIMEOUT, api.timeout());

      Emulator quick = Emulator.connect(url).withTimeout(Duration.ofMillis(200));
      SandboxException session = assertThrows(SandboxException.class, quick::createSession);
      assertTrue(session.getMessage().contains("no answer within 200 ms"), session.getMessage());

      SandboxClient quickApi = api.withTimeout(Duration.ofMillis(200));
      assertEquals(Duration.ofMillis(200), quickApi.forUser("usr_jane").timeout(), "kept by forUser");
      SandboxException call = assertThrows(SandboxException.class, () -> quickApi.get("/v1/accounts"));
      assertTrue(call.getMessage().contains("no answer within 200 ms"), call.getMessage());
    } finally {
      for (Socket socket : held) socket.close();
    }
  }
}
