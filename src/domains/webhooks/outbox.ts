import { prepared } from '../../db/connection.js';
import type { AppContext } from '../../context.js';
import type { StateSlot } from '../../runtime/sandbox-runtime.js';

// docs/decisions.md#webhook-outbox: events are rows written in the same SQLite transaction as the change that causes
// them. Callers run inside that transaction; delivery (webhooks.dispatcher.ts) reads the table later.
// Each event gets its delivery row here too, in the same transaction, so nothing owed is lost on a crash
// and the delivery id is drawn deterministically (docs/decisions.md#determinism) rather than whenever the dispatcher
// runs.

export type TransactionEventType = 'transaction_created' | 'transaction_status_updated';

export interface OutboxEventInput {
  programmeId: string;
  userId: string | null;
  resourceType: 'transaction';
  resourceId: string;
  eventType: TransactionEventType;
  /** The resource in webhook form, as it is at this instant. */
  payload: Record<string, unknown>;
}

/** The outbox's one subscriber, per sandbox (docs/architecture.md#runtime): the dispatcher's wake-up, while it runs. */
export const outboxSlot: StateSlot<{ subscriber: (() => void) | null }> = {
  name: 'webhooks.outbox',
  create: () => ({ subscriber: null }),
  reset: 'keep', // the dispatcher keeps running across a reset
  carriedBySnapshots: false,
  newSession: 'fresh',
};

/**
 * The outbox's one subscription: the webhook dispatcher's wake-up. `listener` is called after every write
 * that may have made a delivery due (an event recorded, a retry released, an endpoint set), inside the
 * writer's SQLite transaction, so it must defer its work (the dispatcher uses setImmediate). Returns the
 * unsubscribe function.
 */
export function subscribeToOutbox(ctx: AppContext, listener: () => void): () => void {
  const outbox = ctx.runtime.get(outboxSlot);
  if (outbox.subscriber) throw new Error('the outbox of this context already has a subscriber');
  outbox.subscriber = listener;
  return () => {
    if (outbox.subscriber === listener) outbox.subscriber = null;
  };
}

/** Tell the subscriber, if any, that deliveries may be due. */
export function notifyOutbox(ctx: AppContext): void {
  ctx.runtime.get(outboxSlot).subscriber?.();
}

/** Rewrite the payload of an event written earlier in the same SQLite transaction (before any delivery). */
export function replaceEventPayload(ctx: AppContext, eventId: string, payload: unknown): void {
  prepared(ctx.db, 'UPDATE outbox SET payload = ? WHERE event_id = ?').run(JSON.stringify(payload), eventId);
}

export function recordEvent(ctx: AppContext, input: OutboxEventInput): string {
  const eventId = ctx.ids.id('event');
  const occurredAt = ctx.clock.nowIso();
  const result = prepared(
    ctx.db,
    `INSERT INTO outbox (event_id, programme_id, user_id, resource_type, resource_id, event_type, occurred_at, payload)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(eventId, input.programmeId, input.userId, input.resourceType, input.resourceId, input.eventType, occurredAt, JSON.stringify(input.payload));

  // README "Webhooks": an event written while its programme has no webhook URL is recorded SKIPPED (final,
  // replayable once an endpoint is set) instead of piling up and flooding the endpoint set later.
  const programme = prepared<{ webhook_url: string | null }>(ctx.db, 'SELECT webhook_url FROM programmes WHERE id = ?').get(input.programmeId);
  const status = programme?.webhook_url ? 'PENDING' : 'SKIPPED';
  prepared(
    ctx.db,
    `INSERT INTO webhook_deliveries (id, event_seq, event_id, programme_id, resource_id, event_type, status, last_error, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    ctx.ids.id('delivery'),
    Number(result.lastInsertRowid),
    eventId,
    input.programmeId,
    input.resourceId,
    input.eventType,
    status,
    status === 'SKIPPED' ? 'No webhook URL configured for the programme when the event was written' : null,
    occurredAt,
    occurredAt,
  );
  // Deferred by the dispatcher (setImmediate), so the send starts after this transaction commits and
  // never inside the request that caused the event.
  notifyOutbox(ctx);
  return eventId;
}
