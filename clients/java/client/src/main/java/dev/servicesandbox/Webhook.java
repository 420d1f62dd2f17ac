package dev.servicesandbox;

import dev.servicesandbox.model.TransactionWebhookEvent;

/** One verified delivery: its event id ({@code metadata.eventId}), type, the raw body as signed, and the parsed body. */
public record Webhook(String eventId, String eventType, String rawBody, Object body) {
  /** A field of the body, e.g. {@code get("transaction", "status")}. */
  public Object get(Object... path) {
    return Json.get(body, path);
  }

  /** The body as the generated record of interface 6.1. */
  public TransactionWebhookEvent event() {
    return TransactionWebhookEvent.from(body);
  }

  /** {@code transaction.id}. */
  public String transactionId() {
    return (String) get("transaction", "id");
  }

  /** {@code transaction.status}. */
  public String status() {
    return (String) get("transaction", "status");
  }
}
