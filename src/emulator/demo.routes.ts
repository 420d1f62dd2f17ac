import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../http/request-sandbox.js';
import { pathPrefixOf } from '../http/public-url.js';
import { z } from 'zod';
import { errorResponses } from '../core/errors.js';
import { notifyOutbox } from '../domains/webhooks/outbox.js';
import { CONTROL_PLANE } from './emulator.auth.js';
import { demoStateSchema, demoStepParams, demoStepResultSchema } from './demo.schema.js';
import { getDemoState, runDemoStep } from './demo.service.js';

// The guided demo's routes (docs/dashboard.md#run-a-demo): the shipped scenario `demo` (scenarios/demo.yaml) with its
// progress, and "run step n", kept for the clients that call them; the dashboard plays every scenario, the demo
// included, through /_emulator/scenario (scenario-play.routes.ts).
export const demoRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/_emulator/demo',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorDemo',
        tags: ['Emulator'],
        summary: 'The guided demo: its steps with their captions, and how far it has run in this sandbox',
        description:
          'The shipped scenario demo (scenarios/demo.yaml), run one step at a time with POST /_emulator/demo/steps/{number}. The progress belongs to this sandbox (a reset starts it over). ' +
          '409 when the sandbox plays another scenario.',
        querystring: z.strictObject({}),
        response: { 200: demoStateSchema, ...errorResponses(409) },
      },
    },
    async (request) => getDemoState(ctxOf(request)),
  );

  app.post(
    '/_emulator/demo/steps/:number',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorRunDemoStep',
        tags: ['Emulator'],
        summary: 'Run one step of the guided demo against this sandbox (the next one only)',
        description:
          'No body. Runs the step through the public API (signed requests, journaled) and the emulated clock, and answers the step with what it did ' +
          'and the demo\'s progress. 404: no such step; 409: not the next step, the demo finished, a step still running, or the step could not run ' +
          '(the message says which call failed; the demo stays at that step).',
        params: demoStepParams,
        response: { 200: demoStepResultSchema, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const result = await runDemoStep(app, ctxOf(request), request.params.number, pathPrefixOf(request));
      notifyOutbox(ctxOf(request));
      return result;
    },
  );
};
