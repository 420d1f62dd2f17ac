import { z } from 'zod';

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

/** Codes only the emulator's control plane answers, never a /v1 path (docs/errors.md#codes-of-the-control-plane). */
export const EMULATOR_ERROR_CODES = ['TOO_MANY_REQUESTS'] as const;
export type ErrorCode = (typeof ERROR_CODES)[number] | (typeof EMULATOR_ERROR_CODES)[number];

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
    // Open: the known codes are listed, and clients must tolerate new ones (docs/openapi.md#error-codes).
    errorCode: z
      .union([z.enum(ERROR_CODES), z.string()])
      .optional()
      .describe('One of the listed codes, or a code added later (clients must accept any string)'),
    validationErrors: z.array(validationErrorSchema).optional(),
  })
  .meta({ id: 'ServiceError', description: 'Error body of interface 7.1' });

export type ErrorBody = z.infer<typeof errorBodySchema>;

export class ServiceError extends Error {
  readonly errorCode: ErrorCode | undefined;
  /** Seconds for the Retry-After header the error handler sends with this answer (docs/errors.md#retry-after). */
  retryAfterSeconds: number | undefined;

  constructor(
    readonly statusCode: number,
    errorCode: ErrorCode | undefined,
    message: string,
    readonly validationErrors?: ValidationError[],
  ) {
    super(message);
    // interface 7.1: errorCode is absent when validationErrors fully describe the failure. A 400 with at
    // least one item is such a failure; the generic INVALID_REQUEST stays only on a 400 no item describes
    // (and specific codes such as PDF_UNREADABLE are kept). docs/decisions.md#validation-error-code
    this.errorCode = statusCode === 400 && errorCode === 'INVALID_REQUEST' && validationErrors !== undefined && validationErrors.length > 0 ? undefined : errorCode;
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
  /** A 400 with a code of its own (PDF_UNREADABLE, PDF_PAGE_LIMIT_EXCEEDED, ...), kept next to any items. */
  rejected(code: ErrorCode, message: string, validationErrors?: ValidationError[]) {
    return new ServiceError(400, code, message, validationErrors);
  },
  /** A 400 described by one validationErrors item (so it carries no errorCode, interface 7.1). */
  field(type: ValidationErrorType, fieldRef: string, message: string) {
    return new ServiceError(400, undefined, message, [{ type, fieldRef, message }]);
  },
  unauthorized(message: string) {
    return new ServiceError(401, 'UNAUTHORIZED', message);
  },
  forbidden(message: string, code: ErrorCode = 'FORBIDDEN', validationErrors?: ValidationError[]) {
    return new ServiceError(403, code, message, validationErrors);
  },
  /** `validationErrors` name the field whose id was not found, when the id came from a body. */
  notFound(message: string, validationErrors?: ValidationError[]) {
    return new ServiceError(404, 'NOT_FOUND', message, validationErrors);
  },
  /** A session ended (or the server began stopping) while a request of its sandbox waited: `during` says on what. */
  sandboxEnded(during: string) {
    return new ServiceError(404, 'NOT_FOUND', `The sandbox ended while ${during}: its session was ended or expired, or the server is stopping`);
  },
  conflict(message: string, code: ErrorCode = 'INVALID_REQUEST') {
    return new ServiceError(409, code, message);
  },
  /** docs/decisions.md#status-codes: a body of a media type the route does not read. */
  unsupportedMediaType(message: string) {
    return new ServiceError(415, 'INVALID_REQUEST', message);
  },
  /**
   * A limit of the control plane reached (docs/errors.md#codes-of-the-control-plane), answered with a Retry-After of
   * `retryAfterSeconds` (docs/errors.md#retry-after).
   */
  tooManyRequests(message: string, retryAfterSeconds = 1) {
    const error = new ServiceError(429, 'TOO_MANY_REQUESTS', message);
    error.retryAfterSeconds = retryAfterSeconds;
    return error;
  },
  internal(message = 'Internal error') {
    return new ServiceError(500, 'INTERNAL_ERROR', message);
  },
  /**
   * The disk (or the database's page limit) is full: 507 Insufficient Storage with the interface's INTERNAL_ERROR
   * code (docs/errors.md#disk-full). Nothing was written; reads go on.
   */
  diskFull() {
    return new ServiceError(
      507,
      'INTERNAL_ERROR',
      'The disk is full: the emulator could not write to its database, and nothing of this request was stored. Reads go on; free some space (or end sessions, delete snapshots) and send it again',
    );
  },
  /** The server cannot take the request now (it is shutting down). */
  unavailable(message: string) {
    return new ServiceError(503, 'INTERNAL_ERROR', message);
  },
  /**
   * The answer of a fault rule (docs/faults.md#the-rule): 429 TOO_MANY_REQUESTS, 500 INTERNAL_ERROR, and no
   * code on 502-504 (the interface lists none).
   */
  fault(status: 429 | 500 | 502 | 503 | 504, message: string) {
    const code: ErrorCode | undefined = status === 429 ? 'TOO_MANY_REQUESTS' : status === 500 ? 'INTERNAL_ERROR' : undefined;
    return new ServiceError(status, code, message);
  },
};

/** Standard error responses for route schemas, so every route documents its error shape. */
export function errorResponses(...statuses: number[]): Record<number, typeof errorBodySchema> {
  const out: Record<number, typeof errorBodySchema> = {};
  for (const status of [400, 401, ...statuses]) out[status] = errorBodySchema;
  return out;
}
