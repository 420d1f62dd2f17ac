import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../http/request-sandbox.js';
import { errorResponses } from '../core/errors.js';
import { forceStatusBody, transactionParams, transactionSchema } from '../domains/transactions/transactions.schema.js';
import { injectParams, injectTransactionBody, returnTransactionBody } from './transactions.schema.js';
import { forceTransactionStatus, injectTransaction, returnTransaction } from './transactions.service.js';
import { CONTROL_PLANE } from './emulator.auth.js';
import { notifyOutbox } from '../domains/webhooks/outbox.js';

// The control plane's transaction routes (docs/control-plane.md#transactions): force a legal transition of
// the transaction table (an illegal one is 409 with the table's message), inject any transaction into an
// account, and return a completed outgoing one. All three write through the transaction core, so ledger,
// timeline and webhooks are those of the live flows.
export const emulatorTransactionsRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/_emulator/transactions/:transactionId/status',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorForceTransactionStatus',
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
      const result = forceTransactionStatus(ctxOf(request), request.params.transactionId, request.body);
      notifyOutbox(ctxOf(request));
      return result;
    },
  );

  app.post(
    '/_emulator/accounts/:accountId/transactions',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorInjectTransaction',
        tags: ['Emulator'],
        summary: 'Inject any transaction into an account (through the ledger, timeline and webhooks)',
        description:
          'INCOMING credits the account when COMPLETED; OUTGOING holds the debit at once (409 when available funds do not cover it) and releases it if FAILED. ' +
          'Created PENDING (transaction_created); with `status` it is walked there now, one legal step at a time (a transaction_status_updated per step) and held; ' +
          'without, it follows the rail timeline on the emulated clock.',
        params: injectParams,
        body: injectTransactionBody,
        response: { 201: transactionSchema, ...errorResponses(404, 409) },
      },
    },
    async (request, reply) => {
      const result = injectTransaction(ctxOf(request), request.params.accountId, request.body);
      notifyOutbox(ctxOf(request));
      return reply.status(201).send(result);
    },
  );

  app.post(
    '/_emulator/transactions/:transactionId/return',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorReturnTransaction',
        tags: ['Emulator'],
        summary: 'Return a completed outgoing transaction (REFUND or PARTIAL_REFUND credited back)',
        description:
          'Body { reasonCode: R01 | AC04 | ..., amount? }. Creates an INCOMING REFUND (the whole amount sent) or PARTIAL_REFUND with statusCode the reason code, ' +
          'purpose RETURN_OF_FUNDS and relatedTransactionId the original; it settles on the incoming timeline. 409 for a transaction that is not COMPLETED, ' +
          'incoming, or returned in full; 400 for an amount over what is still returnable.',
        params: transactionParams,
        body: returnTransactionBody,
        response: { 201: transactionSchema, ...errorResponses(404, 409) },
      },
    },
    async (request, reply) => {
      const result = returnTransaction(ctxOf(request), request.params.transactionId, request.body);
      notifyOutbox(ctxOf(request));
      return reply.status(201).send(result);
    },
  );
};
