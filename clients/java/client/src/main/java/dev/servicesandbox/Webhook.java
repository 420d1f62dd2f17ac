package dev.servicesandbox;

import dev.servicesandbox.model.TransactionWebhookEvent;

/**
 * One verified delivery.
 *
 * @param eventId its {@code metadata.eventId}
 * @param eventType its {@code X-Service-Event-Type}
 * @param rawBody the body as signed
 * @param body the body parsed
 */
public record Webhook(String eventId, String eventType, String rawBody, Object body) {
  /**
   * A field of the body, e.g. {@code get("transaction", "status")}.
   *
   * @param path object keys and array indexes
   * @return the value, or null when absent
   */
  public Object get(Object... path) {
    return Json.get(body, path);
  }

  /**
   * The body as the generated record of interface 6.1.
   *
   * @return the event
   */
  public TransactionWebhookEvent event() {
    return TransactionWebhookEvent.from(body);
  }

  /**
   * The transaction's id.
   *
   * @return {@code transaction.id}
   */
  public String transactionId() {
    return get("transaction", "id") instanceof String id ? id : null;
  }

  /**
   * The transaction's status.
   *
   * @return {@code transaction.status}
   */
  public String status() {
    return get("transaction", "status") instanceof String status ? status : null;
  }
}
