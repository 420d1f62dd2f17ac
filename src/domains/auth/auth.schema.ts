import { z } from 'zod';
import { instant } from '../../http/formats.js';
import { SCOPES } from '../../http/auth.js';

// POST /v1/auth/token (docs/decisions.md#bearer-tokens)
export const tokenBody = z
  .object({ scopes: z.array(z.enum(SCOPES)).min(1).max(SCOPES.length).optional() })
  .strict()
  .optional();

export const tokenResponse = z
  .object({
    accessToken: z.string(),
    tokenType: z.literal('Bearer'),
    expiresIn: z.number().int(),
    expiresAt: instant(),
    scopes: z.array(z.enum(SCOPES)),
    programId: z.string(),
    userId: z.string(),
  })
  .meta({ id: 'AccessToken' });
export type TokenResponse = z.infer<typeof tokenResponse>;
