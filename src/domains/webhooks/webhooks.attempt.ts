import { prepared } from '../../db/connection.js';
import type { AppContext } from '../../context.js';
import { signWebhook } from '../../webhook-verify.js';
import { VERSION } from '../../version.js';
import type { AttemptKind, ChaosEffect, DeliveryRow, OutboxRow } from './webhooks.schema.js';
import { getDelivery, skipDelivery } from './webhooks.queue.js';
import { noChaos, type AttemptChaos, type ChaosTarget } from './webhooks.interceptor.js';
import { programmeWebhookOf } from './webhooks.endpoints.js';

// One attempt's signed request (docs/webhooks.md#what-a-delivery-looks-like, interface 6.1), prepared in a short
// synchronous transaction before the send (webhooks.sender.ts) with what webhook chaos planned for it
// (docs/faults.md#timestamps-and-signature); the outcome is recorded by webhooks.record.ts.

export interface PreparedAttempt {
  deliveryId: string;
  kind: AttemptKind;
  url: string;
  headers: Record<string, string>;
  body: string;
  attemptedAt: string;
  attemptedAtMs: number;
  /**
   * The emulated clock when the attempt was prepared: what it reads at the answer, minus this, is the attempt's
   * duration.
   */
  preparedAtMs: number;
  /** X-Service-Timestamp as sent (real time, moved by webhook chaos when a timestamp effect fired). */
  signedAtMs: number;
  /** What webhook chaos did to this attempt (docs/faults.md#what-the-log-shows). */
  chaos: ChaosEffect[];
}

export interface AttemptResult {
  outcome: 'SUCCEEDED' | 'FAILED';
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
  latencyMs: number;
}

/** What webhook chaos needs of a delivery whose scheduled attempt is about to be made; null when none is owed. */
export function chaosTargetOf(ctx: AppContext, deliveryId: string): ChaosTarget | null {
  const delivery = getDelivery(ctx, deliveryId);
  if (!delivery || delivery.status !== 'PENDING') return null;
  return {
    deliveryId,
    eventId: delivery.event_id,
    resourceId: delivery.resource_id,
    eventSeq: delivery.event_seq,
    attemptNumber: delivery.attempt_count + 1,
  };
}

export function outboxEvent(ctx: AppContext, seq: number): OutboxRow {
  return prepared<OutboxRow>(ctx.db, 'SELECT * FROM outbox WHERE seq = ?').get(seq)!;
}

/**
 * The body of interface 6.1 (docs/webhooks.md#what-a-delivery-looks-like); the same bytes for every attempt of one
 * event.
 */
export function webhookBody(event: OutboxRow): string {
  const metadata: Record<string, string> = {
    eventId: event.event_id,
    eventType: event.event_type,
    programId: event.programme_id,
  };
  // webhook bodies omit fields that have no value (docs/decisions.md#nulls-rest-vs-webhook)
  if (event.user_id !== null) metadata.userId = event.user_id;
  metadata.occurredAt = event.occurred_at;
  // The payload was stored as JSON at the instant of the event (toWebhookTransaction): splice it in as is.
  return `{"transaction":${event.payload},"metadata":${JSON.stringify(metadata)}}`;
}

/**
 * The emulated instant a scheduled attempt was due, which it is stamped with (docs/decisions.md#webhook-attempt-times):
 * when the clock jumped past several due attempts (an advance, a later --clock at start-up), each is
 * stamped with its own due time, as every other job is, and the next retry is reckoned from there. It is
 * the later of the delivery's own due time (its event's instant, or the retry's `next_attempt_at`) and the
 * last attempt of an earlier event of the same transaction (a delivery waits for those: dueDeliveryIds),
 * and never later than now. A replay is made now, on request.
 */
function scheduledAttemptTime(ctx: AppContext, delivery: DeliveryRow, event: OutboxRow): number {
  const ownDueMs = Date.parse(delivery.attempt_count > 0 && delivery.next_attempt_at ? delivery.next_attempt_at : event.occurred_at);
  const releasedAtMs =
    prepared<{ ms: number | null }>(
      ctx.db,
      `SELECT MAX(a.attempted_at_ms) AS ms FROM webhook_deliveries e JOIN webhook_attempts a ON a.delivery_id = e.id
       WHERE e.resource_id = ? AND e.event_seq < ?`,
    ).get(delivery.resource_id, delivery.event_seq)?.ms ?? -Infinity;
  return Math.min(ctx.clock.nowMs(), Math.max(ownDueMs, releasedAtMs));
}

/**
 * Build the signed request of the next attempt of a delivery, or return why there is none. A scheduled
 * attempt of a delivery whose programme lost its URL is recorded SKIPPED.
 */
export function prepareAttempt(ctx: AppContext, deliveryId: string, kind: AttemptKind, chaos: AttemptChaos = noChaos()): PreparedAttempt | { skipped: string } {
  return ctx.db.transaction(() => {
    const delivery = getDelivery(ctx, deliveryId);
    if (!delivery) return { skipped: 'delivery no longer exists (reset?)' };
    if (kind === 'SCHEDULED' && delivery.status !== 'PENDING') return { skipped: `delivery is ${delivery.status}` };
    const event = outboxEvent(ctx, delivery.event_seq);
    const programme = programmeWebhookOf(ctx, delivery.programme_id);
    if (!programme?.webhook_url) {
      if (kind === 'SCHEDULED') skipDelivery(ctx, deliveryId, 'No webhook URL configured for the programme when the delivery was due');
      return { skipped: 'no webhook URL is configured for the programme' };
    }
    const body = webhookBody(event);
    const attemptedAtMs = kind === 'SCHEDULED' ? scheduledAttemptTime(ctx, delivery, event) : ctx.clock.nowMs();
    // README "Webhooks": the timestamp is real wall-clock time, because receivers compare it with their own
    // clock (interface 6.1); business time (the retry schedule, attempted_at) is the emulated clock.
    // webhook chaos may move the timestamp and sign over the moved one (docs/faults.md#timestamps-and-signature)
    const signedAtMs = ctx.clock.realNowMs() + chaos.timestampSkewMs;
    const timestamp = String(signedAtMs);
    const path = new URL(programme.webhook_url).pathname;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': `service-sandbox-webhooks/${VERSION}`,
      'x-service-resource-type': event.resource_type,
      'x-service-event-type': event.event_type,
      'x-service-api-key': programme.webhook_api_key,
      'x-service-timestamp': timestamp,
      'x-service-signature': signWebhook({
        apiKey: programme.webhook_api_key,
        secret: chaos.wrongSecret ? wrongSecretFor(programme.webhook_secret) : programme.webhook_secret,
        timestamp,
        path,
        rawBody: body,
      }),
    };
    return {
      deliveryId,
      kind,
      url: programme.webhook_url,
      headers,
      body,
      attemptedAt: new Date(attemptedAtMs).toISOString(),
      attemptedAtMs,
      preparedAtMs: ctx.clock.nowMs(),
      signedAtMs,
      chaos: chaos.effects,
    };
  })();
}

/** A secret that is not the programme's (webhook chaos, badSignature): the signature is well formed but wrong. */
function wrongSecretFor(secret: string): string {
  return `${secret}-not-this-one`;
}
