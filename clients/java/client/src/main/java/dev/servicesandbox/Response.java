package dev.servicesandbox;

import dev.servicesandbox.model.ServiceError;
import java.net.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;

/** An answer: a 4xx or 5xx is an answer too, not an exception (use {@link #ok()} or {@link #error()}). */
public record Response(int status, byte[] bytes, HttpHeaders headers) {
  /** The body as UTF-8 text. */
  public String body() {
    return new String(bytes, StandardCharsets.UTF_8);
  }

  /** The body parsed as JSON (Map, List, String, BigDecimal, Boolean or null). */
  public Object json() {
    return Json.parse(body());
  }

  /** A field of the JSON body, e.g. {@code get("data", 0, "id")}; null when absent. */
  public Object get(Object... path) {
    return Json.get(json(), path);
  }

  /** A string field of the JSON body. */
  public String string(Object... path) {
    return (String) get(path);
  }

  /** The JSON body read as a record, e.g. {@code as(Transaction::from)}. */
  public <T> T as(Function<Object, T> from) {
    return from.apply(json());
  }

  /** The error body of a 4xx or 5xx (docs/errors.md). */
  public ServiceError error() {
    return as(ServiceError::from);
  }

  /** This answer when its status is 2xx, else an {@link ApiException} with the status and body. */
  public Response ok() {
    if (status / 100 != 2) throw new ApiException(this);
    return this;
  }

  /** The last segment of the {@code Location} header, e.g. a deposit's transaction id (docs/money-in.md). */
  public String locationId() {
    String location = headers.firstValue("Location").orElseThrow(() -> new IllegalStateException("no Location header: " + body()));
    return location.substring(location.lastIndexOf('/') + 1);
  }

  @Override
  public String toString() {
    return status + " " + body();
  }

  /** A status the caller did not expect. */
  public static final class ApiException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient Response response;

    public ApiException(Response response) {
      super("answered " + response.status() + ": " + response.body());
      this.response = response;
    }

    public Response response() {
      return response;
    }
  }
}
