import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../http/request-sandbox.js';
import { z } from 'zod';
import { errorResponses } from '../core/errors.js';
import { CONTROL_PLANE } from '../emulator/emulator.auth.js';
import { createFaultRuleBody, faultRuleListSchema, faultRuleParams, faultRuleSchema } from './fault-rules.schema.js';
import { addFaultRule, clearFaultRules, deleteFaultRule, getFaultRule, listFaultRules } from './fault-rules.service.js';

// Fault rules on API requests (docs/faults.md#fault-rules), per sandbox, under the admin policy.

const TAGS = ['Emulator: faults'];

export const faultRulesRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/_emulator/faults',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorAddFaultRule',
        tags: TAGS,
        summary: 'Add a fault rule',
        description:
          'Matching requests outside /_emulator get the effect: added latency, a 429/500/502/503/504 with the error body, a closed ' +
          'connection before any processing, or an ambiguous failure (processed and committed, then a 5xx or a closed connection). ' +
          'On every match (default), the next `times` matches, or with a seeded `probability`. 409 when the sandbox already holds 100 rules.',
        body: createFaultRuleBody,
        response: { 201: faultRuleSchema, ...errorResponses(409) },
      },
    },
    async (request, reply) => reply.status(201).send(addFaultRule(ctxOf(request), request.body)),
  );

  app.get(
    '/_emulator/faults',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorListFaultRules',
        tags: TAGS,
        summary: 'The fault rules of this sandbox, in the order they act',
        description: 'Spent rules (times used up) stay listed with active false until deleted or cleared.',
        response: { 200: faultRuleListSchema, ...errorResponses() },
      },
    },
    async (request) => ({ data: listFaultRules(ctxOf(request)) }),
  );

  app.delete(
    '/_emulator/faults',
    {
      config: CONTROL_PLANE,
      schema: { operationId: 'emulatorClearFaultRules', tags: TAGS, summary: 'Remove every fault rule', description: 'Requests are processed as usual from now on.', response: { 204: z.null(), ...errorResponses() } },
    },
    async (request, reply) => {
      clearFaultRules(ctxOf(request));
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/_emulator/faults/:id',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorGetFaultRule',
        tags: TAGS,
        summary: 'One fault rule with its counters',
        description: 'How many requests it matched and fired on, and what is left of `times`. 404 for an unknown id.',
        params: faultRuleParams,
        response: { 200: faultRuleSchema, ...errorResponses(404) },
      },
    },
    async (request) => getFaultRule(ctxOf(request), request.params.id),
  );

  app.delete(
    '/_emulator/faults/:id',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorDeleteFaultRule',
        tags: TAGS,
        summary: 'Remove one fault rule',
        description: '404 for an unknown id.',
        params: faultRuleParams,
        response: { 204: z.null(), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      deleteFaultRule(ctxOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
};
