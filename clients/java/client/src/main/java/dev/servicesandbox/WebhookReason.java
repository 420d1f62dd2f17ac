package dev.servicesandbox;

/**
 * Why a webhook delivery does not verify (docs/webhooks.md#verifying-deliveries-in-your-app), the codes shared by
 * every kit and checked in this order. {@link Webhooks#check} answers the first five; the last three are the kit's
 * receiver's own ({@link WebhookReceiver}, docs/clients.md#receivers-one-rule-set).
 */
public enum WebhookReason {
  /** {@code X-Service-Api-Key}, {@code X-Service-Timestamp} or {@code X-Service-Signature} is missing or empty. */
  MISSING_HEADER,
  /** The timestamp is not epoch milliseconds (1 to 16 digits). */
  MALFORMED_TIMESTAMP,
  /** The timestamp is further than the tolerance from the receiver's clock, either way. */
  TIMESTAMP_OUT_OF_TOLERANCE,
  /** The signature is not 64 hexadecimal digits. */
  MALFORMED_SIGNATURE,
  /** The signature is not the one of this key, path and body. */
  SIGNATURE_MISMATCH,
  /** The receiver's: the request is not a {@code POST}. */
  METHOD,
  /** The receiver's: {@code X-Service-Api-Key} is not the webhook key it expects, or it expects none yet. */
  UNKNOWN_KEY,
  /** The receiver's: a genuine delivery whose body is not a JSON object with a non-empty string {@code metadata.eventId}. */
  NOT_JSON
}
