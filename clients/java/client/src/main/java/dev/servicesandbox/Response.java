package dev.servicesandbox;

import dev.servicesandbox.model.ServiceError;
import java.net.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;

/**
 * An answer: a 4xx or 5xx is an answer too, not an exception (use {@link #ok()} or {@link #error()}).
 *
 * @param status the HTTP status
 * @param bytes the body as received
 * @param headers the response headers
 */
public record Response(int status, byte[] bytes, HttpHeaders headers) {
  /**
   * The body as UTF-8 text.
   *
   * @return the text
   */
  public String body() {
    return new String(bytes, StandardCharsets.UTF_8);
  }

  /**
   * The body parsed as JSON.
   *
   * @return a Map, List, String, BigDecimal, Boolean or null
   * @throws JsonException when the body is not JSON
   */
  public Object json() {
    return Json.parse(body());
  }

  /**
   * A field of the JSON body, e.g. {@code get("data", 0, "id")}.
   *
   * @param path object keys and array indexes
   * @return the value, or null when absent
   */
  public Object get(Object... path) {
    return Json.get(json(), path);
  }

  /**
   * A string field of the JSON body.
   *
   * @param path object keys and array indexes
   * @return the string, or null when absent
   */
  public String string(Object... path) {
    return (String) get(path);
  }

  /**
   * The JSON body read as a record, e.g. {@code as(Transaction::from)}.
   *
   * @param <T> the record type
   * @param from the record's reader
   * @return the record
   */
  public <T> T as(Function<Object, T> from) {
    return from.apply(json());
  }

  /**
   * The error body of a 4xx or 5xx (docs/errors.md).
   *
   * @return the error record
   */
  public ServiceError error() {
    return as(ServiceError::from);
  }

  /**
   * This answer when its status is 2xx.
   *
   * @return this answer
   * @throws ApiException with the status, error code and body otherwise
   */
  public Response ok() {
    if (status / 100 != 2) throw new ApiException(this);
    return this;
  }

  /**
   * The last segment of the {@code Location} header, e.g. a deposit's transaction id (docs/money-in.md).
   *
   * @return the id
   * @throws SandboxException when the answer has no Location header
   */
  public String locationId() {
    String location = headers.firstValue("Location").orElseThrow(() -> new SandboxException("no Location header: " + body()));
    return location.substring(location.lastIndexOf('/') + 1);
  }

  @Override
  public String toString() {
    return status + " " + body();
  }
}
