import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ctxOf } from '../http/request-sandbox.js';
import { pathPrefixOf } from '../http/public-url.js';
import { errorResponses } from '../core/errors.js';
import { notifyOutbox } from '../domains/webhooks/outbox.js';
import { CONTROL_PLANE } from './emulator.auth.js';
import { listScenarios } from './scenario-library.js';
import { playStateSchema, playStepParams, playStepResultSchema, scenarioListSchema } from './scenario-play.schema.js';
import { getPlayState, playStep } from './scenario-play.service.js';
import { injectTransport } from './scenario-transport.js';

// docs/sessions.md#scenarios and #playing-a-scenario: the scenarios this server knows, and the one a sandbox plays,
// one step per request. The steps run server-side through the engine (src/scenarios/), in process.
export const scenarioPlayRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/_emulator/scenarios',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorListScenarios',
        tags: ['Emulator'],
        summary: 'The scenario files this server knows: the shipped ones and those of --scenarios',
        description:
          'Each file with its name, description, number of steps and source; a file that cannot be used is listed with its error at its line and column. ' +
          'Files are read on each request: an edited file shows at once. POST /_emulator/sessions { "scenario": name } starts a session with one.',
        querystring: z.strictObject({}),
        response: { 200: scenarioListSchema, ...errorResponses() },
      },
    },
    async (request) => {
      const { config } = ctxOf(request);
      return { data: listScenarios(config), folder: config.scenarios ?? null };
    },
  );

  app.get(
    '/_emulator/scenario',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorScenarioPlay',
        tags: ['Emulator'],
        summary: 'The scenario this sandbox plays: its steps with their captions, and how far it has run',
        description: 'A session created with a scenario plays it. 404 when this sandbox plays none.',
        querystring: z.strictObject({}),
        response: { 200: playStateSchema, ...errorResponses(404) },
      },
    },
    async (request) => getPlayState(ctxOf(request)),
  );

  app.post(
    '/_emulator/scenario/steps/:number',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorPlayScenarioStep',
        tags: ['Emulator'],
        summary: 'Play the next step of the sandbox\'s scenario',
        description:
          'No body. Runs the step (a step with a caption and the steps without one after it) through the engine: signed /v1 calls and control-plane calls ' +
          'in process, which fault rules match as a client\'s. Answers what it did and the play\'s state; a failed check ends the play (passed: false). ' +
          '404: no scenario, or no such step; 409: not the next step, finished, or a step still running.',
        params: playStepParams,
        response: { 200: playStepResultSchema, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const ctx = ctxOf(request);
      const result = await playStep(ctx, injectTransport(app, { prefix: pathPrefixOf(request), adminToken: ctx.config.adminToken }), request.params.number);
      notifyOutbox(ctx);
      return result;
    },
  );
};
