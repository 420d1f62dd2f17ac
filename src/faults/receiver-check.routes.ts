import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../http/request-sandbox.js';
import { CONTROL_PLANE } from '../emulator/emulator.auth.js';
import { errorResponses } from '../core/errors.js';
import { receiverCheckBody, receiverCheckQuery, receiverCheckReportSchema, CHECK_TIMEOUT_MAX_MS, CHECK_TIMEOUT_MIN_MS } from './receiver-check.schema.js';
import { checkSubjectOf, runReceiverCheck } from './receiver-check.service.js';
import { deliveryTransportFor } from '../domains/webhooks/webhooks.transport.js';

// POST /_emulator/webhooks/check (docs/faults.md#receiver-check): what a webhook endpoint gets wrong, in one call.

export const receiverCheckRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/_emulator/webhooks/check',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorCheckWebhookReceiver',
        tags: ['Emulator: webhooks'],
        summary: 'Check a webhook receiver: eight signed deliveries, each judged, in one report',
        description:
          "Sends, one after another, a valid delivery, a bad signature, a tampered body, a stale and a future timestamp, an unknown " +
          'X-Service-Api-Key, the valid delivery again (same eventId) and a query string the signature does not cover, to url (default: ' +
          "the programme's webhook URL), signed with the programme's webhook key and secret. Answers 200 with the report once every " +
          `case has settled (at most 8 x timeoutMs, ${CHECK_TIMEOUT_MIN_MS}-${CHECK_TIMEOUT_MAX_MS}, default 10000). Writes nothing: ` +
          'no event, no delivery in the log. ?format=text answers the plain-text summary alone. 400 naming url when there is none ' +
          'or it is not http(s); 404 for an unknown programId.',
        produces: ['application/json', 'text/plain'],
        querystring: receiverCheckQuery,
        body: receiverCheckBody,
        response: { 200: receiverCheckReportSchema, ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      const subject = checkSubjectOf(ctxOf(request), request.body ?? {});
      // the `listen` relay's forward-to URL is reached through it, as deliveries are (docs/webhooks.md#listen)
      const transport = deliveryTransportFor(ctxOf(request), subject.url);
      const report = await runReceiverCheck(
        subject,
        transport
          ? async (delivery, timeoutMs) => {
              const result = await transport.send(ctxOf(request), { deliveryId: null, url: delivery.url, headers: delivery.headers, body: delivery.body }, { timeoutMs });
              return { status: result.responseStatus, error: result.responseStatus === null ? result.error : null, latencyMs: Math.round(result.latencyMs), body: result.responseBody };
            }
          : undefined,
      );
      // a string with a text/plain type is sent as is; the schema's serializer is for the JSON form
      if (request.query.format === 'text') return reply.type('text/plain; charset=utf-8').send(report.summary as never);
      return report;
    },
  );
};
