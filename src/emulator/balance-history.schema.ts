import { z } from 'zod';
import { instant } from '../http/formats.js';

// GET /_emulator/accounts/{accountId}/balance-history (docs/dashboard.md#balance-over-time)

/** The most change points one answer carries (the newest are kept). */
export const MAX_POINTS = 2000;

export const balanceHistoryParams = z.object({ accountId: z.string().min(1).max(128) });
export const balanceHistoryQuery = z.strictObject({
  // the default fixtures' history month (docs/openapi.md#parameter-examples)
  from: z.iso.datetime({ offset: true }).optional().meta({ examples: ['2026-02-01T00:00:00Z'] }).describe('Start of the period; default: `to` minus 7 days'),
  to: z.iso.datetime({ offset: true }).optional().meta({ examples: ['2026-03-01T00:00:00Z'] }).describe('End of the period; default: the emulated now'),
});
export type BalanceHistoryQuery = z.infer<typeof balanceHistoryQuery>;

export const balancePointSchema = z.object({
  at: instant(),
  current: z.string(),
  available: z.string(),
});

export const balanceHistorySchema = z
  .object({
    accountId: z.string(),
    currency: z.string(),
    from: instant(),
    to: instant(),
    points: z
      .array(balancePointSchema)
      .describe('Oldest first: the balances at `from`, then one point per moment either balance changed, then the balances at `to`'),
    truncated: z.boolean().describe(`true when the period had more than ${MAX_POINTS} changes: only the newest are listed`),
  })
  .meta({ id: 'BalanceHistory' });
export type BalanceHistory = z.infer<typeof balanceHistorySchema>;
