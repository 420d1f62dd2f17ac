import { prepared } from '../db/connection.js';
import type { AppContext } from '../context.js';
import { notifyOutbox } from '../domains/webhooks/outbox.js';

// Deferred work is a row in `jobs` with a due time on the emulated clock (docs/architecture.md#a-new-job). Jobs run in
// time order, each in its own SQLite transaction, with the clock reading the job's due time while it runs, so a rail
// step due at T is stamped T even when the clock was advanced past it in one call (docs/decisions.md#emulated-clock).

export type JobHandler = (ctx: AppContext, payload: Record<string, unknown>) => void;
/** Runs after a job's handler threw and its writes were rolled back (docs/decisions.md#failed-jobs). */
export type JobFailureHandler = (ctx: AppContext, payload: Record<string, unknown>, error: string) => void;

interface JobRow {
  id: number;
  type: string;
  due_at_ms: number;
  payload: string;
}

export function scheduleJob(ctx: AppContext, type: string, dueAtMs: number, payload: Record<string, unknown>): number {
  if (!ctx.jobHandlers[type]) throw new Error(`no handler registered for job type ${type}`);
  const result = prepared(ctx.db, 'INSERT INTO jobs (type, due_at_ms, payload, created_at_ms) VALUES (?, ?, ?, ?)').run(
    type,
    dueAtMs,
    JSON.stringify(payload),
    ctx.clock.nowMs(),
  );
  return Number(result.lastInsertRowid);
}

export function cancelJobs(ctx: AppContext, type: string, payloadMatch: (payload: Record<string, unknown>) => boolean): void {
  const rows = prepared<JobRow>(ctx.db, "SELECT id, type, due_at_ms, payload FROM jobs WHERE status = 'PENDING' AND type = ?").all(type);
  for (const row of rows) {
    if (payloadMatch(JSON.parse(row.payload) as Record<string, unknown>)) {
      prepared(ctx.db, "UPDATE jobs SET status = 'CANCELED' WHERE id = ?").run(row.id);
    }
  }
}

function nextDueJob(ctx: AppContext, uptoMs: number): JobRow | undefined {
  return prepared<JobRow>(
    ctx.db,
    "SELECT id, type, due_at_ms, payload FROM jobs WHERE status = 'PENDING' AND due_at_ms <= ? ORDER BY due_at_ms, id LIMIT 1",
  ).get(uptoMs);
}

/**
 * Run one job in its own IMMEDIATE transaction, claiming it first: several processes may serve one database
 * file, and each polls for due jobs, so the job is run only if it is still PENDING once this process holds
 * the write lock (a deferred transaction could not even take the lock after another process committed).
 * Returns false when the database stayed locked (SQLITE_BUSY after the busy timeout): the job stays PENDING
 * for a later pass instead of being recorded FAILED and lost.
 */
function runJob(ctx: AppContext, job: JobRow): boolean {
  const handler = ctx.jobHandlers[job.type];
  try {
    ctx.db.transaction(() => {
      const claimed = prepared(ctx.db, "UPDATE jobs SET status = 'DONE', attempts = attempts + 1 WHERE id = ? AND status = 'PENDING'").run(job.id).changes;
      if (claimed === 0) return; // another process ran it meanwhile
      if (!handler) throw new Error(`no handler for job type ${job.type}`);
      handler(ctx, JSON.parse(job.payload) as Record<string, unknown>);
    }).immediate();
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY')) return false;
    recordJobFailure(ctx, job, error instanceof Error ? error.message : String(error));
  }
  return true;
}

/**
 * A failing job must not wedge the queue, nor leave what it worked on in flight forever: the job is recorded
 * FAILED and, in the same SQLite transaction, its type's failure handler runs (a rail step's transaction moves
 * to FAILED with PROCESSING_ERROR, its hold released, its webhook written). The handler's writes and the
 * job's record commit together or not at all: if the handler throws too, it is rolled back and the job alone
 * is recorded FAILED with both errors, so nothing is half-written (docs/decisions.md#failed-jobs).
 */
function recordJobFailure(ctx: AppContext, job: JobRow, message: string): void {
  const markFailed = (lastError: string) =>
    prepared(ctx.db, "UPDATE jobs SET status = 'FAILED', attempts = attempts + 1, last_error = ? WHERE id = ? AND status = 'PENDING'").run(lastError, job.id).changes;
  const onFailure = ctx.jobFailureHandlers?.[job.type];
  if (onFailure) {
    try {
      ctx.db.transaction(() => {
        if (markFailed(message) === 0) return; // another process recorded or ran it meanwhile
        onFailure(ctx, JSON.parse(job.payload) as Record<string, unknown>, message);
      }).immediate();
      return;
    } catch (handlerError) {
      message = `${message}; then its failure handling failed: ${handlerError instanceof Error ? handlerError.message : String(handlerError)}`;
    }
  }
  try {
    markFailed(message);
  } catch {
    // the database may be closing or locked; the job stays PENDING and is tried again on a later pass
  }
}

/**
 * Run every job due by the clock's current time. With a flowing clock jobs keep their own due time
 * only in the database; the clock is not moved back.
 */
export function runDueJobs(ctx: AppContext, limit = 10_000): number {
  let ran = 0;
  for (;;) {
    const job = nextDueJob(ctx, ctx.clock.nowMs());
    if (!job || ran >= limit) break;
    if (!runJob(ctx, job)) break;
    ran += 1;
  }
  if (ran > 0) notifyOutbox(ctx);
  return ran;
}

/** Advance the emulated clock by `ms`, running due jobs in time order at their own due times. */
export function advanceClock(ctx: AppContext, ms: number): number {
  const target = ctx.clock.nowMs() + ms;
  const frozen = ctx.clock.state().mode === 'frozen';
  let ran = 0;
  for (;;) {
    const job = nextDueJob(ctx, target);
    if (!job) break;
    if (job.due_at_ms > ctx.clock.nowMs()) moveTo(ctx, job.due_at_ms, frozen);
    if (!runJob(ctx, job)) break;
    ran += 1;
  }
  if (target > ctx.clock.nowMs()) moveTo(ctx, target, frozen);
  if (ran > 0) notifyOutbox(ctx);
  return ran;
}

function moveTo(ctx: AppContext, ms: number, frozen: boolean): void {
  if (frozen) ctx.clock.freezeAt(ms);
  else ctx.clock.advance(ms - ctx.clock.nowMs());
}

/** Poll for due jobs while time flows (realtime clock); returns a stop function. */
export function startSchedulerTimer(ctx: AppContext, intervalMs = 100): () => void {
  const timer = setInterval(() => {
    try {
      runDueJobs(ctx);
    } catch {
      // the database may be closing during shutdown
    }
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
