import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../context.js';
import { errorResponses } from '../core/errors.js';
import { originOf } from '../http/public-url.js';
import { ctxOf } from '../http/request-sandbox.js';
import { noRoute } from '../http/error-handling.js';
import { CONTROL_PLANE } from '../emulator/emulator.auth.js';
import { createSessionBody, endedSessionsSchema, endSessionsQuery, sessionListQuery, sessionListSchema, sessionParams, sessionSchema } from './sessions.schema.js';
import { openSession, sessionOptionsOf, sessionOrThrow, sessionView } from './sessions.service.js';
import { SESSION_PATH, type Session, type SessionRegistry } from './sessions.registry.js';
import { startScenario } from './sessions.scenario.js';
import { ANSWERED_DURING_CLOCK_MOVES } from '../http/clock-move-gate.js';

// a session's start, list and end read nothing of the root's database: a move of the root's clock holds none of them
// (docs/decisions.md#scheduler-slices)
const ANSWERED_BESIDE_THE_ROOT_CLOCK = { ...CONTROL_PLANE, ...ANSWERED_DURING_CLOCK_MOVES };

// docs/sessions.md: the root sandbox's control plane creates, lists and ends sessions. A session's own control
// plane ({baseUrl}/_emulator/...) has every other route but these: sessions do not nest.

export const sessionsRoutes = (root: AppContext, registry: SessionRegistry): FastifyPluginAsyncZod =>
  async (app) => {
    // the routes are registered once, for every sandbox: under a session's prefix they are not there
    app.addHook('onRequest', (request, _reply, done) => {
      done(ctxOf(request) === root ? undefined : noRoute(request.method, request.url.split('?')[0]!));
    });
    app.post(
      '/_emulator/sessions',
      {
        config: ANSWERED_BESIDE_THE_ROOT_CLOCK,
        // a scenario's text (up to 1 MiB) or fixtures, as JSON
        bodyLimit: 4 * 1024 * 1024,
        schema: {
          operationId: 'emulatorCreateSession',
          tags: ['Emulator: sessions'],
          summary: 'Create an isolated sandbox for one test',
          description:
            'A whole sandbox of its own (database, clock, scheduler, webhooks, journal, snapshots) at baseUrl on this port. ' +
            'Sign requests over the path as sent, the /_sessions/{id} prefix included. 429 with Retry-After when --max-sessions are live, ' +
            'and 429 while 64 sent scenarios already wait to be read. ' +
            'With scenario, the session starts with the scenario\'s seed, clock and fixtures and its `given` built (docs/sessions.md#scenarios); a bad scenario is a 400 naming its line and column, and no session is left.',
          body: createSessionBody,
          response: { 201: sessionSchema, ...errorResponses(404, 429) },
        },
      },
      async (request, reply) => {
        const { scenario, ...options } = await sessionOptionsOf(root, request.body);
        const origin = originOf(root, request);
        if (!scenario) {
          // docs/sessions.md#how-fast: a session that opens an image is answered before its database opens
          await openSession(registry, options, (session) => void reply.status(201).send(sessionView(registry, session, origin)));
          return reply;
        }
        const session: Session = await openSession(registry, options);
        // docs/sessions.md#scenarios: the scenario's `given` is built before the answer; a failure ends the session
        await startScenario(app, registry, session, SESSION_PATH + session.id, scenario);
        return reply.status(201).send(sessionView(registry, session, origin));
      },
    );

    app.get(
      '/_emulator/sessions',
      {
        config: ANSWERED_BESIDE_THE_ROOT_CLOCK,
        schema: {
          operationId: 'emulatorListSessions',
          tags: ['Emulator: sessions'],
          summary: 'The live sessions, oldest first',
          description:
            'Every live session, oldest first, with its base URL, credentials and when it expires if left idle; the limit and idle timeout of this server (docs/sessions.md). ' +
            'With label, only the sessions created with that label (docs/sessions.md#labels).',
          querystring: sessionListQuery,
          response: { 200: sessionListSchema, ...errorResponses() },
        },
      },
      async (request) => ({
        data: registry.list(request.query.label).map((session) => sessionView(registry, session, originOf(root, request))),
        limit: registry.limit,
        idleTimeoutSeconds: registry.idleTimeoutMs / 1000,
      }),
    );

    app.delete(
      '/_emulator/sessions',
      {
        config: ANSWERED_BESIDE_THE_ROOT_CLOCK,
        schema: {
          tags: ['Emulator: sessions'],
          operationId: 'emulatorEndLabelledSessions',
          summary: 'End every session of a label',
          description:
            'Ends the sessions created with label (a CI run\'s, also after the run crashed) and answers their ids; requests already ' +
            'inside finish first. label is required (docs/sessions.md#labels).',
          querystring: endSessionsQuery,
          response: { 200: endedSessionsSchema, ...errorResponses() },
        },
      },
      async (request) => ({ ended: await registry.endLabelled(request.query.label) }),
    );

    app.get(
      '/_emulator/sessions/:id',
      {
        config: ANSWERED_BESIDE_THE_ROOT_CLOCK,
        schema: { operationId: 'emulatorGetSession', description: 'One live session, described as in the list. 404 once it has ended or expired.', tags: ['Emulator: sessions'], summary: 'One live session', params: sessionParams, response: { 200: sessionSchema, ...errorResponses(404) } },
      },
      async (request) => sessionView(registry, sessionOrThrow(registry, request.params.id), originOf(root, request)),
    );

    app.delete(
      '/_emulator/sessions/:id',
      {
        config: ANSWERED_BESIDE_THE_ROOT_CLOCK,
        schema: {
          operationId: 'emulatorEndSession',
          tags: ['Emulator: sessions'],
          summary: 'End a session',
          description: 'Its requests get 404 from now on; requests already inside finish first. Its database, clock and deliveries are gone.',
          params: sessionParams,
          response: { 204: z.null(), ...errorResponses(404) },
        },
      },
      async (request, reply) => {
        sessionOrThrow(registry, request.params.id);
        await registry.end(request.params.id);
        return reply.status(204).send(null);
      },
    );
  };
