import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../../http/request-sandbox.js';
import { errorResponses, errors } from '../../core/errors.js';
import { envelopeSchema } from '../../http/pagination.js';
import { authOf } from '../../http/auth.js';
import { createUserBody, listUsersQuery, userSchema } from './users.schema.js';
import { createUser, listUsers } from './users.service.js';

export const usersRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/v1/users',
    {
      config: { auth: { modes: ['hmac'], user: 'programme' } },
      schema: {
        operationId: 'listUsers',
        tags: ['Users'],
        summary: 'List users of the programme (interface 4.11)',
        description: 'HMAC only. Users whose enrollment has started, newest first. pageSize 1-25, default 25.',
        querystring: listUsersQuery,
        response: { 200: envelopeSchema(userSchema), ...errorResponses(403) },
      },
    },
    async (request) => listUsers(ctxOf(request), authOf(request).programmeId, request.query),
  );

  app.post(
    '/v1/auth/users',
    {
      config: { auth: { modes: ['hmac'], user: 'programme' } },
      schema: {
        operationId: 'createUser',
        tags: ['Auth'],
        summary: 'Create a user of the programme',
        description:
          'HMAC with a MULTI_USER key. 201 when created; 200 with the existing user for a known externalId sent with the same type, name (and email); 409 when any of them differs.',
        body: createUserBody,
        response: { 200: userSchema, 201: userSchema, ...errorResponses(403, 409) },
      },
    },
    async (request, reply) => {
      const auth = authOf(request);
      if (auth.integrationType !== 'MULTI_USER') {
        throw errors.forbidden('Creating users is a programme-level write: use a MULTI_USER key', 'SINGLE_USER_KEY_NOT_ALLOWED');
      }
      const result = createUser(ctxOf(request), auth.programmeId, request.body);
      return reply.status(result.created ? 201 : 200).send(result.user);
    },
  );
};
