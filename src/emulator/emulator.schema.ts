import { z } from 'zod';

export const healthResponse = z.object({ status: z.literal('ok'), now: z.string(), version: z.string() });

export const clockResponse = z
  .object({
    now: z.string().describe('Emulated time'),
    mode: z.enum(['realtime', 'frozen']),
    offsetMs: z.number().describe('Emulated minus real time, in ms'),
    jobsRun: z.number().int().optional().describe('Scheduled jobs run by this change'),
  })
  .meta({ id: 'Clock' });

export const clockBody = z
  .union([
    z.object({ freezeAt: z.iso.datetime({ offset: true }) }).strict(),
    z.object({ advanceMs: z.number().int().min(0).max(366 * 24 * 3600 * 1000) }).strict(),
    z.object({ realtime: z.literal(true) }).strict(),
  ])
  .describe('Exactly one of { freezeAt }, { advanceMs } or { realtime: true }');

export const resetResponse = z.object({ status: z.literal('reset'), durationMs: z.number() });
