import { z } from 'zod';
import { instant } from '../http/formats.js';

// docs/control-plane.md#settle

export const SETTLE_TIMEOUT_DEFAULT_MS = 10_000;
export const SETTLE_TIMEOUT_MAX_MS = 60_000;

export const settleBody = z
  .strictObject({
    timeoutMs: z
      .number()
      .int(`timeoutMs accepts an integer number of milliseconds 0-${SETTLE_TIMEOUT_MAX_MS}`)
      .min(0, `timeoutMs accepts an integer number of milliseconds 0-${SETTLE_TIMEOUT_MAX_MS}`)
      .max(SETTLE_TIMEOUT_MAX_MS, `timeoutMs accepts an integer number of milliseconds 0-${SETTLE_TIMEOUT_MAX_MS}`)
      .optional()
      .describe(`Real milliseconds to wait at most (default ${SETTLE_TIMEOUT_DEFAULT_MS})`),
  })
  .optional();

const waitingDelivery = z.object({
  id: z.string(),
  eventId: z.string(),
  eventType: z.string(),
  transactionId: z.string(),
  status: z.enum(['PENDING', 'RETRYING']),
  attempts: z.number().int().min(0).describe('Scheduled attempts made so far'),
  nextAttemptAt: instant().nullable().describe('RETRYING: the emulated time of its next attempt'),
  behind: z.string().nullable().describe('The earlier delivery of the same transaction it waits behind (events are sent in order)'),
  onTheWire: z.boolean().describe('An attempt is being made now (it did not finish within timeoutMs)'),
});

export const settleReportSchema = z
  .object({
    settled: z.boolean().describe('true: every job due by now has run and every delivery that may be attempted now was attempted and answered'),
    now: instant().describe('The emulated time (settle never moves the clock)'),
    waitedMs: z.number().int().min(0).describe('Real milliseconds spent'),
    jobsRun: z.number().int().min(0).describe('Jobs run by this call'),
    waiting: z.object({
      jobs: z.number().int().min(0).describe('Jobs due later than now (a retry, a rail step, a review)'),
      deliveries: z.number().int().min(0).describe('Deliveries still PENDING or RETRYING'),
      items: z.array(waitingDelivery).describe('Those deliveries, oldest event first (at most 50)'),
    }),
    nextDueAt: instant().nullable().describe('When the next job is due on the emulated clock (advance the clock to it to go on); null: nothing is scheduled'),
  })
  .meta({ id: 'SettleReport' });
export type SettleReport = z.infer<typeof settleReportSchema>;
