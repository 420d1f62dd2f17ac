import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../context.js';
import { errorResponses } from '../core/errors.js';
import { ADMIN_POLICY, OPEN_POLICY } from '../http/auth.js';
import { resetSandbox } from './reset.service.js';
import { VERSION } from '../version.js';
import { clockBody, clockResponse, healthResponse, resetResponse } from './emulator.schema.js';
import { changeClock, clockView } from './clock.service.js';

// The control plane (docs/control-plane.md). Its routes take the admin policy (no credentials unless ADMIN_TOKEN is
// set, http/auth.ts); OPEN is for the few that stay open even then (health, the dashboard's page and files).
export const CONTROL_PLANE = { auth: ADMIN_POLICY };
export const OPEN = { auth: OPEN_POLICY };

export const emulatorRoutes = (ctx: AppContext): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      '/_emulator/health',
      { config: OPEN, schema: { operationId: 'emulatorHealth', description: 'Answers 200 while the server runs; open even when the server runs with an admin token, for health checks.', tags: ['Emulator'], summary: 'Liveness (open even when ADMIN_TOKEN is set)', response: { 200: healthResponse } } },
      async () => ({ status: 'ok' as const, now: ctx.clock.nowIso(), version: VERSION }),
    );

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
      async () => {
        const started = process.hrtime.bigint();
        resetSandbox(ctx);
        return { status: 'reset' as const, durationMs: Number(process.hrtime.bigint() - started) / 1e6 };
      },
    );

    app.get(
      '/_emulator/clock',
      { config: CONTROL_PLANE, schema: { operationId: 'emulatorGetClock', description: 'The emulated time, whether it runs with the real clock or is frozen, and its offset from the real clock.', tags: ['Emulator'], summary: 'Read the emulated clock', response: { 200: clockResponse, ...errorResponses() } } },
      async () => clockView(ctx),
    );

    app.post(
      '/_emulator/clock',
      {
        config: CONTROL_PLANE,
        schema: {
          operationId: 'emulatorSetClock',
          tags: ['Emulator'],
          summary: 'Freeze, advance or resume the emulated clock',
          description: 'Advancing runs every job due by the new time in time order before answering.',
          body: clockBody,
          response: { 200: clockResponse, ...errorResponses() },
        },
      },
      async (request) => changeClock(ctx, request.body),
    );
  };
