import { z } from 'zod';

// Webhook chaos (docs/faults.md#webhook-chaos): the body of PUT /_emulator/webhooks/chaos and the view that
// PUT and GET answer. One schema per resource: the kinds' views are parts of WebhookChaos, not resources.

// The kinds (CHAOS_KINDS) are the delivery log's vocabulary: src/domains/webhooks/webhooks.schema.ts.

/** Upper bounds (docs/decisions.md#webhook-chaos-limits): real-time holds stay short; a year of skew at most. */
export const CHAOS_LIMITS = { holdMs: 60_000, skewSeconds: 365 * 24 * 60 * 60, burstSize: 1000, times: 1_000_000, seedLength: 200 } as const;

export const CHAOS_DEFAULTS = { reorderHoldMs: 2000, skewSeconds: 600, burstSize: 10, burstWindowMs: 2000 } as const;

const realMs = (what: string, min = 0) =>
  z
    .number()
    .int()
    .min(min)
    .max(CHAOS_LIMITS.holdMs)
    .describe(`${what}, real milliseconds (at most ${CHAOS_LIMITS.holdMs})`);

const modeShape = {
  probability: z.number().min(0).max(1).optional().describe('Each scheduled attempt draws, firing with this probability (seeded)'),
  times: z.number().int().min(1).max(CHAOS_LIMITS.times).optional().describe('Fire on the next N attempts (with probability: until it fired N times)'),
};

const skewShape = {
  ...modeShape,
  skewSeconds: z
    .number()
    .int()
    .min(1)
    .max(CHAOS_LIMITS.skewSeconds)
    .optional()
    .describe(`How far X-Service-Timestamp is moved, in seconds (default ${CHAOS_DEFAULTS.skewSeconds})`),
};

const delayBody = z
  .strictObject({
    ...modeShape,
    ms: realMs('Fixed hold before the attempt is sent').optional(),
    minMs: realMs('Shortest hold (with maxMs: a seeded value in [minMs, maxMs])').optional(),
    maxMs: realMs('Longest hold').optional(),
  })
  .superRefine((delay, context) => {
    const range = delay.minMs !== undefined || delay.maxMs !== undefined;
    if (delay.ms !== undefined && range) {
      context.addIssue({ code: 'custom', path: ['ms'], message: 'give either ms or minMs and maxMs, not both' });
    } else if (delay.ms === undefined && !range) {
      context.addIssue({ code: 'custom', path: ['ms'], message: 'ms is required (or minMs and maxMs)' });
    } else if (range && (delay.minMs === undefined || delay.maxMs === undefined)) {
      context.addIssue({ code: 'custom', path: [delay.minMs === undefined ? 'minMs' : 'maxMs'], message: 'minMs and maxMs go together' });
    } else if (range && delay.minMs! > delay.maxMs!) {
      context.addIssue({ code: 'custom', path: ['minMs'], message: `minMs (${delay.minMs}) must not be above maxMs (${delay.maxMs})` });
    }
  });

export const webhookChaosBody = z
  .strictObject({
    seed: z
      .string()
      .min(1)
      .max(CHAOS_LIMITS.seedLength)
      .optional()
      .describe('Seed of the draws; absent: the sandbox seed (--seed) + "/webhook-chaos"'),
    duplicate: z.strictObject(modeShape).optional().describe('After an attempt that succeeded, the same body (same eventId) is sent again, signed afresh'),
    reorder: z
      .strictObject({ ...modeShape, holdMs: realMs(`Longest hold waiting for the next event (default ${CHAOS_DEFAULTS.reorderHoldMs})`, 1).optional() })
      .optional()
      .describe('The attempt is held until the next event of the same transaction has been sent (or holdMs passes)'),
    delay: delayBody.optional().describe('The attempt is held ms (or a seeded value in [minMs, maxMs]) of real time before it is sent'),
    staleTimestamp: z.strictObject(skewShape).optional().describe('X-Service-Timestamp skewSeconds in the past, signed over it'),
    futureTimestamp: z.strictObject(skewShape).optional().describe('X-Service-Timestamp skewSeconds in the future, signed over it'),
    badSignature: z.strictObject(modeShape).optional().describe('X-Service-Signature made with a secret that is not the programme\'s'),
    burst: z
      .strictObject({
        ...modeShape,
        size: z.number().int().min(2).max(CHAOS_LIMITS.burstSize).optional().describe(`Deliveries held until this many wait (default ${CHAOS_DEFAULTS.burstSize})`),
        windowMs: realMs(`Longest hold of the first one waiting (default ${CHAOS_DEFAULTS.burstWindowMs})`, 1).optional(),
      })
      .optional()
      .describe('Attempts are held until size of them wait (or windowMs passes), then all sent at once'),
  })
  .describe('Replaces every setting; a kind left out is off');
export type WebhookChaosInput = z.infer<typeof webhookChaosBody>;

const modeView = {
  probability: z.number().nullable(),
  times: z.number().int().nullable(),
  fired: z.number().int().describe('How many attempts it has fired on since these settings were put'),
  remaining: z.number().int().nullable().describe('What is left of times; null without times'),
};
const skewView = { ...modeView, skewSeconds: z.number().int() };

export const webhookChaosSchema = z
  .object({
    seed: z.string().describe('The seed the draws use'),
    heldNow: z.number().int().describe('Attempts held by delay, reorder or burst at this moment'),
    duplicate: z.object(modeView).nullable(),
    reorder: z.object({ ...modeView, holdMs: z.number().int() }).nullable(),
    delay: z.object({ ...modeView, ms: z.number().int().nullable(), minMs: z.number().int(), maxMs: z.number().int() }).nullable(),
    staleTimestamp: z.object(skewView).nullable(),
    futureTimestamp: z.object(skewView).nullable(),
    badSignature: z.object(modeView).nullable(),
    burst: z.object({ ...modeView, size: z.number().int(), windowMs: z.number().int() }).nullable(),
  })
  .meta({ id: 'WebhookChaos' });
export type WebhookChaos = z.infer<typeof webhookChaosSchema>;
