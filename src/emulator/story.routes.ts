import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../http/request-sandbox.js';
import { z } from 'zod';
import { errorResponses } from '../core/errors.js';
import { CONTROL_PLANE } from './emulator.auth.js';
import { emulatorTransactionParams } from './overview.schema.js';
import { transactionStorySchema } from './story.schema.js';
import { getTransactionStory } from './story.service.js';

// A transaction's story, the dashboard's timeline (docs/dashboard.md#read-endpoints-behind-the-dashboard).

export const storyRoutes: FastifyPluginAsyncZod = async (app) => {
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
    async (request) => getTransactionStory(ctxOf(request), request.params.transactionId),
  );
};
