import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../http/request-sandbox.js';
import { errorResponses } from '../core/errors.js';
import { CONTROL_PLANE } from './emulator.auth.js';
import {
  emulatorTransactionDetail,
  emulatorTransactionParams,
  emulatorTransactionsQuery,
  emulatorTransactionsResponse,
  overviewResponse,
} from './overview.schema.js';
import { getEmulatorTransaction, getOverview, listEmulatorTransactions } from './overview.service.js';

// Read endpoints of the control plane (docs/dashboard.md#read-endpoints-behind-the-dashboard) across every programme;
// the dashboard draws them.

export const overviewRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/_emulator/overview',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorOverview',
        tags: ['Emulator'],
        summary: 'Every programme with its users, their accounts (balances, deposit instructions)',
        description: 'Top-level accounts only (sub-balances are hidden, as in the public API). Lists every user, enrolled or not.',
        response: { 200: overviewResponse, ...errorResponses() },
      },
    },
    async (request) => getOverview(ctxOf(request)),
  );

  app.get(
    '/_emulator/transactions',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorListTransactions',
        tags: ['Emulator'],
        summary: 'Transactions across programmes, newest first',
        description: 'Each item is the transaction of interface 2.4 plus userId, programmeId and accountId. limit 1-500, default 50.',
        querystring: emulatorTransactionsQuery,
        response: { 200: emulatorTransactionsResponse, ...errorResponses() },
      },
    },
    async (request) => ({ data: listEmulatorTransactions(ctxOf(request), request.query) }),
  );

  app.get(
    '/_emulator/transactions/:transactionId',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorGetTransaction',
        description: 'A transaction of any programme, with the user and programme that own it.',
        tags: ['Emulator'],
        summary: 'One transaction of any programme, with its owner',
        params: emulatorTransactionParams,
        response: { 200: emulatorTransactionDetail, ...errorResponses(404) },
      },
    },
    async (request) => getEmulatorTransaction(ctxOf(request), request.params.transactionId),
  );
};
