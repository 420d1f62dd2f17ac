package dev.servicesandbox;

/**
 * The root of everything the kit throws (docs/clients.md#java): catch this one type to handle any failure of the
 * kit. Its subclasses say what went wrong: {@link ApiException} (an answer with an unexpected status),
 * {@link NotSettledException} (a settle that timed out), {@link WebhookVerificationException} (a delivery that does
 * not verify), {@link JsonException} (text that is not JSON). This class itself stands for a transport failure
 * (the server unreachable, a connection reset) or a misuse the server cannot see.
 */
public class SandboxException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * A failure described by {@code message}.
   *
   * @param message what went wrong
   */
  public SandboxException(String message) {
    super(message);
  }

  /**
   * A failure described by {@code message}, caused by {@code cause}.
   *
   * @param message what went wrong
   * @param cause the underlying exception (an {@link java.io.IOException}, say)
   */
  public SandboxException(String message, Throwable cause) {
    super(message, cause);
  }
}
