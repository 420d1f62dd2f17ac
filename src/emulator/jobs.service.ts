import { readPage } from '../db/page.js';
import { sqlFilter, whereClause } from '../db/filter.js';
import type { AppContext } from '../context.js';
import type { Page } from '../core/page.js';
import type { Job, ListJobsQuery } from './jobs.schema.js';

// GET /_emulator/jobs (docs/control-plane.md#jobs): the scheduled work on the emulated clock, so a job that
// failed is seen rather than lost (docs/decisions.md#failed-jobs).

interface JobRow {
  id: number;
  type: string;
  due_at_ms: number;
  payload: string;
  status: Job['status'];
  attempts: number;
  last_error: string | null;
  created_at_ms: number;
}

function toJob(row: JobRow): Job {
  const payload = JSON.parse(row.payload) as Record<string, unknown>;
  return {
    id: row.id,
    type: row.type,
    status: row.status,
    dueAt: new Date(row.due_at_ms).toISOString(),
    createdAt: new Date(row.created_at_ms).toISOString(),
    attempts: row.attempts,
    lastError: row.last_error,
    transactionId: typeof payload.transactionId === 'string' ? payload.transactionId : null,
    payload,
  };
}

/** Jobs newest first (by id), filtered by status, type and the transaction they work on. */
export function listJobs(ctx: AppContext, query: ListJobsQuery): Page<Job> {
  const filter = sqlFilter([
    ['status = ?', query.status],
    ['type = ?', query.type],
    ["json_extract(payload, '$.transactionId') = ?", query.transactionId],
  ]);
  return readPage<JobRow, Job>(ctx.db, { columns: '*', from: `jobs ${whereClause(filter)}`, orderBy: 'id DESC' }, filter.params, query, toJob);
}
