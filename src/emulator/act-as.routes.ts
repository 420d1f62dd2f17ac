import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../http/request-sandbox.js';
import { pathPrefixOf } from '../http/public-url.js';
import { errorResponses } from '../core/errors.js';
import { CONTROL_PLANE } from './emulator.auth.js';
import { actAsBody, actAsResponse } from './act-as.schema.js';
import { actAs } from './act-as.service.js';

export const actAsRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/_emulator/act-as',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorActAs',
        tags: ['Emulator'],
        summary: 'Call the public API as a user, signed server-side (the dashboard uses this)',
        description:
          'Picks a MULTI_USER key of the user\'s programme (else a SINGLE_USER key bound to the user), signs the request as a client ' +
          'would (HMAC headers; the payout variant on /v1/payout-origination/*) and runs it through the same validation, auth and ' +
          'journal as any client. Answers 200 with the inner status and body; 400 for a path outside /v1/, 404 for an unknown user.',
        body: actAsBody,
        response: { 200: actAsResponse, ...errorResponses(404, 409) },
      },
    },
    async (request) => actAs(app, ctxOf(request), request.body, pathPrefixOf(request)),
  );
};
