import { prepared } from '../../db/connection.js';
import { readPage } from '../../db/page.js';
import type { AppContext } from '../../context.js';
import { errors } from '../../core/errors.js';
import { scheduleJob } from '../../scheduler/scheduler.js';
import { signWebhook } from '../../webhook-verify.js';
import { VERSION } from '../../version.js';
import type {
  ChaosEffect,
  DeliveryStatus,
  ListDeliveriesQuery,
  WebhookAttempt,
  WebhookDelivery,
  WebhookEndpoints,
} from './webhooks.schema.js';
import { notifyOutbox } from './outbox.js';
import { noChaos, type AttemptChaos, type ChaosTarget } from './webhooks.interceptor.js';
import type { StateSlot } from '../../runtime/sandbox-runtime.js';

// Synchronous side of webhook delivery (docs/webhooks.md#delivery-rules, interface 6.1): what to send next, the signed
// request of one attempt, and the bookkeeping after it. Every state change is one SQLite transaction. The async
// HTTP send lives in webhooks.sender.ts and never holds a transaction open.

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

/** Attempt log limits: a receiver's answer is kept for debugging, not archived. */
export const RESPONSE_BODY_LOG_LIMIT = 2048;

export interface DeliveryRow {
  id: string;
  event_seq: number;
  event_id: string;
  programme_id: string;
  resource_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_response_status: number | null;
  last_error: string | null;
  delivered_at: string | null;
  created_at: string;
  updated_at: string;
}

interface AttemptRow {
  id: number;
  delivery_id: string;
  number: number;
  kind: AttemptKind;
  url: string;
  attempted_at: string;
  attempted_at_ms: number;
  signed_at_ms: number;
  request_headers: string;
  request_body: string;
  outcome: 'SUCCEEDED' | 'FAILED';
  response_status: number | null;
  response_body: string | null;
  error: string | null;
  latency_ms: number;
  /** JSON array of what webhook chaos did to the attempt (docs/faults.md#what-the-log-shows). */
  chaos: string;
}

interface OutboxRow {
  seq: number;
  event_id: string;
  programme_id: string;
  user_id: string | null;
  resource_type: string;
  event_type: string;
  occurred_at: string;
  payload: string;
}

interface ProgrammeWebhookRow {
  id: string;
  webhook_api_key: string;
  webhook_secret: string;
  webhook_url: string | null;
}

// ---------------------------------------------------------------------------------------------------------
// What is due

/**
 * Deliveries that may be attempted now, oldest event first. A delivery waits while an earlier event of the
 * same transaction is still PENDING or RETRYING, so a receiver sees one transaction's events in the order
 * they were written (docs/decisions.md#webhook-ordering). FAILED and SKIPPED earlier events do not block.
 */
