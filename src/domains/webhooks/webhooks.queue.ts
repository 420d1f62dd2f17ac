import { prepared } from '../../db/connection.js';
import type { AppContext } from '../../context.js';
import { errors } from '../../core/errors.js';
import { clampToClockRange } from '../../lib/clock.js';
import { scheduleJob } from '../../scheduler/scheduler.js';
import type { DeliveryRow, DeliveryStatus } from './webhooks.schema.js';

// The delivery queue (docs/webhooks.md#delivery-rules, interface 6.1): which deliveries may be attempted now, and
// the retry schedule after a failed scheduled attempt, on the emulated clock. The dispatcher
// (webhooks.dispatcher.ts) reads it; recording an attempt (webhooks.record.ts) moves a delivery along it.

export const WEBHOOK_RETRY_JOB = 'webhook.retry';

/**
 * docs/decisions.md#webhook-retries: delays after the 1st ... 9th failed scheduled attempt; the 10th failure is final.
 */
export const RETRY_DELAYS_MS = [
  5_000,
  30_000,
  2 * 60_000,
  10 * 60_000,
  30 * 60_000,
  60 * 60_000,
  2 * 60 * 60_000,
  4 * 60 * 60_000,
  8 * 60 * 60_000,
] as const;

export function getDelivery(ctx: AppContext, id: string): DeliveryRow | undefined {
  return prepared<DeliveryRow>(ctx.db, 'SELECT * FROM webhook_deliveries WHERE id = ?').get(id);
}

/** Accept either the delivery id (`dlv_`) or its event id (`evt_`). */
export function findDelivery(ctx: AppContext, id: string): DeliveryRow {
  const row = getDelivery(ctx, id) ?? prepared<DeliveryRow>(ctx.db, 'SELECT * FROM webhook_deliveries WHERE event_id = ?').get(id);
  if (!row) throw errors.notFound(`Webhook delivery ${id} not found`);
  return row;
}

/**
 * The SQL of dueDeliveryIds. `pastHeld`: deliveries held by webhook chaos (reorder, burst) do not hold back the later
 * events of their transaction: that is the out-of-order delivery asked for (docs/faults.md#reorder).
 */
function dueSql(pastHeld: boolean): string {
  const notHeld = pastHeld ? '\n           AND e.id NOT IN (SELECT value FROM json_each(?))' : '';
  return `SELECT d.id FROM webhook_deliveries d
     WHERE d.status = 'PENDING'
       AND NOT EXISTS (
         SELECT 1 FROM webhook_deliveries e
         WHERE e.resource_id = d.resource_id AND e.event_seq < d.event_seq AND e.status IN ('PENDING', 'RETRYING')${notHeld})
     ORDER BY d.event_seq
     LIMIT +?`; // not a bare LIMIT ?: that is prepared again on every run (docs/benchmarks.md#uncached-reads)
}
const DUE_SQL = dueSql(false);
const DUE_PAST_HELD_SQL = dueSql(true);

/**
 * Deliveries that may be attempted now, oldest event first. A delivery waits while an earlier event of the
 * same transaction is still PENDING or RETRYING, so a receiver sees one transaction's events in the order
 * they were written (docs/decisions.md#webhook-ordering). FAILED and SKIPPED earlier events do not block, nor do
 * those held out of order by webhook chaos.
 */
export function dueDeliveryIds(ctx: AppContext, limit: number, heldOutOfOrder: readonly string[] = []): string[] {
  const rows =
    heldOutOfOrder.length > 0
      ? prepared<{ id: string }>(ctx.db, DUE_PAST_HELD_SQL).all(JSON.stringify(heldOutOfOrder), limit)
      : prepared<{ id: string }>(ctx.db, DUE_SQL).all(limit);
  return rows.map((row) => row.id);
}

/** Job handler: a retry's time has come on the emulated clock; the dispatcher is woken after the job. */
export function runWebhookRetry(ctx: AppContext, payload: Record<string, unknown>): void {
  const id = String(payload.deliveryId);
  prepared(ctx.db, "UPDATE webhook_deliveries SET status = 'PENDING', updated_at = ? WHERE id = ? AND status = 'RETRYING'").run(ctx.clock.nowIso(), id);
}

/** A scheduled attempt found nowhere to go: the delivery leaves the queue SKIPPED (replayable later), with why. */
export function skipDelivery(ctx: AppContext, deliveryId: string, why: string): void {
  prepared(ctx.db, "UPDATE webhook_deliveries SET status = 'SKIPPED', next_attempt_at = NULL, last_error = ?, updated_at = ? WHERE id = ?").run(
    why,
    ctx.clock.nowIso(),
    deliveryId,
  );
}

/**
 * Where a delivery goes after its `attemptCount`-th scheduled attempt failed, the attempt having ended at
 * `endedAtMs` (docs/decisions.md#webhook-retries): FAILED after the last; else RETRYING with a `webhook.retry` job
 * (scheduled here, inside the caller's transaction), or PENDING at once when the clock already passed the retry.
 */
export function scheduleRetry(ctx: AppContext, deliveryId: string, attemptCount: number, endedAtMs: number): { status: DeliveryStatus; nextAttemptAt: string | null } {
  const delay = RETRY_DELAYS_MS[attemptCount - 1];
  if (delay === undefined) return { status: 'FAILED', nextAttemptAt: null };
  // the delay runs from the failure, on the emulated clock; a retry already due (the clock jumped past it) is owed
  // at once, still stamped with its due time (scheduledAttemptTime, webhooks.attempt.ts)
  const dueMs = clampToClockRange(endedAtMs + delay); // docs/decisions.md#clock-range
  const nextAttemptAt = new Date(dueMs).toISOString();
  if (dueMs <= ctx.clock.nowMs()) return { status: 'PENDING', nextAttemptAt };
  scheduleJob(ctx, WEBHOOK_RETRY_JOB, dueMs, { deliveryId });
  return { status: 'RETRYING', nextAttemptAt };
}
