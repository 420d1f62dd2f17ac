import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../../http/request-sandbox.js';
import { errorResponses } from '../../core/errors.js';
import { userOf } from '../../http/auth.js';
import { pathPrefixOf } from '../../http/public-url.js';
import { simulateDepositBody, simulateDepositParams, simulateDepositResponse } from './sandbox.schema.js';
import { simulateDeposit } from './sandbox.service.js';

export const sandboxRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/v1/sandbox/accounts/:accountId/deposits',
    {
      config: { auth: { modes: ['hmac', 'bearer'], scope: 'transactions:write', user: 'required' } },
      schema: {
        operationId: 'simulateDeposit',
        tags: ['Sandbox'],
        summary: 'Simulate a deposit (interface 4.13)',
        description:
          'Records an INCOMING DEPOSIT through one of the account\'s deposit instructions; it settles PENDING -> COMPLETED after ' +
          'timeline.depositCompletionMs of emulated time. On a stablecoin account the deposit lands in the network sub-balance and an ' +
          'INTERNAL_SWEEP transfer moves it to the account once it completes. 404 when depositInstructionId is not an instruction of the account.',
        params: simulateDepositParams,
        body: simulateDepositBody,
        response: { 202: simulateDepositResponse, ...errorResponses(403, 404) },
      },
    },
    async (request, reply) => {
      const { transactionId, message } = simulateDeposit(ctxOf(request), userOf(request), request.params.accountId, request.body);
      // docs/money-in.md#simulated-deposits: the body stays the interface's message; Location names the transaction,
      // under the session's prefix inside a session
      reply.header('location', `${pathPrefixOf(request)}/v1/transactions/${transactionId}`);
      return reply.status(202).send({ message });
    },
  );
};
