package dev.servicesandbox;

/**
 * Why a webhook delivery does not verify (docs/webhooks.md#verifying-deliveries-in-your-app), the codes shared by
 * every kit and checked in this order.
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
  SIGNATURE_MISMATCH
}
