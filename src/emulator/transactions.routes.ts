import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../context.js';
import { errorResponses } from '../http/errors.js';
import { forceStatusBody, transactionParams, transactionSchema } from '../domains/transactions/transactions.schema.js';
import { forceTransactionStatus } from '../domains/transactions/transactions.service.js';

// Contract 10: force a transaction through a legal transition of the contract 4 table (an illegal one is
// 409 with the table's message), e.g. to settle a magic `.92` payout held in PROCESSING.
export const emulatorTransactionsRoutes = (ctx: AppContext): FastifyPluginAsyncZod =>
  async (app) => {
    app.post(
      '/_emulator/transactions/:transactionId/status',
      {
        config: { auth: { modes: ['none'], user: 'programme' } },
        schema: {
          tags: ['Emulator'],
          summary: 'Force a transaction status (legal transitions only)',
          description:
            'PENDING -> PROCESSING | COMPLETED | FAILED; PROCESSING -> COMPLETED | FAILED. The usual effects follow: ledger entries ' +
            '(credit on COMPLETED, hold released on FAILED), a transaction_status_updated event, the next rail step and the stablecoin sweep. ' +
            'FAILED without statusCode records RAIL_REJECTED.',
          params: transactionParams,
          body: forceStatusBody,
          response: { 200: transactionSchema, ...errorResponses(404, 409) },
        },
      },
      async (request) => {
        const result = forceTransactionStatus(ctx, request.params.transactionId, request.body);
        ctx.notifyOutbox();
        return result;
      },
    );
  };
