import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../http/request-sandbox.js';
import { CONTROL_PLANE, CONTROL_PLANE_CHANGING_GET } from './emulator.auth.js';
import { errorResponses } from '../core/errors.js';
import { listenerParams, listenResultBody, listenStatusSchema, listenStreamQuery } from './listen.schema.js';
import { EVENT_STREAM_TYPE } from './dashboard.events.js';
import { connectListener, listenStatus, reportAttempt, stopListening } from './listen.service.js';
import { ANSWERED_DURING_CLOCK_MOVES } from '../http/clock-move-gate.js';

// docs/webhooks.md#listen: the relay `service-sandbox listen` connects to. The stream, the listener's reports and the
// relay's state; the routes are control plane (the admin token, when set, guards them too).

const QUIET = 'warn'; // the relay's own traffic (a report per delivery) stays out of the info log

export const listenRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/_emulator/webhooks/listen/stream',
    {
      config: CONTROL_PLANE_CHANGING_GET,
      logLevel: QUIET,
      schema: {
        operationId: 'emulatorListenStream',
        tags: ['Emulator: webhooks'],
        summary: 'The relay\'s event stream, for `service-sandbox listen`',
        description:
          'text/event-stream that stays open. Connecting makes forwardTo every programme\'s webhook endpoint and answers `event: ready` ' +
          '(data `{ listenerId, forwardTo, endpoints }`); then each attempt of a delivery to forwardTo is `event: attempt` (data ' +
          '`{ listenerId, attemptId, deliveryId, url, headers, body, timeoutMs }`: the request as it would have been sent, signed for ' +
          'forwardTo\'s path), answered by POST /_emulator/webhooks/listen/{listenerId}/results. A second listener replaces the first ' +
          '(`event: replaced`); a reset ends the stream (`event: closed`). A comment line every 15 s.',
        produces: ['text/event-stream'],
        querystring: listenStreamQuery,
        response: { 200: z.string().describe('text/event-stream'), ...errorResponses() },
      },
    },
    async (request, reply) => {
      // HEAD answers the stream's headers and connects nothing: no endpoint changes (docs/webhooks.md#listen).
      if (request.method === 'HEAD') return reply.type(EVENT_STREAM_TYPE).header('cache-control', 'no-cache').send('');
      reply.hijack();
      connectListener(ctxOf(request), request.query.forwardTo, reply.raw);
    },
  );

  app.post(
    '/_emulator/webhooks/listen/:listenerId/results',
    {
      // the relay's results are recorded as a direct send's are, during a move too: held, a long move timed them out
      config: { ...CONTROL_PLANE, ...ANSWERED_DURING_CLOCK_MOVES },
      logLevel: QUIET,
      schema: {
        operationId: 'emulatorReportListenAttempt',
        tags: ['Emulator: webhooks'],
        summary: 'The app\'s answer to one relayed attempt',
        description:
          'What the app answered (status, the first bytes of its body, latency) or why it did not (error): recorded as the attempt\'s ' +
          'outcome exactly as a direct send\'s (a 2xx acknowledges; anything else is retried on the schedule). 404 when the attempt ' +
          'no longer waits (it timed out, or the listener was replaced or the sandbox reset).',
        params: listenerParams,
        body: listenResultBody,
        response: { 204: z.null(), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      reportAttempt(ctxOf(request), request.params.listenerId, request.body);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/_emulator/webhooks/listen',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorGetListenRelay',
        tags: ['Emulator: webhooks'],
        summary: 'The listen relay: its URL, and whether a listener is connected',
        description: 'forwardTo is null when no relay was set up (deliveries go out directly).',
        response: { 200: listenStatusSchema, ...errorResponses() },
      },
    },
    async (request) => listenStatus(ctxOf(request)),
  );

  app.delete(
    '/_emulator/webhooks/listen',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorStopListenRelay',
        tags: ['Emulator: webhooks'],
        summary: 'Stop the listen relay',
        description:
          'The stream ends (`event: closed`; the listener exits its loop only when interrupted, so stop it too) and attempts go out ' +
          'directly from now on, to the endpoint as it is (PUT /_emulator/webhooks/endpoint changes it).',
        response: { 204: z.null(), ...errorResponses() },
      },
    },
    async (request, reply) => {
      stopListening(ctxOf(request));
      return reply.status(204).send(null);
    },
  );
};
