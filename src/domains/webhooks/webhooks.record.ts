import { prepared } from '../../db/connection.js';
import type { AppContext } from '../../context.js';
import type { DeliveryStatus } from './webhooks.schema.js';
import { getDelivery, scheduleRetry } from './webhooks.queue.js';
import type { AttemptResult, PreparedAttempt } from './webhooks.attempt.js';

// The bookkeeping after an attempt (docs/webhooks.md#delivery-rules): the attempt's log row and the delivery's next
// state, in one SQLite transaction, opened after the send (webhooks.sender.ts) so none is held across the network.

/** Attempt log limits: a receiver's answer is kept for debugging, not archived. */
export const RESPONSE_BODY_LOG_LIMIT = 2048;

/**
 * Log an attempt and move the delivery on, in one transaction. Scheduled attempts follow
 * docs/decisions.md#webhook-retries: success -> DELIVERED; failure -> RETRYING with a `webhook.retry` job on the
 * emulated clock, or FAILED after the 10th. A replay is one extra attempt: success marks the delivery DELIVERED,
 * failure leaves its status and schedule as they were; a DUPLICATE (webhook chaos) is only logged. Returns the
 * attempt's number, or null when the delivery vanished (reset) meanwhile.
 */
export function recordAttempt(ctx: AppContext, attempt: PreparedAttempt, result: AttemptResult): number | null {
  return ctx.db.transaction(() => {
    const delivery = getDelivery(ctx, attempt.deliveryId);
    if (!delivery) return null;
    const number = prepared<{ n: number }>(ctx.db, 'SELECT COUNT(*) AS n FROM webhook_attempts WHERE delivery_id = ?').get(delivery.id)!.n + 1;
    prepared(
      ctx.db,
      `INSERT INTO webhook_attempts (delivery_id, number, kind, url, attempted_at, attempted_at_ms, signed_at_ms, request_headers,
         request_body, outcome, response_status, response_body, error, latency_ms, chaos)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      delivery.id,
      number,
      attempt.kind,
      attempt.url,
      attempt.attemptedAt,
      attempt.attemptedAtMs,
      attempt.signedAtMs,
      JSON.stringify(attempt.headers),
      attempt.body,
      result.outcome,
      result.responseStatus,
      result.responseBody,
      result.error,
      Math.round(result.latencyMs),
      JSON.stringify(attempt.chaos),
    );
    // a duplicate is only logged: the delivery's status and schedule are those of its other attempts
    if (attempt.kind === 'DUPLICATE') return number;

    const now = ctx.clock.nowIso();
    // the attempt ended its duration after its stamp (0 on a frozen clock): a retry is reckoned from there
    const endedAtMs = attempt.attemptedAtMs + Math.max(0, ctx.clock.nowMs() - attempt.preparedAtMs);
    let status: DeliveryStatus = delivery.status;
    let attemptCount = delivery.attempt_count;
    let nextAttemptAt = delivery.next_attempt_at;
    let deliveredAt = delivery.delivered_at;
    if (result.outcome === 'SUCCEEDED') {
      status = 'DELIVERED';
      nextAttemptAt = null;
      deliveredAt ??= new Date(endedAtMs).toISOString();
    }
    if (attempt.kind === 'SCHEDULED') {
      attemptCount += 1;
      if (result.outcome === 'FAILED') ({ status, nextAttemptAt } = scheduleRetry(ctx, delivery.id, attemptCount, endedAtMs));
    }
    prepared(
      ctx.db,
      `UPDATE webhook_deliveries SET status = ?, attempt_count = ?, next_attempt_at = ?, last_attempt_at = ?, last_response_status = ?,
         last_error = ?, delivered_at = ?, updated_at = ? WHERE id = ?`,
    ).run(status, attemptCount, nextAttemptAt, attempt.attemptedAt, result.responseStatus, result.error, deliveredAt, now, delivery.id);
    return number;
  })();
}
