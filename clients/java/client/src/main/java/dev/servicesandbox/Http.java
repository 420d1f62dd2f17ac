package dev.servicesandbox;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

/** The one HTTP client of the kit (it pools connections for every session of the JVM), and the admin token. */
final class Http {
  // HTTP/1.1: the emulator speaks plain HTTP/1.1, so no h2c upgrade round trip.
  static final HttpClient CLIENT = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5))
      .build();

  private Http() {}

  /** Sends a request with the method, the headers as given and the body (null: none), within {@link Sandbox#DEFAULT_TIMEOUT}. */
  static Response send(String method, URI uri, byte[] body, Map<String, String> headers) {
    return send(method, uri, body, headers, Sandbox.DEFAULT_TIMEOUT);
  }

  /**
   * Sends a request; {@code timeout} bounds the wait for its answer, so a server that accepts and never answers
   * fails the call instead of hanging the test (docs/clients.md#java-version-and-defaults).
   */
  static Response send(String method, URI uri, byte[] body, Map<String, String> headers, Duration timeout) {
    HttpRequest.Builder req = HttpRequest.newBuilder(uri).timeout(timeout);
    headers.forEach(req::header);
    req.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
    try {
      HttpResponse<byte[]> res = CLIENT.send(req.build(), HttpResponse.BodyHandlers.ofByteArray());
      return new Response(res.statusCode(), res.body(), res.headers());
    } catch (java.net.http.HttpTimeoutException e) {
      throw new SandboxException(method + " " + uri + ": no answer within " + timeout.toMillis() + " ms (the kit's timeout: Emulator.withTimeout, SandboxClient.withTimeout)", e);
    } catch (IOException e) {
      throw new SandboxException(method + " " + uri + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SandboxException(method + " " + uri + ": interrupted", e);
    }
  }

  /**
   * With --admin-token the control plane wants the token (docs/control-plane.md#every-route): {@code SANDBOX_ADMIN_TOKEN}
   * carries it, sent as {@code Authorization: Bearer} by every control-plane call, forwarding included.
   */
  static void admin(Map<String, String> headers) {
    admin(headers, System.getenv("SANDBOX_ADMIN_TOKEN"));
  }

  /** The control-plane header of an admin token (clients/signing-vectors.json's controlPlane case); none without one. */
  static void admin(Map<String, String> headers, String token) {
    if (token != null && !token.isEmpty()) headers.put("Authorization", "Bearer " + token);
  }

  /** The body bytes of a request: a String as it is (raw JSON), byte[] as they are, anything else through Json.write. */
  static byte[] bytes(Object body) {
    if (body == null) return null;
    if (body instanceof byte[] raw) return raw;
    String text = body instanceof String s ? s : Json.write(body);
    return text.getBytes(StandardCharsets.UTF_8);
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SandboxException("interrupted", e);
    }
  }
}
