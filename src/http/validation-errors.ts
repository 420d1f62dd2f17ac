import { z } from 'zod';
import { errors, type ServiceError, type ValidationError, type ValidationErrorType } from '../core/errors.js';

// zod issues -> the interface's validationErrors items (one per issue, with a field path and a message for
// people), used for every route's params, query and body and by parseOrThrow in the domains.

export type Location = 'body' | 'querystring' | 'params' | 'headers';

function locationLabel(location: Location): string {
  return { body: 'body', querystring: 'query parameter', params: 'path parameter', headers: 'header' }[location];
}

/**
 * At most this many items in one answer, and names sent by the client echoed to at most this many characters: a 1 MiB
 * body of 50,000 unknown keys, or one key of a million characters, would otherwise come back as megabytes of items
 * and hold the event loop for a second while they are built (docs/errors.md#validation-errors).
 */
export const MAX_VALIDATION_ERRORS = 50;
const MAX_ECHOED_NAME = 100;

/** The interface's 400 for zod issues (from fastify's validator or a service-level parse), items capped. */
export function invalidFromZodIssues(issues: readonly z.core.$ZodIssue[], location: Location, rawInput?: unknown): ServiceError {
  const { items, total } = zodIssuesToValidationErrors(issues, location, rawInput);
  return errors.invalid(summarize(items, total), items);
}

/** Turn zod issues into interface 7.2 items: the first MAX_VALIDATION_ERRORS of `total`. */
export function zodIssuesToValidationErrors(
  issues: readonly z.core.$ZodIssue[],
  location: Location,
  rawInput?: unknown,
): { items: ValidationError[]; total: number } {
  const items: ValidationError[] = [];
  let total = 0;
  for (const issue of issues) {
    // A strict object names the unexpected keys on the parent; report each key as its own field.
    if (issue.code === 'unrecognized_keys') {
      const keys = (issue as { keys?: string[] }).keys ?? [];
      total += keys.length;
      for (const key of keys.slice(0, Math.max(0, MAX_VALIDATION_ERRORS - items.length))) {
        const fieldRef = [...issue.path.map((segment) => echoedName(String(segment))), echoedName(key)].join('.');
        items.push({ type: 'InvalidValue', fieldRef, message: `${fieldRef} is not an accepted ${location === 'querystring' ? 'query parameter' : 'field'}` });
      }
      continue;
    }
    total += 1;
    if (items.length < MAX_VALIDATION_ERRORS) items.push(issueToValidationError(issue, location, rawInput));
  }
  return { items, total };
}

/** A key the client sent, shortened for the answer when it is absurdly long. */
function echoedName(key: string): string {
  return key.length <= MAX_ECHOED_NAME ? key : `${key.slice(0, MAX_ECHOED_NAME)}... (${key.length} characters)`;
}

