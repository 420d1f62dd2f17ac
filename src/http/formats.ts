import { z } from 'zod';

// String fields whose JSON Schema `format` the OpenAPI document states (docs/openapi.md#formats), so
// generated clients and validators know an instant from a date. Output only: these add no check of
// their own (the conformance test validates every answer's formats against the document).

/** An RFC 3339 instant such as 2026-03-01T12:00:00.000Z (interface 2: date-time fields). */
export const instant = () => z.string().meta({ format: 'date-time' });

/** A calendar date YYYY-MM-DD (interface 2: date fields). */
export const calendarDate = () => z.string().meta({ format: 'date' });
