import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { InvalidTransitionError } from '../lib/state-machine.js';
import { MoneyFormatError } from '../lib/money.js';
import { methodsForPath } from './route-catalog.js';

// The error model of interface 7 and docs/errors.md: one error type, one handler, one body shape
// `{ message, errorCode?, validationErrors? }` on every non-2xx answer.

export const ERROR_CODES = [
  'UNAUTHORIZED',
  'FORBIDDEN',
  'NOT_FOUND',
  'INVALID_REQUEST',
  'INTERNAL_ERROR',
  'INFORMATION_REQUEST_NOT_EDITABLE',
  'INVALID_USER_TYPE',
  'SINGLE_USER_KEY_NOT_ALLOWED',
  'USER_ID_HEADER_REQUIRED',
  'USER_ID_HEADER_NOT_ALLOWED',
  'PDF_PAGE_LIMIT_EXCEEDED',
  'PDF_PASSWORD_PROTECTED',
  'PDF_UNREADABLE',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

// interface 7.2
export const VALIDATION_ERROR_TYPES = [
  'InvalidFormat',
  'InvalidValue',
  'MissingPathParameter',
  'MissingQueryParameter',
  'MissingRequestBody',
  'MissingValue',
  'NotFound',
  'UnexpectedVerificationError',
  'Unknown',
  'UnprocessableValue',
] as const;
export type ValidationErrorType = (typeof VALIDATION_ERROR_TYPES)[number];

export interface ValidationError {
  type: ValidationErrorType;
  fieldRef?: string;
  message: string;
}

export const validationErrorSchema = z
  .object({
    type: z.enum(VALIDATION_ERROR_TYPES),
    fieldRef: z.string().optional(),
    message: z.string(),
  })
  .meta({ id: 'ValidationError' });

export const errorBodySchema = z
  .object({
    message: z.string(),
    errorCode: z.enum(ERROR_CODES).optional(),
    validationErrors: z.array(validationErrorSchema).optional(),
  })
  .meta({ id: 'ServiceError', description: 'Error body of interface 7.1' });

export type ErrorBody = z.infer<typeof errorBodySchema>;

export class ServiceError extends Error {
  constructor(
    readonly statusCode: number,
    readonly errorCode: ErrorCode | undefined,
    message: string,
    readonly validationErrors?: ValidationError[],
  ) {
    super(message);
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { message: this.message };
    if (this.errorCode) body.errorCode = this.errorCode;
    if (this.validationErrors) body.validationErrors = this.validationErrors;
    return body;
  }
}

// Named constructors keep call sites short and the status/code pairs of docs/errors.md in one place.
export const errors = {
  invalid(message: string, validationErrors?: ValidationError[]) {
    return new ServiceError(400, 'INVALID_REQUEST', message, validationErrors);
  },
  field(type: ValidationErrorType, fieldRef: string, message: string) {
    return new ServiceError(400, 'INVALID_REQUEST', message, [{ type, fieldRef, message }]);
  },
  unauthorized(message: string) {
    return new ServiceError(401, 'UNAUTHORIZED', message);
  },
  forbidden(message: string, code: ErrorCode = 'FORBIDDEN') {
    return new ServiceError(403, code, message);
  },
  notFound(message: string) {
    return new ServiceError(404, 'NOT_FOUND', message);
  },
  conflict(message: string, code: ErrorCode = 'INVALID_REQUEST') {
    return new ServiceError(409, code, message);
  },
  internal(message = 'Internal error') {
    return new ServiceError(500, 'INTERNAL_ERROR', message);
  },
};

/** Standard error responses for route schemas, so every route documents its error shape. */
export function errorResponses(...statuses: number[]): Record<number, typeof errorBodySchema> {
  const out: Record<number, typeof errorBodySchema> = {};
  for (const status of [400, 401, ...statuses]) out[status] = errorBodySchema;
  return out;
}

type Location = 'body' | 'querystring' | 'params' | 'headers';

function locationLabel(location: Location): string {
  return { body: 'body', querystring: 'query parameter', params: 'path parameter', headers: 'header' }[location];
}

/** Turn zod issues (from fastify's validator or a service-level parse) into interface 7.2 items. */
export function zodIssuesToValidationErrors(issues: readonly z.core.$ZodIssue[], location: Location, rawInput?: unknown): ValidationError[] {
  return issues.flatMap((issue): ValidationError[] => {
    const path = issue.path.map(String);
    // A strict object names the unexpected keys on the parent; report each key as its own field.
    if (issue.code === 'unrecognized_keys') {
      const keys = (issue as { keys?: string[] }).keys ?? [];
      return keys.map((key) => {
        const fieldRef = [...path, key].join('.');
        return { type: 'InvalidValue', fieldRef, message: `${fieldRef} is not an accepted ${location === 'querystring' ? 'query parameter' : 'field'}` };
      });
    }
    const fieldRef = path.join('.');
    // An empty path segment (`/v1/accounts//statement`) reaches the route with the parameter as "": the
    // parameter was not supplied (interface 7.2 MissingPathParameter; docs/errors.md#missing-path-parameter).
    if (location === 'params' && path.length > 0 && valueAt(rawInput, issue.path) === '') {
      return [{ type: 'MissingPathParameter', fieldRef, message: `${fieldRef} is required: the path has an empty segment where ${fieldRef} goes` }];
    }
    // Absent value: zod reports invalid_type for most schemas and invalid_value for enums and literals.
    const missing = (issue.code === 'invalid_type' || issue.code === 'invalid_value') && path.length > 0 && valueAt(rawInput, issue.path) === undefined;
    let type: ValidationErrorType;
    if (missing) {
      type =
        location === 'querystring'
          ? 'MissingQueryParameter'
          : location === 'params'
            ? 'MissingPathParameter'
            : 'MissingValue';
    } else if (issue.code === 'invalid_format' || issue.code === 'invalid_type') {
      type = 'InvalidFormat';
    } else {
      type = 'InvalidValue';
    }
    const message = missing
      ? `${fieldRef} is required${issue.code === 'invalid_value' ? ` (${issue.message.replace(/^Invalid option: /, '')})` : ''}`
      : issue.message.startsWith(fieldRef) && fieldRef
        ? issue.message
        : `${fieldRef || locationLabel(location)}: ${issue.message}`;
    return [fieldRef ? { type, fieldRef, message } : { type: 'Unknown', message }];
  });
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = input;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

/** Parse with zod inside a service and throw the interface's 400 on failure. */
export function parseOrThrow<T extends z.ZodType>(schema: T, input: unknown, location: Location = 'body'): z.infer<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const validationErrors = zodIssuesToValidationErrors(result.error.issues, location, input);
  throw errors.invalid(summarize(validationErrors), validationErrors);
}

function summarize(validationErrors: ValidationError[]): string {
  const first = validationErrors[0];
  const rest = validationErrors.length > 1 ? ` (and ${validationErrors.length - 1} more)` : '';
  return first ? `Invalid request: ${first.message}${rest}` : 'Invalid request';
}

function sendError(reply: FastifyReply, error: ServiceError): void {
  void reply.status(error.statusCode).type('application/json; charset=utf-8').send(error.toBody());
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0]!;
    // docs/decisions.md#status-codes: a known path with the wrong method is a 405 with an Allow header, not a 404.
    const allowed = methodsForPath(app, path);
    if (allowed.length > 0) {
      void reply.header('allow', allowed.join(', '));
      sendError(
        reply,
        new ServiceError(405, 'INVALID_REQUEST', `Method ${request.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`),
      );
      return;
    }
    sendError(reply, noRoute(request.method, path));
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
    const validationErrors = zodIssuesToValidationErrors(issues, location, raw);
    return errors.invalid(summarize(validationErrors), validationErrors);
  }
  if (isResponseSerializationError(error)) {
    request?.log.error({ err: error }, 'response did not match its schema');
    return errors.internal('The emulator produced a response that does not match its own schema');
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
