import { z } from 'zod';
import { instant } from '../http/formats.js';

export const clockResponse = z
  .object({
    now: instant().describe('Emulated time'),
    mode: z.enum(['realtime', 'frozen']),
    offsetMs: z.number().describe('Emulated minus real time, in ms'),
    jobsRun: z.number().int().optional().describe('Scheduled jobs run by this change'),
  })
  .meta({ id: 'Clock' });

// docs/control-plane.md#health-reset-and-clock: exactly one of { freezeAt }, { advanceMs } or { realtime: true }. One
// strict object with a refinement (rather than a union) so that a bad value is reported on its own field.
const EXACTLY_ONE = 'Send exactly one of { "freezeAt": ISO instant }, { "advanceMs": integer >= 0 } or { "realtime": true }';
export const clockBody = z
  .object({
    freezeAt: z.iso
      .datetime({ offset: true, error: 'freezeAt must be an ISO 8601 instant with Z or an offset, such as 2026-03-01T12:00:00.000Z' })
      .optional(),
    advanceMs: z
      .number({ error: 'advanceMs must be an integer number of milliseconds 0-31622400000 (one year)' })
      .int('advanceMs must be an integer number of milliseconds 0-31622400000 (one year)')
      .min(0, 'advanceMs must be an integer number of milliseconds 0-31622400000 (one year)')
      .max(366 * 24 * 3600 * 1000, 'advanceMs must be an integer number of milliseconds 0-31622400000 (one year)')
      .optional(),
    realtime: z.literal(true, { error: 'realtime accepts only true' }).optional(),
  })
  .strict()
  .refine((body) => [body.freezeAt, body.advanceMs, body.realtime].filter((value) => value !== undefined).length === 1, { error: EXACTLY_ONE })
  // the same rule in the document (docs/openapi.md#rules-between-fields)
  .meta({ description: EXACTLY_ONE, oneOf: ['freezeAt', 'advanceMs', 'realtime'].map((field) => ({ required: [field], properties: { [field]: {} } })) });
