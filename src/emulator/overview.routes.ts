import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { errorResponses } from '../core/errors.js';
import { CONTROL_PLANE } from './emulator.routes.js';
import {
  emulatorTransactionDetail,
  emulatorTransactionParams,
  emulatorTransactionsQuery,
  emulatorTransactionsResponse,
  overviewResponse,
} from './overview.schema.js';
import { getEmulatorTransaction, getOverview, listEmulatorTransactions } from './overview.service.js';
import { balanceHistoryParams, balanceHistoryQuery, balanceHistorySchema, getBalanceHistory } from './balance-history.js';
import { transactionStorySchema } from './story.schema.js';
import { getTransactionStory } from './story.service.js';
import { journeyParams, journeyQuery, userJourneySchema } from './journey.schema.js';
import { getUserJourney } from './journey.service.js';

// Read endpoints of the control plane (docs/dashboard.md#read-endpoints-behind-the-dashboard) across every programme;
// the dashboard draws them.

export const overviewRoutes = (ctx: AppContext): FastifyPluginAsyncZod =>
  async (app) => {
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
      async () => getOverview(ctx),
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
      async (request) => ({ data: listEmulatorTransactions(ctx, request.query) }),
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
      async (request) => getEmulatorTransaction(ctx, request.params.transactionId),
    );

    app.get(
      '/_emulator/transactions/:transactionId/story',
      {
        config: CONTROL_PLANE,
        schema: {
          operationId: 'emulatorTransactionStory',
          tags: ['Emulator'],
          summary: "A transaction's story: status steps, ledger entries and webhook deliveries on the emulated clock",
          description:
            'What the dashboard draws as a timeline (docs/dashboard.md): each status with its emulated time (from the events ' +
            'the transaction recorded), the ledger entries it posted, and its webhook deliveries with every attempt.',
          params: emulatorTransactionParams,
          querystring: z.strictObject({}),
          response: { 200: transactionStorySchema, ...errorResponses(404) },
        },
      },
      async (request) => getTransactionStory(ctx, request.params.transactionId),
    );

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
      async (request) => getBalanceHistory(ctx, request.params.accountId, request.query),
    );

    app.get(
      '/_emulator/users/:userId/journey',
      {
        config: CONTROL_PLANE,
        schema: {
          operationId: 'emulatorUserJourney',
          tags: ['Emulator'],
          summary: "A user's journey: onboarding steps, accounts opened and money in and out, in order on the emulated clock",
          description:
            'Oldest first, each item with its emulated time: the user\'s creation, each state its information requests reached (DRAFT, ' +
            'PROCESSING_SUBMISSION, PENDING_REVIEW, COMPLETED or CANCELED), its enrollment (ACTIVE, ACTIVATION_REJECTED, REVOKED), accounts and ' +
            'deposit instructions, then one item per status of each transaction (transactionId names its story). Read only. 404 for an unknown user.',
          params: journeyParams,
          querystring: journeyQuery,
          response: { 200: userJourneySchema, ...errorResponses(404) },
        },
      },
      async (request) => getUserJourney(ctx, request.params.userId, request.query),
    );
  };