export function dueDeliveryIds(ctx: AppContext, limit: number, heldOutOfOrder: readonly string[] = []): string[] {
  if (heldOutOfOrder.length > 0) return dueDeliveryIdsPastHeld(ctx, limit, heldOutOfOrder);
  return prepared<{ id: string }>(
    ctx.db,
    `SELECT d.id FROM webhook_deliveries d
     WHERE d.status = 'PENDING'
       AND NOT EXISTS (
         SELECT 1 FROM webhook_deliveries e
         WHERE e.resource_id = d.resource_id AND e.event_seq < d.event_seq AND e.status IN ('PENDING', 'RETRYING'))
     ORDER BY d.event_seq
     LIMIT ?`,
  )
    .all(limit)
    .map((row) => row.id);
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

/**
 * The same, except that deliveries held by webhook chaos (reorder, burst) do not hold back the later events of
 * their transaction: that is the out-of-order delivery asked for (docs/faults.md#reorder).
 */
function dueDeliveryIdsPastHeld(ctx: AppContext, limit: number, held: readonly string[]): string[] {
  return prepared<{ id: string }>(
    ctx.db,
    `SELECT d.id FROM webhook_deliveries d
     WHERE d.status = 'PENDING'
       AND NOT EXISTS (
         SELECT 1 FROM webhook_deliveries e
         WHERE e.resource_id = d.resource_id AND e.event_seq < d.event_seq AND e.status IN ('PENDING', 'RETRYING')
           AND e.id NOT IN (SELECT value FROM json_each(?)))
     ORDER BY d.event_seq
     LIMIT ?`,
  )
    .all(JSON.stringify(held), limit)
    .map((row) => row.id);
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

/** Job handler: a retry's time has come on the emulated clock; the dispatcher is woken after the job. */
export function runWebhookRetry(ctx: AppContext, payload: Record<string, unknown>): void {
  const id = String(payload.deliveryId);
  prepared(ctx.db, "UPDATE webhook_deliveries SET status = 'PENDING', updated_at = ? WHERE id = ? AND status = 'RETRYING'").run(ctx.clock.nowIso(), id);
}

// ---------------------------------------------------------------------------------------------------------
// One attempt: prepare (sync), send (async, webhooks.sender.ts), record (sync)

/** DUPLICATE: webhook chaos sent a delivered event again (docs/faults.md#duplicate); it changes nothing of the delivery. */
export type AttemptKind = 'SCHEDULED' | 'REPLAY' | 'DUPLICATE';

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

function getDelivery(ctx: AppContext, id: string): DeliveryRow | undefined {
  return prepared<DeliveryRow>(ctx.db, 'SELECT * FROM webhook_deliveries WHERE id = ?').get(id);
}

/** Accept either the delivery id (`dlv_`) or its event id (`evt_`). */
export function findDelivery(ctx: AppContext, id: string): DeliveryRow {
  const row =
    prepared<DeliveryRow>(ctx.db, 'SELECT * FROM webhook_deliveries WHERE id = ?').get(id) ??
    prepared<DeliveryRow>(ctx.db, 'SELECT * FROM webhook_deliveries WHERE event_id = ?').get(id);
  if (!row) throw errors.notFound(`Webhook delivery ${id} not found`);
  return row;
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
    const event = prepared<OutboxRow>(ctx.db, 'SELECT * FROM outbox WHERE seq = ?').get(delivery.event_seq)!;
    const programme = prepared<ProgrammeWebhookRow>(ctx.db, 'SELECT id, webhook_api_key, webhook_secret, webhook_url FROM programmes WHERE id = ?').get(
      delivery.programme_id,
    );
    if (!programme?.webhook_url) {
      if (kind === 'SCHEDULED') {
        const now = ctx.clock.nowIso();
        prepared(ctx.db, "UPDATE webhook_deliveries SET status = 'SKIPPED', next_attempt_at = NULL, last_error = ?, updated_at = ? WHERE id = ?").run(
          'No webhook URL configured for the programme when the delivery was due',
          now,
          deliveryId,
        );
      }
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
      if (result.outcome === 'FAILED') {
        const delay = RETRY_DELAYS_MS[attemptCount - 1];
        if (delay === undefined) {
          status = 'FAILED';
          nextAttemptAt = null;
        } else {
          // the delay runs from the failure, on the emulated clock; a retry already due (the clock jumped
          // past it) is owed at once, still stamped with its due time (scheduledAttemptTime)
          const dueMs = endedAtMs + delay;
          nextAttemptAt = new Date(dueMs).toISOString();
          if (dueMs <= ctx.clock.nowMs()) status = 'PENDING';
          else {
            status = 'RETRYING';
            scheduleJob(ctx, WEBHOOK_RETRY_JOB, dueMs, { deliveryId: delivery.id });
          }
        }
      }
    }
    prepared(
      ctx.db,
      `UPDATE webhook_deliveries SET status = ?, attempt_count = ?, next_attempt_at = ?, last_attempt_at = ?, last_response_status = ?,
         last_error = ?, delivered_at = ?, updated_at = ? WHERE id = ?`,
    ).run(status, attemptCount, nextAttemptAt, attempt.attemptedAt, result.responseStatus, result.error, deliveredAt, now, delivery.id);
    return number;
  })();
}

// ---------------------------------------------------------------------------------------------------------
// Control plane (docs/webhooks.md#delivery-log-and-replay)

/** Check a replay is possible before any network work; 409 when there is nowhere to send it. */
export function assertReplayable(ctx: AppContext, id: string): DeliveryRow {
  const delivery = findDelivery(ctx, id);
  const url = prepared<{ webhook_url: string | null }>(ctx.db, 'SELECT webhook_url FROM programmes WHERE id = ?').get(delivery.programme_id)?.webhook_url;
  if (!url) {
    throw errors.conflict(`No webhook URL is configured for programme ${delivery.programme_id}; set one with PUT /_emulator/webhooks/endpoint first`);
  }
  return delivery;
}

