package dev.servicesandbox;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The filters of the delivery log, {@code GET /_emulator/webhooks/deliveries} (docs/webhooks.md#delivery-log-and-replay),
 * for {@link Session#deliveries(DeliveryQuery)}. Immutable; each method gives a changed copy; null leaves a filter
 * out.
 *
 * <pre>{@code
 * session.deliveries(DeliveryQuery.all().transactionId(txn).status("DELIVERED"));
 * }</pre>
 *
 * @param status only deliveries in this status ({@code PENDING}, {@code RETRYING}, {@code DELIVERED}, {@code FAILED}, {@code SKIPPED})
 * @param eventType only deliveries of this event type
 * @param transactionId only deliveries of this transaction's events
 * @param programId only deliveries of this programme
 * @param sortDirection {@code ASC} or {@code DESC} (the server's default: newest first)
 * @param pageIndex the page, from 0
 * @param pageSize items per page, 1 to 200 (the server's default: 25)
 */
public record DeliveryQuery(String status, String eventType, String transactionId, String programId, String sortDirection,
    Integer pageIndex, Integer pageSize) {
  /**
   * No filter: the first page of every delivery.
   *
   * @return the query
   */
  public static DeliveryQuery all() {
    return new DeliveryQuery(null, null, null, null, null, null, null);
  }

  /**
   * Only deliveries in this status.
   *
   * @param value e.g. {@code DELIVERED}
   * @return the changed query
   */
  public DeliveryQuery status(String value) {
    return new DeliveryQuery(value, eventType, transactionId, programId, sortDirection, pageIndex, pageSize);
  }

  /**
   * Only deliveries of this event type.
   *
   * @param value e.g. {@code transaction_created}
   * @return the changed query
   */
  public DeliveryQuery eventType(String value) {
    return new DeliveryQuery(status, value, transactionId, programId, sortDirection, pageIndex, pageSize);
  }

  /**
   * Only deliveries of this transaction's events.
   *
   * @param value a transaction id, {@code txn_...}
   * @return the changed query
   */
  public DeliveryQuery transactionId(String value) {
    return new DeliveryQuery(status, eventType, value, programId, sortDirection, pageIndex, pageSize);
  }

  /**
   * Only deliveries of this programme.
   *
   * @param value a programme id
   * @return the changed query
   */
  public DeliveryQuery programId(String value) {
    return new DeliveryQuery(status, eventType, transactionId, value, sortDirection, pageIndex, pageSize);
  }

  /**
   * Oldest first ({@code true}) or newest first.
   *
   * @param ascending the order
   * @return the changed query
   */
  public DeliveryQuery ascending(boolean ascending) {
    return new DeliveryQuery(status, eventType, transactionId, programId, ascending ? "ASC" : "DESC", pageIndex, pageSize);
  }

  /**
   * One page of the log.
   *
   * @param index the page, from 0
   * @param size items per page, 1 to 200
   * @return the changed query
   */
  public DeliveryQuery page(int index, int size) {
    return new DeliveryQuery(status, eventType, transactionId, programId, sortDirection, index, size);
  }

  /**
   * The query string, each value URL-encoded.
   *
   * @return {@code ?name=value&...}, or empty for no filter
   */
  public String toQueryString() {
    List<String> parts = new ArrayList<>();
    add(parts, "status", status);
    add(parts, "eventType", eventType);
    add(parts, "transactionId", transactionId);
    add(parts, "programId", programId);
    add(parts, "sortDirection", sortDirection);
    add(parts, "pageIndex", pageIndex);
    add(parts, "pageSize", pageSize);
    return parts.isEmpty() ? "" : "?" + String.join("&", parts);
  }

  private static void add(List<String> parts, String name, Object value) {
    if (value != null) parts.add(name + "=" + URLEncoder.encode(String.valueOf(value), StandardCharsets.UTF_8));
  }
}
