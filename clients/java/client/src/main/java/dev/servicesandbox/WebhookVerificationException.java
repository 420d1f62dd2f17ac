package dev.servicesandbox;

/** A webhook delivery that does not verify ({@link Webhooks#verifyOrThrow}): the reason code says why. */
public class WebhookVerificationException extends SandboxException {
  private static final long serialVersionUID = 1L;
  /** Why the delivery was refused. */
  private final WebhookReason reason;

  /**
   * An exception for a delivery refused for {@code reason}.
   *
   * @param reason why the delivery does not verify
   */
  public WebhookVerificationException(WebhookReason reason) {
    super("the webhook delivery does not verify: " + reason);
    this.reason = reason;
  }

  /**
   * Why the delivery was refused.
   *
   * @return the reason code
   */
  public WebhookReason reason() {
    return reason;
  }
}
