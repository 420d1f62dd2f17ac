package dev.servicesandbox;

import java.util.Map;

/**
 * An answer whose status the caller did not expect ({@link Response#ok()}): the status, the interface's
 * {@code errorCode} (docs/errors.md) when the body is an error body, and the whole answer.
 */
public class ApiException extends SandboxException {
  private static final long serialVersionUID = 1L;
  /** The HTTP status. */
  private final int status;
  /** The interface's error code, or null. */
  private final String errorCode;
  private final transient Response response;

  /**
   * An exception for this answer.
   *
   * @param response the answer (a 4xx or 5xx, usually)
   */
  public ApiException(Response response) {
    this(response, null);
  }

  /**
   * An exception for this answer, with a hint of what to do.
   *
   * @param response the answer
   * @param hint added to the message; null for none
   */
  public ApiException(Response response, String hint) {
    super("answered " + response.status() + ": " + response.body() + (hint == null ? "" : " (" + hint + ")"));
    this.status = response.status();
    this.errorCode = errorCodeOf(response);
    this.response = response;
  }

  private static String errorCodeOf(Response response) {
    try {
      return response.json() instanceof Map<?, ?> body && body.get("errorCode") instanceof String code ? code : null;
    } catch (JsonException e) {
      return null; // not a JSON body (a proxy's HTML page, say): no code
    }
  }

  /**
   * The HTTP status.
   *
   * @return the status, e.g. 404
   */
  public int status() {
    return status;
  }

  /**
   * The interface's error code (docs/errors.md), e.g. {@code RESOURCE_NOT_FOUND}.
   *
   * @return the code, or null when the body carries none
   */
  public String errorCode() {
    return errorCode;
  }

  /**
   * The answer itself (headers and body).
   *
   * @return the answer
   */
  public Response response() {
    return response;
  }
}
