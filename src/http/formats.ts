import { z } from 'zod';

// String fields whose JSON Schema `format` the OpenAPI document states (docs/openapi.md#formats), so
// generated clients and validators know an instant from a date. Output only: these add no check of
// their own (the conformance test validates every answer's formats against the document).

/** An RFC 3339 instant such as 2026-03-01T12:00:00.000Z (interface 2: date-time fields). */
export const instant = () => z.string().meta({ format: 'date-time' });

/** A calendar date YYYY-MM-DD (interface 2: date fields). */
export const calendarDate = () => z.string().meta({ format: 'date' });

/**
 * An email address (docs/decisions.md#email-addresses): a dot-atom local part of at most 64 characters (RFC 5321
 * 4.5.3.1.1), then a domain of dot-separated labels of 1-63 letters, digits and hyphens that neither start nor end
 * with a hyphen (RFC 1123 2.1), ending in an alphabetic top-level label. The same pattern is the document's.
 */
export const EMAIL_PATTERN =
  /^(?=[^@]{1,64}@)[A-Za-z0-9_'+-]+(?:\.[A-Za-z0-9_'+-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;

/** An email field: at most 254 characters (RFC 5321's path limit less its brackets) matching EMAIL_PATTERN. */
export const emailAddress = (field = 'email') =>
  z.email({ pattern: EMAIL_PATTERN, error: `${field} must be an email address` }).max(254, `${field} must be at most 254 characters`);
