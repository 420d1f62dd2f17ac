import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../http/request-sandbox.js';
import { errorResponses } from '../core/errors.js';
import { CONTROL_PLANE } from './emulator.auth.js';
import { journeyParams, journeyQuery, userJourneySchema } from './journey.schema.js';
import { getUserJourney } from './journey.service.js';

// A user's journey (docs/dashboard.md#read-endpoints-behind-the-dashboard).

export const journeyRoutes: FastifyPluginAsyncZod = async (app) => {
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
    async (request) => getUserJourney(ctxOf(request), request.params.userId, request.query),
  );
};
