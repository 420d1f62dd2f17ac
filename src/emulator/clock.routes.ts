import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../http/request-sandbox.js';
import { errorResponses } from '../core/errors.js';
import { CONTROL_PLANE } from './emulator.auth.js';
import { clockBody, clockResponse } from './clock.schema.js';
import { changeClock, clockView } from './clock.service.js';

// GET and POST /_emulator/clock (docs/control-plane.md#health-reset-and-clock)
export const clockRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/_emulator/clock',
    { config: CONTROL_PLANE, schema: { operationId: 'emulatorGetClock', description: 'The emulated time, whether it runs with the real clock or is frozen, and its offset from the real clock.', tags: ['Emulator'], summary: 'Read the emulated clock', response: { 200: clockResponse, ...errorResponses() } } },
    async (request) => clockView(ctxOf(request)),
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
    async (request) => changeClock(ctxOf(request), request.body),
  );
};
