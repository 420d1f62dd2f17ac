import { z } from 'zod';

// POST /_emulator/act-as (docs/decisions.md#act-as)

export const ACT_AS_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export const actAsBody = z
  .object({
    userId: z.string().min(1).max(128),
    method: z.enum(ACT_AS_METHODS),
    path: z
      .string()
      .min(4)
      .max(2048)
      .startsWith('/v1/', 'path must be a public API path starting with /v1/ (with its ?query, URL-encoded)'),
    body: z.unknown().optional().describe('Sent as JSON; on /v1/payout-origination/* a string sent as text/plain'),
    idempotencyKey: z.string().min(1).max(128).optional().describe('Sent as the Idempotency-Key header (payout submission)'),
  })
  .strict();
export type ActAsInput = z.infer<typeof actAsBody>;

export const actAsResponse = z
  .object({
    status: z.number().int().describe('Status of the public API call (fault rules do not act on it: docs/faults.md)'),
    body: z.unknown().describe('Its body, parsed when JSON; null when empty'),
    actedAs: z.object({
      apiKey: z.string(),
      integrationType: z.enum(['SINGLE_USER', 'MULTI_USER']),
      programmeId: z.string(),
      userId: z.string(),
    }),
  })
  .meta({ id: 'ActAsResult' });
export type ActAsResult = z.infer<typeof actAsResponse>;
