import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../http/request-sandbox.js';
import { CONTROL_PLANE } from './emulator.auth.js';
import { errorResponses } from '../core/errors.js';
import { SETTLE_TIMEOUT_DEFAULT_MS, SETTLE_TIMEOUT_MAX_MS, settleBody, settleReportSchema } from './settle.schema.js';
import { settleSandbox } from './settle.service.js';

// docs/control-plane.md#settle: wait for the sandbox to have nothing left to do now, instead of sleeping.

export const settleRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/_emulator/settle',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorSettle',
        tags: ['Emulator'],
        summary: 'Wait until every job due now has run and every due webhook delivery was attempted and answered',
        description:
          'Answers 200 once the sandbox has nothing left to do at the current emulated time (settled: true), or when timeoutMs ' +
          `(0-${SETTLE_TIMEOUT_MAX_MS}, default ${SETTLE_TIMEOUT_DEFAULT_MS}) of real time has passed (settled: false). Webhook chaos's ` +
          'holds are waited for. What still waits is listed: RETRYING deliveries with their next attempt, deliveries behind an earlier ' +
          'event of their transaction, and the emulated time the next job is due (nextDueAt). Never moves the clock.',
        body: settleBody,
        response: { 200: settleReportSchema, ...errorResponses(404) },
      },
    },
    async (request) => settleSandbox(ctxOf(request), request.body?.timeoutMs ?? SETTLE_TIMEOUT_DEFAULT_MS),
  );
};