export function listDeliveries(ctx: AppContext, query: ListDeliveriesQuery) {
  const where: string[] = [];
  const params: unknown[] = [];
  if (query.status) {
    where.push('status = ?');
    params.push(query.status);
  }
  if (query.eventType) {
    where.push('event_type = ?');
    params.push(query.eventType);
  }
  if (query.transactionId) {
    where.push('resource_id = ?');
    params.push(query.transactionId);
  }
  if (query.programId) {
    where.push('programme_id = ?');
    params.push(query.programId);
  }
  const filter = where.length ? `WHERE ${where.join(' AND ')}` : '';
  const direction = query.sortDirection === 'ASC' ? 'ASC' : 'DESC';
  return readPage<DeliveryRow, WebhookDelivery>(
    ctx.db,
    { columns: '*', from: `webhook_deliveries ${filter}`, orderBy: `event_seq ${direction}` },
    params,
    query,
    (row) => toDelivery(ctx, row),
  );
}

export function getDeliveryView(ctx: AppContext, id: string): WebhookDelivery {
  return toDelivery(ctx, findDelivery(ctx, id));
}

/** Row -> control-plane object, with the event's body and every attempt. */
export function toDelivery(ctx: AppContext, row: DeliveryRow): WebhookDelivery {
  const event = prepared<OutboxRow>(ctx.db, 'SELECT * FROM outbox WHERE seq = ?').get(row.event_seq)!;
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

export function listEndpoints(ctx: AppContext, programmeId?: string): WebhookEndpoints {
  const rows = programmeId
    ? prepared<ProgrammeWebhookRow>(ctx.db, 'SELECT id, webhook_api_key, webhook_secret, webhook_url FROM programmes WHERE id = ?').all(programmeId)
    : prepared<ProgrammeWebhookRow>(ctx.db, 'SELECT id, webhook_api_key, webhook_secret, webhook_url FROM programmes ORDER BY id').all();
  if (programmeId && rows.length === 0) throw errors.notFound(`Programme ${programmeId} not found`);
  return { endpoints: rows.map((row) => ({ programId: row.id, url: row.webhook_url, apiKey: row.webhook_api_key })) };
}

/**
 * Set (or clear, with null) the webhook URL of one programme, or of every programme when none is named.
 * Deliveries still owed (PENDING, RETRYING) go to the new URL at their next attempt; SKIPPED ones stay
 * skipped until replayed.
 */
/**
 * A session's webhook URL (docs/sessions.md#webhooks): every programme's endpoint at creation and after every reset,
 * whatever the fixtures or the starting snapshot say (null: none). `undefined` outside sessions (the root sandbox).
 */
export const sessionWebhookUrlSlot: StateSlot<string | null | undefined> = {
  name: 'webhooks.sessionUrl',
  create: () => undefined,
  reset: 'keep', // and put back on every programme by the reset (src/emulator/reset.service.ts)
  carriedBySnapshots: false,
  newSession: 'given',
};

export function sessionWebhookUrl(ctx: AppContext): string | null | undefined {
  return ctx.runtime.get(sessionWebhookUrlSlot);
}

/** A session's creator fixes where it sends, now and after every reset (docs/sessions.md#webhooks). */
export function pinSessionWebhookUrl(ctx: AppContext, url: string | null): void {
  ctx.runtime.set(sessionWebhookUrlSlot, url);
  setWebhookEndpoint(ctx, { url });
}

export function setWebhookEndpoint(ctx: AppContext, input: { url?: string | null; programId?: string }): WebhookEndpoints {
  const url = input.url ?? null;
  ctx.db.transaction(() => {
    if (input.programId) {
      const changed = prepared(ctx.db, 'UPDATE programmes SET webhook_url = ? WHERE id = ?').run(url, input.programId).changes;
      if (changed === 0) throw errors.notFound(`Programme ${input.programId} not found`);
    } else {
      prepared(ctx.db, 'UPDATE programmes SET webhook_url = ?').run(url);
    }
  })();
  notifyOutbox(ctx);
  return listEndpoints(ctx, input.programId);
}
