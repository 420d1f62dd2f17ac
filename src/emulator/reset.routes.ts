import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../http/request-sandbox.js';
import { errorResponses } from '../core/errors.js';
import { CONTROL_PLANE } from './emulator.auth.js';
import { resetResponse } from './reset.schema.js';
import { resetSandboxInTurns } from './reset.service.js';

// POST /_emulator/reset (docs/control-plane.md#health-reset-and-clock)
export const resetRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/_emulator/reset',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorReset',
        description: 'Every table is cleared and the fixtures loaded again in one transaction; the clock goes back to its start (docs/control-plane.md).',
        tags: ['Emulator'],
        summary: 'Back to the fixtures: every table cleared and reloaded in one transaction; clock back to its start',
        response: { 200: resetResponse, ...errorResponses() },
      },
    },
    async (request) => {
      const started = process.hrtime.bigint();
      await resetSandboxInTurns(ctxOf(request));
      return { status: 'reset' as const, durationMs: Number(process.hrtime.bigint() - started) / 1e6 };
    },
  );
};
