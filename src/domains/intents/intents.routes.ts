import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../../http/request-sandbox.js';
import { errorResponses } from '../../core/errors.js';
import { envelopeSchema } from '../../http/pagination.js';
import { userOf } from '../../http/auth.js';
import { commitIntentBody, createIntentBody, intentParams, listIntentsQuery, transactionIntentSchema } from './intents.schema.js';
import { cancelIntent, commitIntent, createIntent, getIntent, listIntents } from './intents.service.js';

// Reads write too: an intent past expiresAt is marked EXPIRED when read (docs/decisions.md#intent-expiry), so every
// handler runs its service call in one SQLite transaction. Writes take the write lock up front (IMMEDIATE): two
// processes sharing a database file then serialize a commit instead of both reading CREATED.
export const intentsRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/v1/transaction-intents',
    {
      config: { auth: { modes: ['hmac', 'bearer'], scope: 'transactions:write', user: 'required' } },
      schema: {
        operationId: 'createTransactionIntent',
        tags: ['Transaction intents'],
        summary: 'Create a transaction intent: a priced preview',
        description:
          'Exactly one of debitAmount and creditAmount. Fees come from the fee schedule of the credit rail and are charged on ' +
          'the debit side; FX uses the mid rate less the spread. 201 with the intent; the same idempotencyKey with the same ' +
          'body returns 200 and the same intent, with another body 409. The intent expires after 15 minutes of emulated time. ' +
          'Flows (docs/money-out.md#intent-flows): credit an own account (TRANSFER), another user\'s account of the programme ' +
          '(TRANSFER, category P2P) or a beneficiary instrument (WITHDRAWAL); refundOf a COMPLETED deposit (REFUND / PARTIAL_REFUND); ' +
          'debit the user\'s own bank account into an own account (DEPOSIT, category DIRECT_DEBIT).',
        body: createIntentBody,
        response: { 200: transactionIntentSchema, 201: transactionIntentSchema, ...errorResponses(403, 404, 409) },
      },
    },
    async (request, reply) => {
      const result = createIntent(ctxOf(request), userOf(request), request.body);
      return reply.status(result.created ? 201 : 200).send(result.intent);
    },
  );

  app.get(
    '/v1/transaction-intents',
    {
      config: { auth: { modes: ['hmac', 'bearer'], scope: 'transactions:read', user: 'required' } },
      schema: {
        operationId: 'listTransactionIntents',
        tags: ['Transaction intents'],
        summary: 'List the caller\'s transaction intents',
        description: 'Newest first (createdAt descending, then id). pageSize 1-100, default 25.',
        querystring: listIntentsQuery,
        response: { 200: envelopeSchema(transactionIntentSchema), ...errorResponses(403) },
      },
    },
    async (request) => listIntents(ctxOf(request), userOf(request), request.query),
  );

  app.get(
    '/v1/transaction-intents/:transactionIntentId',
    {
      config: { auth: { modes: ['hmac', 'bearer'], scope: 'transactions:read', user: 'required' } },
      schema: {
        operationId: 'getTransactionIntent',
        description: 'A transaction intent of the caller (interface 2.3). An intent past its expiresAt reads EXPIRED.',
        tags: ['Transaction intents'],
        summary: 'Get a transaction intent',
        params: intentParams,
        response: { 200: transactionIntentSchema, ...errorResponses(403, 404) },
      },
    },
    async (request) => getIntent(ctxOf(request), userOf(request), request.params.transactionIntentId),
  );

  app.post(
    '/v1/transaction-intents/:transactionIntentId/cancel',
    {
      config: { auth: { modes: ['hmac', 'bearer'], scope: 'transactions:write', user: 'required' } },
      schema: {
        operationId: 'cancelTransactionIntent',
        tags: ['Transaction intents'],
        summary: 'Cancel a CREATED transaction intent',
        description: 'No body. CREATED -> CANCELED; an intent in any other state gives 409.',
        params: intentParams,
        response: { 200: transactionIntentSchema, ...errorResponses(403, 404, 409) },
      },
    },
    async (request) => cancelIntent(ctxOf(request), userOf(request), request.params.transactionIntentId),
  );

  app.post(
    '/v1/transaction-intents/:transactionIntentId/commit',
    {
      config: { auth: { modes: ['hmac', 'bearer'], scope: 'transactions:write', user: 'required' } },
      schema: {
        operationId: 'commitTransactionIntent',
        tags: ['Transaction intents'],
        summary: 'Commit a transaction intent (interface 4.4)',
        description:
          'The idempotencyKey must be the creation key (else 409). Creates one transaction and returns the COMMITTED intent with ' +
          'relatedTransactionId; repeating the commit returns the same intent. Not enough available funds: 200 with the intent ' +
          'FAILED and a statusReason, no transaction. Expired or canceled intents: 409.',
        params: intentParams,
        body: commitIntentBody,
        response: { 200: transactionIntentSchema, ...errorResponses(403, 404, 409) },
      },
    },
    async (request) =>
      commitIntent(ctxOf(request), userOf(request), request.params.transactionIntentId, request.body.idempotencyKey),
  );
};
