import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../http/request-sandbox.js';
import { errorResponses } from '../core/errors.js';
import { CONTROL_PLANE } from './emulator.auth.js';
import { jobListSchema, listJobsQuery } from './jobs.schema.js';
import { listJobs } from './jobs.service.js';

// The control plane's view of the scheduler (docs/control-plane.md#jobs): every scheduled job, so a failed
// one is visible with its error and the transaction it failed (docs/decisions.md#failed-jobs).
export const emulatorJobsRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/_emulator/jobs',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorListJobs',
        tags: ['Emulator'],
        summary: 'Scheduled jobs (rail steps, reviews, retries, ...), newest first; ?status=FAILED shows the failed ones',
        description:
          'Filters: status (PENDING, DONE, FAILED, CANCELED), type, transactionId. A FAILED job carries lastError; a failed rail step ' +
          'has moved its transaction to FAILED with statusCode PROCESSING_ERROR.',
        querystring: listJobsQuery,
        response: { 200: jobListSchema, ...errorResponses() },
      },
    },
    async (request) => listJobs(ctxOf(request), request.query),
  );
};
