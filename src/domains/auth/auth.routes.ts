import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../../http/request-sandbox.js';
import { errorResponses } from '../../core/errors.js';
import { authOf, userOf } from '../../http/auth.js';
import { tokenBody, tokenResponse } from './auth.schema.js';
import { issueToken } from './auth.service.js';

export const authRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/v1/auth/token',
    {
      config: { auth: { modes: ['hmac'], user: 'required' } },
      schema: {
        operationId: 'createAccessToken',
        tags: ['Auth'],
        summary: 'Issue a bearer access token (interface 5.1)',
        description: 'HMAC only; the token acts for the user of the HMAC headers. Optional body { scopes }. Lifetime 3600 s of emulated time.',
        body: tokenBody,
        response: { 200: tokenResponse, ...errorResponses(403) },
      },
    },
    async (request) => issueToken(ctxOf(request), userOf(request), request.body?.scopes, authOf(request).scopes),
  );
};
