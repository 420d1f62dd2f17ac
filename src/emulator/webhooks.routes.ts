import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../http/request-sandbox.js';
import { CONTROL_PLANE } from './emulator.auth.js';
import { errorResponses, errors } from '../core/errors.js';
import {
  deliveryListSchema,
  deliveryParams,
  endpointQuery,
  listDeliveriesQuery,
  setEndpointBody,
  webhookDeliverySchema,
  webhookEndpointsSchema,
} from '../domains/webhooks/webhooks.schema.js';
import { assertReplayable, getDeliveryView, listDeliveries } from '../domains/webhooks/webhooks.views.js';
import { listEndpoints, setWebhookEndpoint } from '../domains/webhooks/webhooks.endpoints.js';
import { replayDelivery } from '../domains/webhooks/webhooks.sender.js';
import { triggerEventBody, triggerWebhookEvent } from '../domains/webhooks/webhooks.trigger.js';

// Webhook control plane (docs/webhooks.md): the delivery log, replay, and the endpoint, under the admin
// policy (CONTROL_PLANE).

export const webhooksRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/_emulator/webhooks/deliveries',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorListWebhookDeliveries',
        tags: ['Emulator: webhooks'],
        summary: 'Webhook delivery log, each delivery with its attempts',
        description:
          'One delivery per event, newest first by default. Filters: status, eventType, transactionId, programId. ' +
          'Each attempt carries its emulated time, latency, request headers and body, and the response status or error.',
        querystring: listDeliveriesQuery,
        response: { 200: deliveryListSchema, ...errorResponses() },
      },
    },
    async (request) => listDeliveries(ctxOf(request), request.query),
  );

  app.get(
    '/_emulator/webhooks/deliveries/:id',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorGetWebhookDelivery',
        description: 'One webhook delivery with every attempt made (status, timing, error), as in the delivery log.',
        tags: ['Emulator: webhooks'],
        summary: 'One webhook delivery with its attempts',
        params: deliveryParams,
        response: { 200: webhookDeliverySchema, ...errorResponses(404) },
      },
    },
    async (request) => getDeliveryView(ctxOf(request), request.params.id),
  );

  app.post(
    '/_emulator/webhooks/deliveries/:id/replay',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorReplayWebhookDelivery',
        tags: ['Emulator: webhooks'],
        summary: 'Send a delivery again now, signed afresh; answers once the attempt has settled',
        description:
          'Any status may be replayed, with the same eventId and body. Success marks the delivery DELIVERED; a failed ' +
          'replay leaves its status and retry schedule unchanged. 409 when no webhook URL is configured or an attempt of ' +
          'this delivery is on the wire.',
        params: deliveryParams,
        response: { 200: webhookDeliverySchema, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const delivery = assertReplayable(ctxOf(request), request.params.id);
      const outcome = await replayDelivery(ctxOf(request), delivery.id);
      if (outcome === 'BUSY') throw errors.conflict(`An attempt of delivery ${delivery.id} is on the wire; replay it once that has settled`);
      return getDeliveryView(ctxOf(request), delivery.id);
    },
  );

  app.get(
    '/_emulator/webhooks/endpoint',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorGetWebhookEndpoints',
        description: 'The webhook URL configured for each programme (null when none) and the webhook API key sent with its deliveries.',
        tags: ['Emulator: webhooks'],
        summary: 'Webhook URL of each programme',
        querystring: endpointQuery,
        response: { 200: webhookEndpointsSchema, ...errorResponses(404) },
      },
    },
    async (request) => listEndpoints(ctxOf(request), request.query.programId),
  );

  app.put(
    '/_emulator/webhooks/endpoint',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorSetWebhookEndpoint',
        tags: ['Emulator: webhooks'],
        summary: 'Set or clear the webhook URL of one programme (programId) or of every programme',
        description:
          'url null or absent clears it: events written meanwhile are recorded SKIPPED. Deliveries still owed go to the ' +
          'new URL at their next attempt. /_emulator/reset restores the fixture / --webhook-url value.',
        body: setEndpointBody,
        response: { 200: webhookEndpointsSchema, ...errorResponses(404) },
      },
    },
    async (request) => setWebhookEndpoint(ctxOf(request), request.body),
  );

  app.post(
    '/_emulator/webhooks/trigger',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorTriggerWebhook',
        tags: ['Emulator: webhooks'],
        summary: "Send a transaction's current state as a webhook event now (like Stripe's trigger)",
        description:
          'Writes a new event (new eventId) with the transaction as it is now and delivers it like any other event. ' +
          'Answers 202 with the new delivery; watch it in GET /_emulator/webhooks/deliveries.',
        body: triggerEventBody,
        response: { 202: webhookDeliverySchema, ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      const eventId = triggerWebhookEvent(ctxOf(request), request.body);
      return reply.status(202).send(getDeliveryView(ctxOf(request), eventId));
    },
  );
};
