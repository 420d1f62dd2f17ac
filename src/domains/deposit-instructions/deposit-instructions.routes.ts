import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../../http/request-sandbox.js';
import { errorResponses } from '../../core/errors.js';
import { userOf } from '../../http/auth.js';
import { createDepositInstructionBody, depositInstructionAcceptedSchema, depositInstructionParams } from './deposit-instructions.schema.js';
import { requestDepositInstruction } from './deposit-instructions.service.js';

export const depositInstructionsRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/v1/accounts/:accountId/deposit-instructions',
    {
      config: { auth: { modes: ['hmac', 'bearer'], scope: 'accounts:write', user: 'required' } },
      schema: {
        operationId: 'createDepositInstruction',
        tags: ['Accounts'],
        summary: 'Add a deposit instruction (interface 4.1)',
        description:
          'Accepted as PENDING (202); the instruction appears ACTIVE in GET /v1/accounts/{accountId} after the provisioning delay ' +
          '(timeline.provisioningMs of emulated time). A retry with the same idempotencyKey returns the first request\'s name. ' +
          'Fiat accounts get their currency\'s primary rail (USD: ACH, EUR: SEPA); stablecoin accounts an address on the first ' +
          'network (ETHEREUM, BASE, POLYGON) they have none on. 409 when the account has no provider ready.',
        params: depositInstructionParams,
        body: createDepositInstructionBody,
        response: { 202: depositInstructionAcceptedSchema, ...errorResponses(403, 404, 409) },
      },
    },
    async (request, reply) => {
      const result = requestDepositInstruction(ctxOf(request), userOf(request), request.params.accountId, request.body);
      return reply.status(202).send(result);
    },
  );
};