function issueToValidationError(issue: z.core.$ZodIssue, location: Location, rawInput: unknown): ValidationError {
  const path = issue.path.map((segment) => echoedName(String(segment)));
  const fieldRef = path.join('.');
  // An empty path segment (`/v1/accounts//statement`) reaches the route with the parameter as "": the
  // parameter was not supplied (interface 7.2 MissingPathParameter; docs/errors.md#missing-path-parameter).
  if (location === 'params' && path.length > 0 && valueAt(rawInput, issue.path) === '') {
    return { type: 'MissingPathParameter', fieldRef, message: `${fieldRef} is required: the path has an empty segment where ${fieldRef} goes` };
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
  const subject = fieldRef || locationLabel(location);
  const value = valueAt(rawInput, issue.path);
  // A repeated query parameter (?pageSize=1&pageSize=2) arrives as a list, whatever the schema says of it.
  const repeated = issue.code === 'invalid_type' && Array.isArray(value) && (location === 'querystring' || location === 'headers');
  const plain = repeated || isZodDefaultMessage(issue.message) ? plainMessage(issue, subject, value, location) : undefined;
  const message = missing
    ? `${fieldRef} is required${issue.code === 'invalid_value' ? ` (${describeValues(issue)})` : ''}`
    : plain !== undefined
      ? plain
      : issue.message.startsWith(fieldRef) && fieldRef
        ? issue.message
        : `${subject}: ${issue.message}`;
  return fieldRef ? { type, fieldRef, message } : { type: 'Unknown', message };
}

// zod's own English messages ("Invalid input: expected string, received array", "Too small: expected string
// to have >=1 characters") speak of the schema, not of the request. A schema's own message is kept; zod's
// defaults are rewritten for people, naming the field (docs/errors.md#messages).
const ZOD_DEFAULT_MESSAGE =
  /^(Invalid input(: .*)?|Invalid option: .*|Too (small|big): expected .*|Invalid string: must .*|Invalid number: must .*|Invalid discriminator value.*|Invalid key in .*|Invalid value in .*|Invalid [A-Za-z0-9 .-]+)$/;

function isZodDefaultMessage(message: string): boolean {
  return ZOD_DEFAULT_MESSAGE.test(message);
}

function describeValues(issue: z.core.$ZodIssue): string {
  const values = ((issue as { values?: unknown[] }).values ?? []).map((value) => (typeof value === 'string' ? value : JSON.stringify(value)));
  if (values.length === 0) return issue.message.replace(/^Invalid option: /, '');
  return values.length === 1 ? `must be ${values[0]}` : `one of ${values.join(', ')}`;
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list (JSON array)',
  bigint: 'an integer',
  date: 'a date',
  null: 'null',
};

function describeInput(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return Number.isFinite(value) ? 'a number' : String(value);
  if (typeof value === 'boolean') return String(value);
  return `a ${typeof value}`;
}

/** A message written for people in place of zod's default one; undefined when there is nothing better to say. */
function plainMessage(issue: z.core.$ZodIssue, subject: string, value: unknown, location: Location): string | undefined {
  const detail = issue as unknown as Record<string, unknown>;
  switch (issue.code) {
    case 'invalid_type': {
      if (Array.isArray(value) && location === 'querystring') return `${subject} was given more than once; send it once`;
      if (Array.isArray(value) && location === 'headers') return `${subject} was sent more than once; send it once`;
      const expected = TYPE_WORDS[String(detail.expected)] ?? String(detail.expected);
      return value === undefined ? `${subject} must be ${expected}` : `${subject} must be ${expected}, not ${describeInput(value)}`;
    }
    case 'invalid_value':
      return `${subject} must be ${describeValues(issue).replace(/^must be /, '')}`;
    case 'too_small':
    case 'too_big': {
      const small = issue.code === 'too_small';
      const bound = String(small ? detail.minimum : detail.maximum);
      const origin = String(detail.origin);
      const unit = origin === 'string' ? 'characters' : origin === 'array' || origin === 'set' ? 'items' : origin === 'file' ? 'bytes' : '';
      if (small && origin === 'string' && bound === '1') return `${subject} must not be empty`;
      if (detail.exact) return `${subject} must be exactly ${bound}${unit ? ` ${unit}` : ''}`;
      if (unit) return `${subject} must ${origin === 'string' ? 'be' : 'hold'} at ${small ? 'least' : 'most'} ${bound} ${unit}`;
      const inclusive = detail.inclusive !== false;
      return `${subject} must be ${small ? (inclusive ? 'at least' : 'greater than') : inclusive ? 'at most' : 'less than'} ${bound}`;
    }
    case 'invalid_format': {
      const format = String(detail.format);
      if (format === 'starts_with') return `${subject} must start with "${String(detail.prefix)}"`;
      if (format === 'ends_with') return `${subject} must end with "${String(detail.suffix)}"`;
      if (format === 'includes') return `${subject} must include "${String(detail.includes)}"`;
      if (format === 'regex') return `${subject} is not in the accepted format`;
      const words: Record<string, string> = { email: 'an email address', url: 'a URL', datetime: 'an ISO 8601 date-time', date: 'a date (YYYY-MM-DD)', uuid: 'a UUID' };
      return `${subject} must be ${words[format] ?? `a valid ${format}`}`;
    }
    case 'not_multiple_of':
      return `${subject} must be a multiple of ${String(detail.divisor)}`;
    case 'invalid_union': {
      const discriminator = detail.discriminator;
      if (typeof discriminator === 'string') {
        const options = Array.isArray(detail.options) ? (detail.options as unknown[]).map(String) : [];
        // zod's path may already end at the discriminator (effect.type): name it once
        const named = subject === discriminator || subject.endsWith(`.${discriminator}`);
        const where = named ? subject : subject === locationLabel(location) ? discriminator : `${subject}.${discriminator}`;
        return options.length > 0 ? `${where} must be one of ${options.join(', ')}` : `${where} is missing or not one of the accepted values`;
      }
      return `${subject} does not match any accepted form`;
    }
    case 'invalid_key':
      return `${subject} has a key that is not accepted`;
    case 'invalid_element':
      return `${subject} holds a value that is not accepted`;
    default:
      return undefined;
  }
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
  throw invalidFromZodIssues(result.error.issues, location, input);
}

/** The answer's message: the first item's, and how many more there are (listed or not). */
function summarize(validationErrors: ValidationError[], total: number): string {
  const first = validationErrors[0];
  const listed = validationErrors.length < total ? `; the first ${validationErrors.length} are listed` : '';
  const rest = total > 1 ? ` (and ${total - 1} more${listed})` : '';
  return first ? `Invalid request: ${first.message}${rest}` : 'Invalid request';
}
