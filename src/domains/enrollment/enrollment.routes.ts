import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../../http/request-sandbox.js';
import { errorResponses } from '../../core/errors.js';
import { userOf } from '../../http/auth.js';
import { enrollmentSchema } from './enrollment.schema.js';
import { activateEnrollment, getEnrollment } from './enrollment.service.js';

// Interface 4.9 and 4.10. Both may create the enrollment, so both run in one transaction, IMMEDIATE: it reads
// before it writes, and deferred it could not take the write lock once another process on the same database
// file had committed (SQLITE_BUSY, a 500; test/db/concurrency.test.ts).
export const enrollmentRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/v1/enrollment',
    {
      config: { auth: { modes: ['hmac', 'bearer'], scope: 'enrollment:read', user: 'required' } },
      schema: {
        operationId: 'getEnrollment',
        tags: ['Enrollment'],
        summary: 'Get the enrollment, creating it on the first call (interface 4.10)',
        description:
          'The first call creates an INACTIVE enrollment with a DRAFT information request (subjectType ENROLLMENT) and makes the user appear in GET /v1/users. Fixture users read ACTIVE.',
        response: { 200: enrollmentSchema, ...errorResponses(403) },
      },
    },
    async (request) => getEnrollment(ctxOf(request), userOf(request)),
  );

  app.post(
    '/v1/enrollment/activate',
    {
      config: { auth: { modes: ['hmac', 'bearer'], scope: 'enrollment:write', user: 'required' } },
      schema: {
        operationId: 'activateEnrollment',
        tags: ['Enrollment'],
        summary: 'Activate: create or resume the enrollment (interface 4.9)',
        description:
          'No body. ACTIVE once the information request is approved; otherwise the INACTIVE enrollment with its informationRequest summary (write its entries, then submit it).',
        response: { 200: enrollmentSchema, ...errorResponses(403) },
      },
    },
    async (request) => activateEnrollment(ctxOf(request), userOf(request)),
  );
};
