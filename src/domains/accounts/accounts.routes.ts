import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../../http/request-sandbox.js';
import { errorResponses } from '../../core/errors.js';
import { envelopeSchema } from '../../http/pagination.js';
import { userOf } from '../../http/auth.js';
import { accountDetailSchema, accountParams, accountSchema, listAccountsQuery } from './accounts.schema.js';
import { getAccountDetail, listAccounts } from './accounts.service.js';

export const accountsRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/v1/accounts',
    {
      config: { auth: { modes: ['hmac', 'bearer'], scope: 'accounts:read', user: 'required' } },
      schema: {
        operationId: 'listAccounts',
        tags: ['Accounts'],
        summary: 'List accounts (interface 4.2)',
        description: 'The calling user\'s accounts, createdAt ascending then id. pageSize 1-100, default 25.',
        querystring: listAccountsQuery,
        response: { 200: envelopeSchema(accountSchema), ...errorResponses(403) },
      },
    },
    async (request) => listAccounts(ctxOf(request), userOf(request), request.query),
  );

  app.get(
    '/v1/accounts/:accountId',
    {
      config: { auth: { modes: ['hmac', 'bearer'], scope: 'accounts:read', user: 'required' } },
      schema: {
        operationId: 'getAccount',
        description: 'The account of the list (interface 2.1) with its deposit instructions (2.2) and balances. 404 for an id of another user or programme.',
        tags: ['Accounts'],
        summary: 'Get an account with its deposit instructions and balances',
        params: accountParams,
        response: { 200: accountDetailSchema, ...errorResponses(403, 404) },
      },
    },
    async (request) => getAccountDetail(ctxOf(request), userOf(request), request.params.accountId),
  );
};
