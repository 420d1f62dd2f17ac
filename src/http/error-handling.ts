import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { InvalidTransitionError } from '../lib/state-machine.js';
import { MoneyFormatError } from '../lib/money.js';
import { methodsForPath } from './route-catalog.js';
import { ServiceError, errors } from '../core/errors.js';
import { invalidFromZodIssues, type Location } from './validation-errors.js';

// Everything thrown becomes the error body: the not-found (404/405) and error handlers, and the mapping of
// Fastify's own error codes (body too large, bad JSON, media type, router failures), zod failures and
// unknown errors to a ServiceError.

function sendError(reply: FastifyReply, error: ServiceError): void {
  if (error.retryAfterSeconds !== undefined) void reply.header('retry-after', String(error.retryAfterSeconds));
  void reply.status(error.statusCode).type('application/json; charset=utf-8').send(error.toBody());
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => answerNoRoute(app, request, reply));
  // A request no route serves is answered before its body is read, so neither its method (QUERY without a
  // Content-Type), its content type nor its body can turn the 404 or 405 into a 400, 413 or 415
  // (docs/decisions.md#status-codes). preParsing runs after every onRequest hook (the journal, the admin check).
  app.addHook('preParsing', (request, reply, payload, done) => {
    if (request.routeOptions.url !== undefined) return done(null, payload);
    answerNoRoute(app, request, reply);
  });

  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    let serviceError: ServiceError;
    try {
      serviceError = toServiceError(error, request);
    } catch (mappingError) {
      request.log.error({ err: mappingError }, 'error while mapping an error');
      serviceError = errors.internal();
    }
    sendError(reply, serviceError);
  });
}

/** docs/decisions.md#status-codes: a known path with the wrong method is a 405 with an Allow header, else a 404. */
function answerNoRoute(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): void {
  const path = request.url.split('?')[0]!;
  const allowed = methodsForPath(app, path);
  if (allowed.length > 0) {
    void reply.header('allow', allowed.join(', '));
    sendError(reply, new ServiceError(405, 'INVALID_REQUEST', `Method ${request.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`));
    return;
  }
  sendError(reply, noRoute(request.method, path));
}

/**
 * Fastify's `frameworkErrors` option: the router's own failures (a path that does not percent-decode, a path
 * parameter over maxParamLength) never reach setErrorHandler and would otherwise answer Fastify's bare
 * `{ error, code, message, statusCode }` body. They get the interface 7.1 body like every other failure.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  sendError(reply, toServiceError(error, request));
}

/** The 404 of a path no route serves (docs/decisions.md#error-body-everywhere). */
export function noRoute(method: string, path: string): ServiceError {
  return errors.notFound(`No route for ${method} ${path}; see /openapi.json for the routes this emulator serves`);
}

export function toServiceError(error: unknown, request?: FastifyRequest): ServiceError {
  if (error instanceof ServiceError) return error;
  if (error instanceof InvalidTransitionError) return errors.conflict(error.message);
  if (error instanceof MoneyFormatError) return errors.invalid(error.message);
  if (hasZodFastifySchemaValidationErrors(error)) {
    const location = ((error as { validationContext?: Location }).validationContext ?? 'body') as Location;
    const raw = request ? rawFor(request, location) : undefined;
    if (location === 'body' && (raw === undefined || raw === null)) {
      const message = 'A JSON request body is required';
      return errors.invalid(message, [{ type: 'MissingRequestBody', message }]);
    }
    // fastify-type-provider-zod flattens each zod issue into { keyword: code, instancePath, message, params }
    const issues = error.validation.map(
      (v) =>
        ({
          ...(v.params as object),
          code: v.keyword,
          message: v.message ?? 'is invalid',
          path: v.instancePath.split('/').filter(Boolean),
        }) as unknown as z.core.$ZodIssue,
    );
    return invalidFromZodIssues(issues, location, raw);
  }
  if (isResponseSerializationError(error)) {
    request?.log.error({ err: error }, 'response did not match its schema');
    return errors.internal('The emulator produced a response that does not match its own schema');
  }
  if (isDiskFull(error)) {
    request?.log.error({ err: error }, 'disk full');
    return errors.diskFull();
  }
  const fastifyError = error as FastifyError;
  const code = fastifyError?.code;
  switch (code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.invalid(
        code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
          ? 'The body is empty but Content-Type is application/json; send a JSON document or no Content-Type'
          : `The body is not valid JSON: ${fastifyError.message}`,
        [{ type: code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? 'MissingRequestBody' : 'InvalidFormat', fieldRef: 'body', message: 'Malformed JSON body' }],
      );
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ServiceError(
        413,
        'INVALID_REQUEST',
        `The request body is larger than this endpoint accepts (at most ${request?.routeOptions.bodyLimit ?? 'the configured limit of'} bytes)`,
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ServiceError(415, 'INVALID_REQUEST', `Unsupported Content-Type ${String(request?.headers['content-type'] ?? '')}; send application/json`);
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return errors.invalid('Content-Length does not match the body');
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return errors.invalid('The request URL is malformed');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ServiceError(414, 'INVALID_REQUEST', 'A path parameter is longer than this emulator accepts (at most 1024 characters; ids are at most 128)');
    default:
      break;
  }
  const status = typeof fastifyError?.statusCode === 'number' ? fastifyError.statusCode : 500;
  if (status >= 400 && status < 500) {
    return new ServiceError(status, status === 404 ? 'NOT_FOUND' : 'INVALID_REQUEST', fastifyError.message || 'Bad request');
  }
  request?.log.error({ err: error }, 'unhandled error');
  return errors.internal();
}

/**
 * SQLite's SQLITE_FULL (the database or its journal could not grow: a full disk, or `max_page_count`) and the file
 * system's ENOSPC (docs/errors.md#disk-full). A failed statement rolls back its transaction, so nothing is
 * half-written; reads need no new pages and go on.
 */
export function isDiskFull(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth += 1) {
    const code = (cause as { code?: unknown }).code;
    if (code === 'SQLITE_FULL' || code === 'ENOSPC') return true;
  }
  return false;
}

function rawFor(request: FastifyRequest, location: Location): unknown {
  switch (location) {
    case 'body':
      return request.body;
    case 'querystring':
      return request.query;
    case 'params':
      return request.params;
    case 'headers':
      return request.headers;
  }
}
