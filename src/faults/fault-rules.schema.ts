import { z } from 'zod';
import { instant } from '../http/formats.js';

// Fault rules on API requests (docs/faults.md#fault-rules). One schema per resource: the rule as created and as
// listed; the effect is a union discriminated by `type`.

export const FAULT_STATUSES = [429, 500, 502, 503, 504] as const;
export const AMBIGUOUS_STATUSES = [500, 502, 503, 504] as const;
export const MAX_FAULT_RULES = 100;
const MAX_LATENCY_MS = 60_000;

const METHOD_RULE = 'an HTTP method such as GET or POST';
const PATH_RULE = 'a path pattern starting with "/": "*" stands for one path segment, "**" for any number of segments';

const latencyMs = z.number().int().min(0).max(MAX_LATENCY_MS);

export const faultMatchSchema = z
  .strictObject({
    method: z
      .string()
      .regex(/^[A-Za-z]+$/, `must be ${METHOD_RULE}`)
      .optional()
      .describe(`Only requests with this method (${METHOD_RULE}, any case; listed upper case); any method when left out`),
    path: z
      .string()
      .regex(/^\/[^?#\s]*$/, `must be ${PATH_RULE}`)
      .max(1024)
      .meta({ examples: ['/v1/transactions'] }) // a mock (Prism) answers this, not a string its pattern refuses (docs/openapi.md#prism)
      .optional()
      .describe(`Only requests whose path (no query string, no session prefix) matches: ${PATH_RULE}. Any path outside /_emulator when left out`),
    userId: z.string().min(1).max(128).optional().describe('Only requests made for this user (the authenticated X-Service-User-Id or the key\'s user)'),
    body: z
      .record(z.string().min(1).max(256), z.unknown())
      .optional()
      .describe('Only JSON bodies whose fields equal these values; a key may be a dotted path into the body, e.g. "amount.currency"'),
    bodyContains: z
      .string()
      .min(1)
      .max(1024)
      .optional()
      .describe('Only bodies whose text contains this; a Base64 text body (the payout endpoint) is also searched decoded'),
  })
  .meta({ id: 'FaultMatch', description: 'Which requests a fault rule applies to; every field given must match' });

export const faultEffectSchema = z
  .discriminatedUnion('type', [
    z
      .strictObject({
        type: z.literal('latency'),
        ms: latencyMs.optional().describe('Real milliseconds added before the request is processed'),
        minMs: latencyMs.optional().describe('With maxMs: a seeded draw in [minMs, maxMs] per request'),
        maxMs: latencyMs.optional(),
      })
      // ms, or minMs with maxMs: the refinement below, and only in prose in the document (docs/openapi.md#rules-between-fields)
      .meta({ description: 'Added latency; the request is then processed as usual. Give ms, or minMs with maxMs (not both).' }),
    z
      .strictObject({
        type: z.literal('status'),
        status: z.literal(FAULT_STATUSES).describe('The status answered instead of processing the request'),
        retryAfterSeconds: z.number().int().min(0).max(3600).optional().describe('Retry-After header; default 1 on 429 and 503, none otherwise'),
        message: z.string().min(1).max(500).optional().describe('The error body\'s message; a default names the rule'),
      })
      .describe('An error answer with the interface\'s error body; nothing is processed'),
    z.strictObject({ type: z.literal('drop') }).describe('The connection is closed before any processing; no answer'),
    z
      .strictObject({
        type: z.literal('ambiguous'),
        status: z
          .literal(AMBIGUOUS_STATUSES)
          .optional()
          .describe('Answered instead of the real answer; left out: the connection is closed instead'),
      })
      .describe('The request is fully processed and committed, then its answer is lost: a 5xx or a closed connection'),
  ])
  .meta({ id: 'FaultEffect', description: 'What a fault rule does to a request it fires on' });
export type FaultEffect = z.infer<typeof faultEffectSchema>;

export const createFaultRuleBody = z
  .strictObject({
    match: faultMatchSchema.default({}).describe('Which requests; every request outside /_emulator when left out'),
    effect: faultEffectSchema,
    times: z.number().int().min(1).max(1_000_000).optional().describe('Fire on the next N matching requests (with probability: until N fired)'),
    probability: z.number().min(0).max(1).optional().describe('Each matching request fires with this probability, drawn from the seed'),
    seed: z.string().min(1).max(256).optional().describe('Seed of the draws (probability, latency ranges); default: the server\'s seed and the rule\'s id'),
  })
  .superRefine((body, context) => {
    const effect = body.effect;
    if (effect.type !== 'latency') return;
    const range = effect.minMs !== undefined || effect.maxMs !== undefined;
    if (effect.ms === undefined && !range) {
      context.addIssue({ code: 'custom', path: ['effect', 'ms'], message: 'A latency effect needs ms, or minMs and maxMs' });
    } else if (effect.ms !== undefined && range) {
      context.addIssue({ code: 'custom', path: ['effect', 'ms'], message: 'Give either ms or minMs and maxMs, not both' });
    } else if (range && (effect.minMs === undefined || effect.maxMs === undefined)) {
      context.addIssue({ code: 'custom', path: ['effect', effect.minMs === undefined ? 'minMs' : 'maxMs'], message: 'A latency range needs both minMs and maxMs' });
    } else if (range && effect.minMs! > effect.maxMs!) {
      context.addIssue({ code: 'custom', path: ['effect', 'minMs'], message: 'minMs must not be greater than maxMs' });
    }
  });
export type CreateFaultRuleInput = z.infer<typeof createFaultRuleBody>;
/** A rule as a client writes it (the test kit's `addFault`). */
export type FaultRuleInput = z.input<typeof createFaultRuleBody>;

export const faultRuleSchema = z
  .object({
    id: z.string().describe('flt_1, flt_2, ... in the order rules were added to this sandbox'),
    match: faultMatchSchema,
    effect: faultEffectSchema,
    times: z.number().int().nullable().describe('null: no limit'),
    probability: z.number().nullable().describe('null: every matching request'),
    seed: z.string(),
    matched: z.number().int().describe('Requests the rule was evaluated on'),
    fired: z.number().int().describe('Requests the rule acted on'),
    remaining: z.number().int().nullable().describe('Firings left of times; 0: spent (kept in the list, no longer acts); null: no limit'),
    active: z.boolean().describe('false once spent'),
    createdAt: instant().describe('Real time the rule was added'),
  })
  .meta({ id: 'FaultRule' });
export type FaultRule = z.infer<typeof faultRuleSchema>;

export const faultRuleListSchema = z.object({ data: z.array(faultRuleSchema) }).meta({ id: 'FaultRuleList' });

export const faultRuleParams = z.strictObject({ id: z.string().min(1).max(64).describe('Fault rule id (flt_...)') });

/** What the journal records of a fault that fired (docs/faults.md#in-the-journal). */
export const firedFaultSchema = z
  .object({
    ruleId: z.string(),
    type: z.enum(['latency', 'status', 'drop', 'ambiguous']),
    detail: z.string().describe('What was done, e.g. "503 answered", "250 ms added", "committed, then the connection was closed"'),
  })
  .meta({ id: 'FiredFault' });
export type FiredFault = z.infer<typeof firedFaultSchema>;
