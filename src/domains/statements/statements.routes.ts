import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../../http/request-sandbox.js';
import { z } from 'zod';
import { errorBodySchema, errorResponses } from '../../core/errors.js';
import { userOf } from '../../http/auth.js';
import {
  statementFileParams,
  statementFileQuery,
  statementLinkSchema,
  statementParams,
  statementQuery,
  statementSchema,
} from './statements.schema.js';
import { openStatementFile, requestStatement } from './statements.service.js';
import { publicBaseUrl } from '../../http/public-url.js';

// interface 4.3 and docs/statements.md: the statement, and the credential-free download behind its signed link.

export const statementsRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/v1/accounts/:accountId/statement',
    {
      config: { auth: { modes: ['hmac', 'bearer'], scope: 'statements:read', user: 'required' } },
      schema: {
        operationId: 'getAccountStatement',
        tags: ['Statements'],
        summary: 'Get an account statement as JSON, or a link to a CSV or PDF file (interface 4.3)',
        description:
          'startDate and endDate (YYYY-MM-DD, UTC, both inclusive) are required: startDate not before 2026-01-01, endDate not ' +
          'before startDate nor after today (emulated clock), at most 366 days. format json (default), csv or pdf, ' +
          'case-insensitive. csv and pdf answer { url, expiresAt }: a signed link valid 15 minutes of emulated time. ' +
          'A PDF over 500 pages gives 400 PDF_PAGE_LIMIT_EXCEEDED.',
        params: statementParams,
        querystring: statementQuery,
        response: { 200: z.union([statementSchema, statementLinkSchema]), ...errorResponses(403, 404) },
      },
    },
    async (request) => requestStatement(ctxOf(request), userOf(request), request.params.accountId, request.query, publicBaseUrl(ctxOf(request), request)),
  );

  app.get(
    '/v1/statement-files/:fileId',
    {
      config: { auth: { modes: ['none'], user: 'programme' } },
      schema: {
        operationId: 'downloadStatementFile',
        tags: ['Statements'],
        summary: 'Download a rendered statement file through its signed link',
        description:
          'No credentials: the expires and signature query parameters are the credential. A missing, altered or expired ' +
          'link gives 403; a valid link to a file no longer stored (after a reset) gives 404.',
        // the success answer is the file itself (errors stay JSON: http/openapi.ts)
        produces: ['text/csv', 'application/pdf'],
        params: statementFileParams,
        querystring: statementFileQuery,
        response: {
          200: z.unknown().describe('The file bytes: text/csv; charset=utf-8 or application/pdf, sent as an attachment'),
          403: errorBodySchema,
          404: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const file = openStatementFile(ctxOf(request), request.params.fileId, request.query.expires, request.query.signature);
      return reply
        .header('content-type', file.content_type)
        .header('content-disposition', `attachment; filename="${file.file_name}"`)
        .header('cache-control', 'private, no-store')
        .header('x-content-type-options', 'nosniff')
        .send(file.content);
    },
  );
};
