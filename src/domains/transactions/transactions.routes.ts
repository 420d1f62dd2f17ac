import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../../http/request-sandbox.js';
import { errorResponses } from '../../core/errors.js';
import { envelopeSchema } from '../../http/pagination.js';
import { scopeOf } from '../../http/auth.js';
import { checkUpdatedBoundsOrder, listTransactionsQuery, transactionParams, transactionSchema } from './transactions.schema.js';
import { getTransactionJson, listTransactionsPage } from './transactions-list.service.js';

// The services answer JSON text or bytes (the rows' stored REST form, migration 002); either, sent with a
// JSON content type, goes out as is, so the page is not parsed and re-serialized on every request.
const JSON_TYPE = 'application/json; charset=utf-8';

export const transactionsRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/v1/transactions',
    {
      config: { auth: { modes: ['hmac', 'bearer'], scope: 'transactions:read', user: 'user-or-programme' } },
      schema: {
        operationId: 'listTransactions',
        tags: ['Transactions'],
        summary: 'List transactions (interface 4.5)',
        description:
          'The calling user\'s transactions (all of their accounts, or one with accountId, sub-balances included). ' +
          'A MULTI_USER key without X-Service-User-Id lists every transaction of the programme (accountId: any account of the programme). ' +
          'sortBy CREATED_AT (default) | UPDATED_AT | STATUS | TYPE, sortDirection DESC (default) | ASC, ties broken by id in the ' +
          'same direction. minUpdatedAt, maxUpdatedAt and minCreatedAt are inclusive ISO 8601 instants (Z or a URL-encoded offset). ' +
          'Change sync: sortBy=UPDATED_AT&sortDirection=ASC&minUpdatedAt=<latest seen>, skipping ids already seen; when a full page ' +
          'shares one updatedAt, pin minUpdatedAt=maxUpdatedAt to it and page with pageIndex until a short page.',
        querystring: listTransactionsQuery,
        response: { 200: envelopeSchema(transactionSchema), ...errorResponses(403, 404) },
      },
    },
    async (request, reply) => {
      checkUpdatedBoundsOrder(request.query, request.url);
      return reply.type(JSON_TYPE).send(listTransactionsPage(ctxOf(request), scopeOf(request), request.query) as never);
    },
  );

  app.get(
    '/v1/transactions/:transactionId',
    {
      config: { auth: { modes: ['hmac', 'bearer'], scope: 'transactions:read', user: 'user-or-programme' } },
      schema: {
        operationId: 'getTransaction',
        tags: ['Transactions'],
        summary: 'Get a transaction (interface 4.6)',
        description:
          'A transaction of the calling user; with a MULTI_USER key and no X-Service-User-Id, any transaction of the programme. ' +
          'Another programme\'s id is 404; another user\'s, when acting for one user, is 403.',
        params: transactionParams,
        response: { 200: transactionSchema, ...errorResponses(403, 404) },
      },
    },
    async (request, reply) => reply.type(JSON_TYPE).send(getTransactionJson(ctxOf(request), scopeOf(request), request.params.transactionId) as never),
  );
};
