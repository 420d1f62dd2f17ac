import { sql } from '../../db/connection.js';
import type { AppContext } from '../../context.js';

// Contract 11: events are rows written in the same SQLite transaction as the change that causes them.
// Callers run inside that transaction; delivery (webhooks.dispatcher) reads the table later.

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

export function recordEvent(ctx: AppContext, input: OutboxEventInput): string {
  const eventId = ctx.ids.id('event');
  sql(
    ctx.db,
    `INSERT INTO outbox (event_id, programme_id, user_id, resource_type, resource_id, event_type, occurred_at, payload)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(eventId, input.programmeId, input.userId, input.resourceType, input.resourceId, input.eventType, ctx.clock.nowIso(), JSON.stringify(input.payload));
  return eventId;
}
