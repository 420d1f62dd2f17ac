import { prepared } from '../../db/connection.js';
import { readPage } from '../../db/page.js';
import { sqlFilter, whereClause } from '../../db/filter.js';
import type { AppContext } from '../../context.js';
import { errors } from '../../core/errors.js';
import type { AttemptRow, ChaosEffect, DeliveryRow, ListDeliveriesQuery, WebhookAttempt, WebhookDelivery } from './webhooks.schema.js';
import { findDelivery } from './webhooks.queue.js';
import { outboxEvent, webhookBody } from './webhooks.attempt.js';
import { programmeWebhookOf } from './webhooks.endpoints.js';

// What the control plane reads of webhook deliveries (docs/webhooks.md#delivery-log-and-replay): the delivery log,
// one delivery with its attempts, what settle waits for (docs/control-plane.md#settle), and the replay's precheck.

/** Check a replay is possible before any network work; 409 when there is nowhere to send it. */
export function assertReplayable(ctx: AppContext, id: string): DeliveryRow {
  const delivery = findDelivery(ctx, id);
  if (!programmeWebhookOf(ctx, delivery.programme_id)?.webhook_url) {
    throw errors.conflict(`No webhook URL is configured for programme ${delivery.programme_id}; set one with PUT /_emulator/webhooks/endpoint first`);
  }
  return delivery;
}

export function listDeliveries(ctx: AppContext, query: ListDeliveriesQuery) {
  const filter = sqlFilter([
    ['status = ?', query.status],
    ['event_type = ?', query.eventType],
    ['resource_id = ?', query.transactionId],
    ['programme_id = ?', query.programId],
  ]);
  const direction = query.sortDirection === 'ASC' ? 'ASC' : 'DESC';
  return readPage<DeliveryRow, WebhookDelivery>(
    ctx.db,
    { columns: '*', from: `webhook_deliveries ${whereClause(filter)}`, orderBy: `event_seq ${direction}` },
    filter.params,
    query,
    (row) => toDelivery(ctx, row),
  );
}

export function getDeliveryView(ctx: AppContext, id: string): WebhookDelivery {
  return toDelivery(ctx, findDelivery(ctx, id));
}

/** Row -> control-plane object, with the event's body and every attempt. */
export function toDelivery(ctx: AppContext, row: DeliveryRow): WebhookDelivery {
  const event = outboxEvent(ctx, row.event_seq);
  const attempts = prepared<AttemptRow>(ctx.db, 'SELECT * FROM webhook_attempts WHERE delivery_id = ? ORDER BY number').all(row.id);
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type,
    resourceType: event.resource_type,
    transactionId: row.resource_id,
    programId: row.programme_id,
    userId: event.user_id,
    occurredAt: event.occurred_at,
    status: row.status,
    attemptCount: row.attempt_count,
    nextAttemptAt: row.next_attempt_at,
    lastAttemptAt: row.last_attempt_at,
    lastResponseStatus: row.last_response_status,
    lastError: row.last_error,
    deliveredAt: row.delivered_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    body: JSON.parse(webhookBody(event)) as WebhookDelivery['body'],
    attempts: attempts.map(toAttempt),
  };
}

function toAttempt(row: AttemptRow): WebhookAttempt {
  return {
    number: row.number,
    kind: row.kind,
    url: row.url,
    attemptedAt: row.attempted_at,
    signedAt: new Date(row.signed_at_ms).toISOString(),
    outcome: row.outcome,
    responseStatus: row.response_status,
    responseBody: row.response_body,
    error: row.error,
    latencyMs: row.latency_ms,
    requestHeaders: JSON.parse(row.request_headers) as Record<string, string>,
    requestBody: row.request_body,
    chaos: JSON.parse(row.chaos) as ChaosEffect[],
  };
}

/** A delivery not yet final, as settle reports it (docs/control-plane.md#settle). */
export interface WaitingDelivery {
  id: string;
  eventId: string;
  eventType: string;
  transactionId: string;
  status: 'PENDING' | 'RETRYING';
  attempts: number;
  nextAttemptAt: string | null;
  /** The earlier delivery of the same transaction it waits behind (events go out in order), or null. */
  behind: string | null;
}

/** The deliveries still PENDING or RETRYING, oldest event first (at most `limit`), and how many there are. */
export function waitingDeliveries(ctx: AppContext, limit: number): { total: number; deliveries: WaitingDelivery[] } {
  const total = prepared<{ n: number }>(ctx.db, "SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status IN ('PENDING', 'RETRYING')").get()!.n;
  if (total === 0) return { total, deliveries: [] };
  const rows = prepared<{ id: string; event_id: string; event_type: string; resource_id: string; status: 'PENDING' | 'RETRYING'; attempt_count: number; next_attempt_at: string | null; behind: string | null }>(
    ctx.db,
    `SELECT d.id, d.event_id, d.event_type, d.resource_id, d.status, d.attempt_count, d.next_attempt_at,
       (SELECT e.id FROM webhook_deliveries e
        WHERE e.resource_id = d.resource_id AND e.event_seq < d.event_seq AND e.status IN ('PENDING', 'RETRYING')
        ORDER BY e.event_seq LIMIT 1) AS behind
     FROM webhook_deliveries d WHERE d.status IN ('PENDING', 'RETRYING') ORDER BY d.event_seq LIMIT +?`,
  ).all(limit);
  return {
    total,
    deliveries: rows.map((row) => ({
      id: row.id,
      eventId: row.event_id,
      eventType: row.event_type,
      transactionId: row.resource_id,
      status: row.status,
      attempts: row.attempt_count,
      nextAttemptAt: row.next_attempt_at,
      behind: row.behind,
    })),
  };
}
