import { z } from 'zod';
import { envelopeSchema, pageQuery } from '../http/pagination.js';
import { instant } from '../http/formats.js';
import { JOB_STATUSES } from '../scheduler/scheduler.js';

// GET /_emulator/jobs (docs/control-plane.md#jobs)

export { JOB_STATUSES };

export const listJobsQuery = z.strictObject({
  status: z.enum(JOB_STATUSES, { error: `status must be one of ${JOB_STATUSES.join(', ')}` }).optional(),
  type: z.string().min(1).max(64).optional().meta({ examples: ['transaction.rail-step'] }).describe('A job type, e.g. transaction.rail-step'),
  transactionId: z.string().min(1).max(128).optional().meta({ examples: ['txn_hist_acme_usd_001'] }).describe('Jobs whose payload names this transaction'),
  ...pageQuery(200, 50),
});
export type ListJobsQuery = z.infer<typeof listJobsQuery>;

export const jobSchema = z
  .object({
    id: z.number().int(),
    type: z.string(),
    status: z.enum(JOB_STATUSES),
    dueAt: instant().describe('Emulated time the job is (or was) due'),
    createdAt: instant().describe('Emulated time the job was scheduled'),
    attempts: z.number().int(),
    lastError: z.string().nullable().describe('Why the job failed (FAILED only)'),
    transactionId: z.string().nullable().describe('The transaction the job works on, if any'),
    payload: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'EmulatorJob' });
export type Job = z.infer<typeof jobSchema>;

export const jobListSchema = envelopeSchema(jobSchema).meta({ id: 'EmulatorJobList' });
