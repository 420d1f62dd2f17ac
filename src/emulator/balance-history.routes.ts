import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../http/request-sandbox.js';
import { errorResponses } from '../core/errors.js';
import { CONTROL_PLANE } from './emulator.auth.js';
import { balanceHistoryParams, balanceHistoryQuery, balanceHistorySchema } from './balance-history.schema.js';
import { getBalanceHistory } from './balance-history.service.js';

// An account's balances over emulated time (docs/dashboard.md#balance-over-time).

export const balanceHistoryRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/_emulator/accounts/:accountId/balance-history',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorBalanceHistory',
        tags: ['Emulator'],
        summary: "An account's current and available balances over emulated time, from its ledger entries",
        description:
          'One point at `from`, one per moment either balance changed, one at `to` (default: the 7 days up to the emulated now). ' +
          'available moves when an entry is posted; current when its transaction settles, so holds show as the gap (docs/dashboard.md).',
        params: balanceHistoryParams,
        querystring: balanceHistoryQuery,
        response: { 200: balanceHistorySchema, ...errorResponses(404) },
      },
    },
    async (request) => getBalanceHistory(ctxOf(request), request.params.accountId, request.query),
  );
};
