import type { FastifyInstance } from 'fastify';
import { errors, ServiceError } from '../core/errors.js';
import { jsonBoundMessage, jsonBoundPassed } from '../lib/json-bounds.js';

/**
 * The only body parsers: JSON (kept as `request.rawBody` for the HMAC), text/plain for the payout
 * endpoint, and a 415 for anything else that has a body.
 */
export function registerBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  // Fastify's JSON parser refuses `__proto__` and `constructor.prototype` keys; it is used only when the
  // body contains one of those words, so ordinary bodies are parsed once and keep JSON.parse's message.
  const guardedJsonParse = app.getDefaultJsonParser('error', 'error');
  const malformed = (detail: string) =>
    errors.invalid(`The body is not valid JSON: ${detail}`, [{ type: 'InvalidFormat', fieldRef: 'body', message: `Malformed JSON body: ${detail}` }]);

  // Keep the raw bytes: HMAC signatures cover the body byte for byte (docs/decisions.md#hmac-canonical-string). An
  // empty body with a JSON content type counts as no body, so `curl -H 'Content-Type: application/json' -X POST` works
  // on routes that take none.
  app.addContentTypeParser(['application/json', 'application/*+json'], { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    request.rawBody = body;
    if (body.length === 0) return done(null, undefined);
    const text = body.toString('utf8');
    // Measured before parsing, so nothing deeper or larger than the bounds reaches JSON.parse or a handler
    // (docs/robustness.md#json-bounds).
    const bound = jsonBoundPassed(text);
    if (bound) {
      const message = jsonBoundMessage('The body', bound);
      return done(errors.invalid(message, [{ type: 'InvalidFormat', fieldRef: 'body', message }]), undefined);
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      return done(malformed((error as Error).message), undefined);
    }
    // Every body schema takes an object: `null` is refused here, where it is still told apart from no body, which a
    // route with an optional body accepts (docs/decisions.md#null-body).
    if (value === null && request.routeOptions.schema?.body !== undefined) {
      const message = 'body must be a JSON object, not null';
      return done(errors.invalid(message, [{ type: 'InvalidFormat', fieldRef: 'body', message }]), undefined);
    }
    if (text.includes('__proto__') || text.includes('constructor')) {
      return guardedJsonParse(request, text, (error) => {
        if (error) return done(malformed('keys named __proto__ or constructor.prototype are not accepted'), undefined);
        done(null, value);
      });
    }
    done(null, value);
  });
  // The payout endpoint takes a Base64 text body (interface 4.12).
  // Elsewhere a non-empty text body is refused like any other non-JSON type (415).
  app.addContentTypeParser('text/plain', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    request.rawBody = body;
    if (request.routeOptions.config?.auth?.modes.includes('payout')) return done(null, body.toString('utf8'));
    if (body.length === 0) return done(null, undefined);
    done(new ServiceError(415, 'INVALID_REQUEST', 'Unsupported Content-Type "text/plain"; send application/json (text/plain is for the payout endpoint)'), undefined);
  });
  // Any other type: fine without a body (curl -d '' sends a form type), otherwise 415 (docs/decisions.md#status-codes).
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    request.rawBody = body;
    if (body.length === 0) return done(null, undefined);
    const type = String(request.headers['content-type'] ?? '').split(';')[0]!.trim();
    const what = type ? `Unsupported Content-Type "${type}"` : 'A body was sent without a Content-Type';
    done(new ServiceError(415, 'INVALID_REQUEST', `${what}; send application/json (text/plain on the payout endpoint)`), undefined);
  });
}
