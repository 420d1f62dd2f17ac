import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../http/request-sandbox.js';
import { errorResponses } from '../core/errors.js';
import { accountParams } from '../domains/accounts/accounts.schema.js';
import { CONTROL_PLANE } from './emulator.auth.js';
import { providerReadyBody, providerReadyResponse } from './accounts.schema.js';
import { setProviderReady } from './accounts.service.js';

// The account part of the control plane (docs/control-plane.md#accounts).
export const emulatorAccountsRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/_emulator/accounts/:accountId/provider-ready',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorSetProviderReady',
        tags: ['Emulator'],
        summary: "Set whether an account's deposit-instruction provider is ready",
        description: 'Body { ready: true | false }. Not ready: POST /v1/accounts/{accountId}/deposit-instructions answers 409 (interface 3.1). Idempotent.',
        params: accountParams,
        body: providerReadyBody,
        response: { 200: providerReadyResponse, ...errorResponses(404) },
      },
    },
    async (request) => setProviderReady(ctxOf(request), request.params.accountId, request.body.ready),
  );
};
