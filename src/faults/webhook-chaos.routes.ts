import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../http/request-sandbox.js';
import { z } from 'zod';
import { CONTROL_PLANE } from '../emulator/emulator.auth.js';
import { errorResponses } from '../core/errors.js';
import { webhookChaosBody, webhookChaosSchema } from './webhook-chaos.schema.js';
import { clearWebhookChaos, getWebhookChaos, putWebhookChaos } from './webhook-chaos.service.js';

// Webhook chaos of this sandbox (docs/faults.md#webhook-chaos), under the admin policy (CONTROL_PLANE). A session's
// routes are the root's, around the session's own ctx, so each sandbox has its own settings.

export const webhookChaosRoutes: FastifyPluginAsyncZod = async (app) => {
  app.put(
    '/_emulator/webhooks/chaos',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorSetWebhookChaos',
        tags: ['Emulator: webhooks'],
        summary: 'Set webhook chaos: duplicates, reordering, delays, stale or future timestamps, bad signatures, bursts',
        description:
          'Replaces every setting (a kind left out is off) and starts the fired counters at 0. Each kind takes ' +
          '`probability` (each scheduled attempt draws, seeded), `times` (the next N attempts; with probability: until ' +
          'it fired N times), both, or neither (every attempt). Same seed and requests, same chaos. In memory: ' +
          'POST /_emulator/reset clears it, snapshots do not hold it. See docs/faults.md#webhook-chaos.',
        body: webhookChaosBody,
        response: { 200: webhookChaosSchema, ...errorResponses() },
      },
    },
    async (request) => putWebhookChaos(ctxOf(request), request.body),
  );

  app.get(
    '/_emulator/webhooks/chaos',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorGetWebhookChaos',
        tags: ['Emulator: webhooks'],
        summary: 'Webhook chaos settings, with how often each kind fired and what is left of times',
        description: 'A kind that is off is null. heldNow counts the attempts waiting in a delay, reorder or burst hold.',
        response: { 200: webhookChaosSchema, ...errorResponses() },
      },
    },
    async (request) => getWebhookChaos(ctxOf(request)),
  );

  app.delete(
    '/_emulator/webhooks/chaos',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorClearWebhookChaos',
        tags: ['Emulator: webhooks'],
        summary: 'Turn webhook chaos off',
        description: 'Clears every setting. Attempts held at this moment (delay, reorder, burst) are sent at once.',
        response: { 204: z.null().describe('Chaos cleared'), ...errorResponses() },
      },
    },
    async (request, reply) => {
      clearWebhookChaos(ctxOf(request));
      return reply.status(204).send(null);
    },
  );
};
