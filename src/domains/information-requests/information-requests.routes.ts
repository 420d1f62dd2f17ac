import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../../http/request-sandbox.js';
import { errorResponses } from '../../core/errors.js';
import { writeAfterWait } from '../../scheduler/scheduler.js';
import { userOf } from '../../http/auth.js';
import { listEnrollmentInformationRequests } from '../enrollment/enrollment.service.js';
import { inspectDocuments } from './documents.js';
import {
  informationRequestDetailSchema,
  informationRequestListSchema,
  informationRequestParams,
  writeEntriesBody,
} from './information-requests.schema.js';
import { getInformationRequestDetail, prepareEntryWrite, submitInformationRequest, writeEntries } from './information-requests.service.js';

// docs/decisions.md#status-codes: entry writes accept bodies up to 20 MiB (documents travel as Base64 in the JSON
// body).
export const ENTRY_WRITE_BODY_LIMIT = 20 * 1024 * 1024;

// Interface 4.7, 4.8 and the submit operation; docs/onboarding.md. Transactions that may write are IMMEDIATE: they
// read first, and deferred they could not take the write lock once another process on the same database file
// had committed (SQLITE_BUSY, a 500).
export const informationRequestsRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/v1/information-requests',
    {
      config: { auth: { modes: ['hmac', 'bearer'], scope: 'enrollment:read', user: 'required' } },
      schema: {
        operationId: 'listInformationRequests',
        tags: ['Information requests'],
        summary: 'List the caller\'s information requests (interface 4.7)',
        description: 'Returns { data } only (no paging envelope), newest first.',
        response: { 200: informationRequestListSchema, ...errorResponses(403) },
      },
    },
    async (request) => listEnrollmentInformationRequests(ctxOf(request), userOf(request)),
  );

  app.get(
    '/v1/information-requests/:informationRequestId',
    {
      config: { auth: { modes: ['hmac', 'bearer'], scope: 'enrollment:read', user: 'required' } },
      schema: {
        operationId: 'getInformationRequest',
        description: 'An information request of the caller (interface 2.9) with its requirements and the entries written so far.',
        tags: ['Information requests'],
        summary: 'Get an information request with its requirements and entries',
        params: informationRequestParams,
        response: { 200: informationRequestDetailSchema, ...errorResponses(403, 404) },
      },
    },
    async (request) => getInformationRequestDetail(ctxOf(request), userOf(request), request.params.informationRequestId),
  );

  app.post(
    '/v1/information-requests/:informationRequestId/entries',
    {
      bodyLimit: ENTRY_WRITE_BODY_LIMIT,
      config: { auth: { modes: ['hmac', 'bearer'], scope: 'enrollment:write', user: 'required' } },
      schema: {
        operationId: 'writeInformationRequestEntries',
        tags: ['Information requests'],
        summary: 'Write entries: all of them or none (interface 4.8)',
        description:
          'Body { entries: [{ key, value }] } (1-20 entries; null clears an entry). Documents are { fileName, contentType: "application/pdf", contentBase64 } of at most 10 MiB and 10 pages. Body limit 20 MiB. 409 INFORMATION_REQUEST_NOT_EDITABLE once the request is not DRAFT.',
        params: informationRequestParams,
        body: writeEntriesBody,
        response: { 200: informationRequestDetailSchema, ...errorResponses(403, 404, 409, 413) },
      },
    },
    async (request) => {
      const caller = userOf(request);
      const { informationRequestId } = request.params;
      // PDF parsing is asynchronous and SQLite transactions are not: documents are checked first, then
      // every entry is written in one synchronous transaction (which checks the request again).
      const documents = await inspectDocuments(prepareEntryWrite(ctxOf(request), caller, informationRequestId, request.body));
      // once no save, restore or reset of the sandbox is under way (docs/control-plane.md#a-write-after-a-wait): the
      // write checks the request again against the state it finds
      return writeAfterWait(ctxOf(request), 'its documents were read', () => writeEntries(ctxOf(request), caller, informationRequestId, request.body, documents));
    },
  );

  app.post(
    '/v1/information-requests/:informationRequestId/submit',
    {
      config: { auth: { modes: ['hmac', 'bearer'], scope: 'enrollment:write', user: 'required' } },
      schema: {
        operationId: 'submitInformationRequest',
        tags: ['Information requests'],
        summary: 'Submit a VALID information request for review',
        description:
          'No body. Not VALID: 400 with the failing requirements. A business name containing ALREADY REGISTERED: 400 InvalidValue on businessName (stays DRAFT). Otherwise PROCESSING_SUBMISSION, then PENDING_REVIEW, then COMPLETED after the review delay.',
        params: informationRequestParams,
        response: { 200: informationRequestDetailSchema, ...errorResponses(403, 404, 409) },
      },
    },
    async (request) => submitInformationRequest(ctxOf(request), userOf(request), request.params.informationRequestId),
  );
};
