import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../http/request-sandbox.js';
import { CONTROL_PLANE } from './emulator.auth.js';
import { errorResponses } from '../core/errors.js';
import { decisionParams, enrollmentSchema, forcedDecisionBody, revokeBody, revokeParams } from '../domains/enrollment/enrollment.schema.js';
import { forceReviewDecision, revokeEnrollment } from '../domains/enrollment/enrollment.service.js';
import { informationRequestDetailSchema } from '../domains/information-requests/information-requests.schema.js';
import { cancelInformationRequest } from '../domains/information-requests/information-requests.service.js';

// The enrollment part of the control plane (docs/control-plane.md#information-requests; the admin policy, CONTROL_PLANE); ids are global,
// not scoped to a programme.

export const emulatorEnrollmentRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/_emulator/information-requests/:informationRequestId/decision',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorDecideInformationRequest',
        tags: ['Emulator'],
        summary: 'Force the review decision of an information request',
        description:
          'Body { decision: "APPROVED" | "REJECTED" }. Only while PROCESSING_SUBMISSION or PENDING_REVIEW (otherwise 409). Completes the request and activates or rejects the enrollment at once.',
        params: decisionParams,
        body: forcedDecisionBody,
        response: { 200: informationRequestDetailSchema, ...errorResponses(404, 409) },
      },
    },
    async (request) => forceReviewDecision(ctxOf(request), request.params.informationRequestId, request.body.decision),
  );

  app.post(
    '/_emulator/enrollment/:userId/revoke',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorRevokeEnrollment',
        tags: ['Emulator'],
        summary: 'Revoke an ACTIVE enrollment (reason REVOKED)',
        description: 'Optional body { reasonDetail }. ACTIVE -> INACTIVE with reason REVOKED; any other state is a 409. Revocation is final.',
        params: revokeParams,
        body: revokeBody,
        response: { 200: enrollmentSchema, ...errorResponses(404, 409) },
      },
    },
    async (request) => revokeEnrollment(ctxOf(request), request.params.userId, request.body?.reasonDetail),
  );

  app.post(
    '/_emulator/information-requests/:informationRequestId/cancel',
    {
      config: CONTROL_PLANE,
      schema: {
        operationId: 'emulatorCancelInformationRequest',
        tags: ['Emulator'],
        summary: 'Cancel an information request that is not decided yet (CANCELED)',
        description:
          'No body. DRAFT, PROCESSING_SUBMISSION or PENDING_REVIEW -> CANCELED with decision null; COMPLETED or CANCELED is a 409. The enrollment summary shows CANCELED; its status is unchanged.',
        params: decisionParams,
        response: { 200: informationRequestDetailSchema, ...errorResponses(404, 409) },
      },
    },
    async (request) => cancelInformationRequest(ctxOf(request), request.params.informationRequestId),
  );
};
