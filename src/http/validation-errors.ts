import { z } from 'zod';
import { errors, type ValidationError, type ValidationErrorType } from './errors.js';

// zod issues -> the interface's validationErrors items (one per issue, with a field path and a message for
// people), used for every route's params, query and body and by parseOrThrow in the domains.

export type Location = 'body' | 'querystring' | 'params' | 'headers';

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

export function summarize(validationErrors: ValidationError[]): string {
  const first = validationErrors[0];
  const rest = validationErrors.length > 1 ? ` (and ${validationErrors.length - 1} more)` : '';
  return first ? `Invalid request: ${first.message}${rest}` : 'Invalid request';
}
