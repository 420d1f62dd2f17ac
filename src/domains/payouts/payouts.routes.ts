import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../../http/request-sandbox.js';
import { errorResponses, errors } from '../../core/errors.js';
import { userOf } from '../../http/auth.js';
import { payoutBody, payoutHeaders, payoutParams, payoutSubmissionResponse } from './payouts.schema.js';
import { submitPayout } from './payouts.service.js';

/** interface 4.12: the body is Base64 text; anything but text/plain is refused (415, README "Payouts"). */
function assertTextPlain(contentType: string | undefined): void {
  const mediaType = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (mediaType !== 'text/plain') {
    throw errors.unsupportedMediaType(
      `Content-Type must be text/plain: the body is the payout message as one Base64 string${contentType ? ` (got ${contentType})` : ''}`,
    );
  }
}

export const payoutsRoutes: FastifyPluginAsyncZod = async (app) => {
  // This plugin's context only: every body is read as raw text, so a wrong Content-Type reaches the 415
  // above instead of a JSON parse error, and the raw bytes stay available to the signature check.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    request.rawBody = body;
    done(null, body.length === 0 ? undefined : body.toString('utf8'));
  });

  app.post(
    '/v1/payout-origination/:format',
    {
      // docs/authentication.md#entitlements: a payout moves money, so the key needs transactions:write
      config: { auth: { modes: ['payout'], scope: 'transactions:write', user: 'required' } },
      schema: {
        operationId: 'submitPayout',
        tags: ['Payouts'],
        summary: 'Submit a payout: Base64 of a json payload or a pacs.008 message (interface 4.12)',
        description:
          'HMAC payout variant only (X-Service-Signature: sha256=<hex>, RFC 3339 X-Service-Timestamp; bearer tokens get 401). ' +
          'Content-Type: text/plain (else 415), Idempotency-Key 8-128 characters. BUSINESS users only (PERSON: 403 ' +
          'INVALID_USER_TYPE). 202 once accepted; the WITHDRAWAL then runs the rail timeline, and a payout without enough ' +
          'available funds is recorded FAILED with statusCode INSUFFICIENT_FUNDS.',
        consumes: ['text/plain'],
        params: payoutParams,
        headers: payoutHeaders,
        body: payoutBody,
        response: { 202: payoutSubmissionResponse, ...errorResponses(403, 404, 409, 415) },
      },
    },
    async (request, reply) => {
      assertTextPlain(request.headers['content-type']);
      const result = submitPayout(ctxOf(request), userOf(request), {
        format: request.params.format,
        idempotencyKey: request.headers['idempotency-key'],
        body: request.body,
      });
      return reply.status(202).send(result);
    },
  );
};
