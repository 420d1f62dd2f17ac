import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../http/request-sandbox.js';
import { VERSION } from '../version.js';
import { OPEN } from './emulator.auth.js';
import { healthResponse } from './health.schema.js';
import { ANSWERED_DURING_CLOCK_MOVES } from '../http/clock-move-gate.js';

// GET /_emulator/health (docs/control-plane.md#health-reset-and-clock)
export const healthRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/_emulator/health',
    { config: { ...OPEN, ...ANSWERED_DURING_CLOCK_MOVES }, schema: { operationId: 'emulatorHealth', description: 'Answers 200 while the server runs; open even when the server runs with an admin token, for health checks.', tags: ['Emulator'], summary: 'Liveness (open even when ADMIN_TOKEN is set)', response: { 200: healthResponse } } },
    async (request) => ({ status: 'ok' as const, now: ctxOf(request).clock.nowIso(), version: VERSION }),
  );
};
