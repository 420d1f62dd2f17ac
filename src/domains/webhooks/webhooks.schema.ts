import { z } from 'zod';
import { instant } from '../../http/formats.js';
import { pageQuery } from '../../http/pagination.js';
import { WEBHOOK_EVENT_TYPES } from '../../core/webhook-events.js';
import { isHttpUrl } from '../../lib/http-url.js';

// The control plane's view of webhook deliveries (docs/webhooks.md#delivery-log-and-replay). One schema per resource.

export const DELIVERY_STATUSES = ['PENDING', 'RETRYING', 'DELIVERED', 'FAILED', 'SKIPPED'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * What webhook chaos (src/faults, registered as the delivery interceptor: webhooks.interceptor.ts) can do to an
 * attempt; the delivery log names them, so the vocabulary is the log's (docs/faults.md#what-the-log-shows).
 */
export const CHAOS_KINDS = ['duplicate', 'reorder', 'delay', 'staleTimestamp', 'futureTimestamp', 'badSignature', 'burst'] as const;
export type ChaosKind = (typeof CHAOS_KINDS)[number];

/** What chaos did to one attempt, as the delivery log shows it (WebhookAttempt.chaos). */
export const chaosEffectSchema = z.object({
  type: z.enum(CHAOS_KINDS),
  detail: z.string(),
});
export type ChaosEffect = z.infer<typeof chaosEffectSchema>;


/** DUPLICATE: webhook chaos sent a delivered event again (docs/faults.md#duplicate); it changes nothing of the delivery. */
export const ATTEMPT_KINDS = ['SCHEDULED', 'REPLAY', 'DUPLICATE'] as const;
export type AttemptKind = (typeof ATTEMPT_KINDS)[number];

export const webhookAttemptSchema = z
  .object({
    number: z.number().int().describe('1-based over every attempt of the delivery, replays and duplicates included'),
    kind: z
      .enum(ATTEMPT_KINDS)
      .describe(
        'SCHEDULED: the first attempt or a scheduled retry; REPLAY: sent by the replay endpoint; DUPLICATE: sent again by webhook chaos after a success (docs/faults.md#webhook-chaos)',
      ),
    url: z.string(),
    attemptedAt: instant().describe('Emulated time of the attempt (the retry schedule runs on the emulated clock)'),
    signedAt: instant().describe('X-Service-Timestamp as sent: real wall-clock time, moved when webhook chaos skewed it'),
    outcome: z.enum(['SUCCEEDED', 'FAILED']),
    responseStatus: z.number().int().nullable().describe('HTTP status of the answer; null on a network error or timeout'),
    responseBody: z.string().nullable().describe('First 2 KiB of the answer'),
    error: z.string().nullable().describe('Why the attempt failed: network error, timeout, or a non-2xx status'),
    latencyMs: z.number().int(),
    requestHeaders: z.record(z.string(), z.string()),
    requestBody: z.string().describe('The raw body sent, byte for byte'),
    chaos: z.array(chaosEffectSchema).describe('What webhook chaos did to this attempt, in the order it happened; empty when nothing'),
  })
  .meta({ id: 'WebhookAttempt' });
export type WebhookAttempt = z.infer<typeof webhookAttemptSchema>;

export const webhookDeliverySchema = z
  .object({
    id: z.string().describe('Delivery id (dlv_); one delivery per event'),
    eventId: z.string(),
    eventType: z.string(),
    resourceType: z.string(),
    transactionId: z.string(),
    programId: z.string(),
    userId: z.string().nullable(),
    occurredAt: instant(),
    status: z.enum(DELIVERY_STATUSES),
    attemptCount: z.number().int().describe('Scheduled attempts made (at most 10); replays not counted'),
    nextAttemptAt: instant().nullable().describe('Emulated time of the next retry while RETRYING'),
    lastAttemptAt: instant().nullable(),
    lastResponseStatus: z.number().int().nullable(),
    lastError: z.string().nullable(),
    deliveredAt: instant().nullable(),
    createdAt: instant(),
    updatedAt: instant(),
    body: z
      .object({ transaction: z.record(z.string(), z.unknown()), metadata: z.record(z.string(), z.string()) })
      .describe('The webhook body of interface 6.1, as every attempt sends it'),
    attempts: z.array(webhookAttemptSchema),
  })
  .meta({ id: 'WebhookDelivery' });
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;

export const listDeliveriesQuery = z
  .object({
    status: z.enum(DELIVERY_STATUSES).optional(),
    eventType: z.enum(WEBHOOK_EVENT_TYPES).optional(),
    transactionId: z.string().min(1).optional().meta({ examples: ['txn_hist_acme_usd_001'] }), // a default fixture (docs/openapi.md#parameter-examples)
    programId: z.string().min(1).optional().meta({ examples: ['prg_sandbox'] }),
    sortDirection: z.enum(['ASC', 'DESC']).default('DESC').describe('By event order; DESC (newest first) by default'),
    ...pageQuery(200, 25),
  })
  .strict();
export type ListDeliveriesQuery = z.infer<typeof listDeliveriesQuery>;

export const deliveryListSchema = z
  .object({
    data: z.array(webhookDeliverySchema),
    pageIndex: z.number().int(),
    pageSize: z.number().int(),
    totalRecords: z.number().int(),
  })
  .meta({ id: 'WebhookDeliveryList' });

export const deliveryParams = z.object({ id: z.string().min(1).describe('Delivery id (dlv_) or its event id (evt_)') });

/** A webhook URL as the control plane takes one (also the snapshot file rule: src/snapshots/snapshots.rules.ts). */
export const webhookUrl = z
  .string()
  .refine(isHttpUrl, { message: 'url must be an http:// or https:// URL' });

export const setEndpointBody = z
  .object({
    url: webhookUrl.nullable().optional().describe('Webhook URL; null or absent clears it (events are then recorded SKIPPED)'),
    programId: z.string().min(1).optional().describe('Programme to change; absent: every programme'),
  })
  .strict();

export const endpointQuery = z.object({ programId: z.string().min(1).optional().meta({ examples: ['prg_sandbox'] }) }).strict(); // a default fixture (docs/openapi.md#parameter-examples)

export const webhookEndpointsSchema = z
  .object({
    endpoints: z.array(
      z.object({
        programId: z.string(),
        url: z.string().nullable(),
        apiKey: z.string().describe('The webhook API key sent as X-Service-Api-Key'),
      }),
    ),
  })
  .meta({ id: 'WebhookEndpoints' });
export type WebhookEndpoints = z.infer<typeof webhookEndpointsSchema>;

// ---------------------------------------------------------------------------------------------------------
// Rows (migrations: webhook_deliveries, webhook_attempts, outbox)

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

export interface AttemptRow {
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

export interface OutboxRow {
  seq: number;
  event_id: string;
  programme_id: string;
  user_id: string | null;
  resource_type: string;
  event_type: string;
  occurred_at: string;
  payload: string;
}
