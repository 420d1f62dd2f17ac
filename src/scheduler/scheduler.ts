import { prepared } from '../db/connection.js';
import { errors } from '../core/errors.js';
import type { AppContext } from '../context.js';
import type { StateSlot } from '../runtime/sandbox-runtime.js';
import { clampToClockRange } from '../lib/clock.js';

// Deferred work is a row in `jobs` with a due time on the emulated clock (docs/architecture.md#a-new-job). Jobs run in
// time order, in slices: one IMMEDIATE SQLite transaction per slice, each job in a savepoint of its own
// (docs/architecture.md#the-transaction-rule), with the clock reading the job's due time while it runs, so a rail
// step due at T is stamped T even when the clock was advanced past it in one call (docs/decisions.md#emulated-clock).

/** A job row's statuses: run once (DONE), refused by its handler (FAILED), or canceled before it ran. */
export const JOB_STATUSES = ['PENDING', 'DONE', 'FAILED', 'CANCELED'] as const;

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
  const dueMs = clampToClockRange(dueAtMs); // docs/decisions.md#clock-range: due no later than the clock can reach
  const result = prepared(ctx.db, 'INSERT INTO jobs (type, due_at_ms, payload, created_at_ms) VALUES (?, ?, ?, ?)').run(
    type,
    dueMs,
    JSON.stringify(payload),
    ctx.clock.nowMs(),
  );
  ctx.runtime.get(jobsTimerSlot).wake?.(dueMs);
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
 * Jobs run in slices (docs/decisions.md#scheduler-slices): one IMMEDIATE transaction holds up to SLICE_MAX_JOBS jobs or
 * SLICE_MAX_MS of work, each job in a savepoint of its own, so a job that throws is rolled back alone and recorded
 * FAILED in the same slice, exactly as when each job had its own transaction; what changes is the number of commits (one
 * per slice instead of one per job) and, in the background, that the slices yield to waiting requests in between
 * (docs/decisions.md#scheduler-slices).
 */
export const SLICE_MAX_JOBS = 64;
export const SLICE_MAX_MS = 4;

interface SliceResult {
  ran: number;
  /** Jobs due are left: the slice stopped at its bound. */
  more: boolean;
}

/**
 * Run due jobs (due by `uptoMs`) in one IMMEDIATE transaction, claiming each first: several processes may serve one
 * database file, and each polls for due jobs, so a job is run only if it is still PENDING once this process holds the
 * write lock (a deferred transaction could not even take the lock after another process committed). When the database
 * stays locked (SQLITE_BUSY after the busy timeout) nothing runs: the jobs stay PENDING for a later pass instead of being
 * recorded FAILED and lost. `advancing`: the clock is moved to each job's due time before it runs (advanceClock).
 */
function runSlice(ctx: AppContext, uptoMs: number, advancing: { frozen: boolean } | null, maxJobs: number, maxMs: number): SliceResult | null {
  const started = performance.now();
  try {
    return ctx.db.transaction((): SliceResult => {
      let ran = 0;
      for (;;) {
        const job = nextDueJob(ctx, uptoMs);
        if (!job) return { ran, more: false };
        if (ran >= maxJobs || (ran > 0 && performance.now() - started >= maxMs)) return { ran, more: true };
        if (advancing && job.due_at_ms > ctx.clock.nowMs()) moveTo(ctx, job.due_at_ms, advancing.frozen);
        runJob(ctx, job);
        ran += 1;
      }
    }).immediate();
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY')) return null;
    throw error;
  }
}

/** One job, in a savepoint of the slice's transaction (docs/decisions.md#scheduler-slices). */
function runJob(ctx: AppContext, job: JobRow): void {
  const handler = ctx.jobHandlers[job.type];
  try {
    ctx.db.transaction(() => {
      const claimed = prepared(ctx.db, "UPDATE jobs SET status = 'DONE', attempts = attempts + 1 WHERE id = ? AND status = 'PENDING'").run(job.id).changes;
      if (claimed === 0) return; // another process ran it meanwhile
      if (!handler) throw new Error(`no handler for job type ${job.type}`);
      handler(ctx, JSON.parse(job.payload) as Record<string, unknown>);
    })();
  } catch (error) {
    recordJobFailure(ctx, job, error instanceof Error ? error.message : String(error));
  }
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
      })();
      return;
    } catch (handlerError) {
      message = `${message}; then its failure handling failed: ${handlerError instanceof Error ? handlerError.message : String(handlerError)}`;
    }
  }
  try {
    markFailed(message);
  } catch {
    // the database may be closing; the job stays PENDING and is tried again on a later pass
  }
}

/**
 * A pass over due jobs, taken one slice at a time (docs/decisions.md#scheduler-slices): `step` runs one slice and says
 * whether jobs due are left, `finish` wakes what the jobs made due and re-arms the jobs timer. With `advanceToMs` the
 * clock is moved to each job's due time before it runs and ends at that instant (a move of the clock); without it,
 * the jobs due by the clock's current time run and the clock is not touched.
 */
interface Pass {
  step(maxMs: number): boolean;
  finish(): number;
}

function startPass(ctx: AppContext, advanceToMs: number | null, limit = Infinity): Pass {
  const advancing = advanceToMs === null ? null : { frozen: ctx.clock.state().mode === 'frozen' };
  let ran = 0;
  return {
    step(maxMs) {
      if (ran >= limit) return false;
      const slice = runSlice(ctx, advanceToMs ?? ctx.clock.nowMs(), advancing, Math.min(SLICE_MAX_JOBS, limit - ran), maxMs);
      if (!slice) return false; // another process holds the file's write lock: the jobs stay for a later pass
      ran += slice.ran;
      return slice.more;
    },
    finish() {
      if (advanceToMs !== null && advancing && advanceToMs > ctx.clock.nowMs()) moveTo(ctx, advanceToMs, advancing.frozen);
      // a job may have made a delivery due: the modules' callback (the outbox's wake-up) runs once the jobs committed,
      // so the scheduler names no domain (docs/architecture.md#runtime)
      if (ran > 0) ctx.afterJobsRan?.(ctx);
      rearmJobsTimer(ctx);
      return ran;
    },
  };
}

/**
 * Run every job due by the clock's current time, now, slice after slice without yielding: opening a sandbox, before
 * any request reaches it. A request runs them with `runDueJobsYielding`.
 */
export function runDueJobs(ctx: AppContext, limit = 10_000): number {
  const pass = startPass(ctx, null, limit);
  while (pass.step(Infinity));
  return pass.finish();
}

/**
 * Advance the emulated clock by `ms` without yielding, running due jobs in time order at their own due times: the
 * clock's catching up while a sandbox opens (create-context.ts), before any request reaches it. A request moves the
 * clock with `advanceClockYielding`.
 */
export function advanceClock(ctx: AppContext, ms: number): number {
  const pass = startPass(ctx, ctx.clock.nowMs() + ms);
  while (pass.step(Infinity));
  return pass.finish();
}

/**
 * A move of the clock asked for by a request (docs/decisions.md#scheduler-slices): the same slices, with a turn of the
 * event loop between two, so every other sandbox (and this server's health check) is answered while a long backlog of
 * jobs runs. The sandbox's own requests wait for the end of the move (`clockMoveUnderWay`, the app's preHandler), so
 * the answer and every request after it still see the settled state. Everything due runs before it resolves.
 */
export function advanceClockYielding(ctx: AppContext, ms: number): Promise<number> {
  return holdingTheClock(ctx, () => startPass(ctx, ctx.clock.nowMs() + ms));
}

/** The jobs due by the clock's current time, slice by slice with turns between, under the clock's hold (resume). */
export function runDueJobsYielding(ctx: AppContext): Promise<number> {
  return holdingTheClock(ctx, () => startPass(ctx, null));
}

/** What a sandbox's move of the clock holds (docs/decisions.md#scheduler-slices): the move under way, if any. */
export interface ClockMove {
  underWay: Promise<unknown> | null;
  /**
   * How many restores and resets have replaced the sandbox's state: a handler's write after a wait
   * (docs/control-plane.md#a-write-after-a-wait) and a webhook attempt on the wire (docs/webhooks.md#reset) compare it.
   */
  replaced: number;
}

/** docs/architecture.md#runtime: the move of the clock a sandbox's requests wait for. */
export const clockMoveSlot: StateSlot<ClockMove> = {
  name: 'emulator.clockMove',
  create: () => ({ underWay: null, replaced: 0 }),
  reset: 'keep',
  carriedBySnapshots: false,
  newSession: 'fresh',
};

/** The move of the clock under way in this sandbox, if any: its requests wait for it before their handler runs. */
export function clockMoveUnderWay(ctx: AppContext): Promise<unknown> | null {
  return ctx.runtime.get(clockMoveSlot).underWay;
}

/** The sandbox was closed (its session ended, the server stopping) between two slices of a move. */
export class SandboxClosedError extends Error {}

/**
 * Resolves once no save, restore or reset of the sandbox holds a transaction open across turns
 * (docs/control-plane.md#big-states): what a webhook attempt released meanwhile waits for before it reads or records, and
 * what settle waits for before it reads the state.
 */
export async function afterOpenTransaction(ctx: AppContext): Promise<void> {
  let waited: Promise<unknown> | null = null;
  while (ctx.db.open && ctx.db.inTransaction) {
    const hold = clockMoveUnderWay(ctx);
    if (hold && hold !== waited) {
      waited = hold;
      await hold.catch(() => undefined);
    } else {
      await new Promise((resolve) => setTimeout(resolve, 5)); // a hold being let go
    }
  }
}

function holdingTheClock(ctx: AppContext, start: () => Pass): Promise<number> {
  return holdSandbox(ctx, async (stillWanted) => {
    const pass = start();
    while (pass.step(SLICE_MAX_MS)) {
      await new Promise((resolve) => setImmediate(resolve));
      const stop = stillWanted();
      if (stop) throw stop;
    }
    return pass.finish();
  });
}

/**
 * Hold the sandbox for work that takes turns of the event loop (docs/decisions.md#scheduler-slices): a move of its
 * clock, a big restore or reset (docs/control-plane.md#big-states). Its requests wait for the end of the hold (the
 * app's clock-move gate), its jobs timer starts no pass, and holds of one sandbox take turns. `work` is given the
 * check to make after each turn: an error once the sandbox was closed meanwhile.
 */
export async function holdSandbox<T>(ctx: AppContext, work: (stillWanted: () => Error | null) => Promise<T>): Promise<T> {
  const hold = ctx.runtime.get(clockMoveSlot);
  // holds of one sandbox take turns. Taken in the turn that sees none under way, before any request can pass the app's
  // hooks (without a hold under way: in this same turn)
  const { held } = await whenUnheld(hold, () => {
    if (!ctx.db.open) throw new SandboxClosedError('the sandbox was closed before its turn came');
    const started = work(() => (ctx.db.open ? null : new SandboxClosedError('the sandbox was closed while it was held')));
    hold.underWay = started;
    return { held: started };
  });
  try {
    return await held;
  } finally {
    if (hold.underWay === held) hold.underWay = null; // a next hold may have taken the slot already
    // the jobs timer skipped its passes during the hold: look again, also when the work failed (work that finished
    // re-armed it already; a second look costs one query)
    if (ctx.db.open) rearmJobsTimer(ctx);
  }
}

/**
 * Run `then` once no hold of the sandbox is under way, the holds queued behind one included, in the same turn as that
 * check (synchronously when none is), so no hold starts between the two. A settled hold still in the slot is being let
 * go: it is not waited for twice.
 */
async function whenUnheld<T>(hold: ClockMove, then: () => T): Promise<T> {
  for (let after: Promise<unknown> | null = null; hold.underWay && hold.underWay !== after; ) {
    after = hold.underWay;
    await after.catch(() => undefined);
  }
  return then();
}

/** How many restores and resets have replaced the sandbox's state so far: read before a wait, compared after it. */
export function stateReplacements(ctx: AppContext): number {
  return ctx.runtime.get(clockMoveSlot).replaced;
}

/** A restore or reset is replacing the sandbox's state: writes prepared before it are of another state. */
export function stateReplaced(ctx: AppContext): void {
  ctx.runtime.get(clockMoveSlot).replaced += 1;
}

/**
 * docs/control-plane.md#a-write-after-a-wait: a handler's write after it waited on something of its own (a statement
 * rendered, documents parsed, a scenario's step played) runs once no hold of its sandbox is under way, in the turn that
 * sees none, so it never lands inside a save, restore or reset taking turns, nor is read half way by one. `write` can
 * compare stateReplacements with what it read before the wait. A sandbox closed meanwhile: the 404 of a session ended.
 */
export function writeAfterWait<T>(ctx: AppContext, during: string, write: () => T): Promise<T> {
  return whenUnheld(ctx.runtime.get(clockMoveSlot), () => {
    if (!ctx.db.open) throw errors.sandboxEnded(during);
    return write();
  });
}

function moveTo(ctx: AppContext, ms: number, frozen: boolean): void {
  if (frozen) ctx.clock.freezeAt(ms);
  else ctx.clock.advance(ms - ctx.clock.nowMs());
}

/**
 * Background pass while time flows: due jobs in slices of at most SLICE_MAX_JOBS jobs or SLICE_MAX_MS, yielding with
 * setImmediate between slices so requests that arrived meanwhile are served before the next slice
 * (docs/decisions.md#scheduler-slices). Resolves with the number of jobs run; `stopped()` ends it between slices.
 */
export function runDueJobsInSlices(ctx: AppContext, stopped: () => boolean = () => false): Promise<number> {
  return new Promise((resolve) => {
    let ran = 0;
    const next = () => {
      let more = false;
      try {
        // a big restore or reset keeps a transaction open across turns while it holds the sandbox
        // (docs/control-plane.md#big-states): no job writes into it; the hold's end re-arms the timer
        if (!stopped() && !ctx.db.inTransaction) {
          const slice = runSlice(ctx, ctx.clock.nowMs(), null, SLICE_MAX_JOBS, SLICE_MAX_MS);
          if (slice) {
            ran += slice.ran;
            more = slice.more;
            if (slice.ran > 0) ctx.afterJobsRan?.(ctx);
          }
        }
      } catch {
        // the database may be closing during shutdown
      }
      if (more) setImmediate(next);
      else resolve(ran);
    };
    next();
  });
}

/**
 * The running jobs timer's wake-up (docs/decisions.md#scheduler-wake-up): `wake(dueAtMs)` is told each job scheduled
 * and `wake()` each move of the clock, so the timer fires when the earliest job comes due instead of polling.
 */
export interface JobsTimer {
  wake: ((dueAtMs?: number) => void) | null;
}

/** The sandbox's jobs timer (docs/architecture.md#runtime): set by startSchedulerTimer while the sandbox is open. */
export const jobsTimerSlot: StateSlot<JobsTimer> = {
  name: 'emulator.jobsTimer',
  create: () => ({ wake: null }),
  reset: 'keep',
  carriedBySnapshots: false,
  newSession: 'fresh',
};

/** Look again for the earliest pending job (after the clock moved, a reset or a restore): docs/decisions.md#scheduler-wake-up. */
export function rearmJobsTimer(ctx: AppContext): void {
  ctx.runtime.get(jobsTimerSlot).wake?.();
}

/**
 * Longest sleep of the timer (real ms) between two looks at the jobs table: 1 s for an in-memory database, which only
 * this process writes (a missed wake-up costs at most this); 100 ms for a file, which other processes may schedule
 * jobs in (docs/decisions.md#scheduler-wake-up).
 */
export const LOOK_AGAIN_MS = { memory: 1000, file: 100 } as const;

function earliestPendingJob(ctx: AppContext): number | null {
  return prepared<{ due: number | null }>(ctx.db, "SELECT MIN(due_at_ms) AS due FROM jobs WHERE status = 'PENDING'").get()!.due;
}

/** A pass of the jobs timer that has ended: the jobs it ran, and the emulated instant it started at. */
export interface FinishedPass {
  ran: number;
  startedAtMs: number;
}

/**
 * Real ms the jobs timer waits after a pass, given the earliest pending job's due instant (`dueMs`, null: none) and
 * the real ms until the clock reaches it (docs/decisions.md#scheduler-wake-up). A job that was due when the pass
 * started and is still pending after a pass that ran nothing is held by another process's write lock: look again
 * after `lookAgainMs`, not in a tight loop. A job that came due during the pass (a timer that fired a little early
 * on a busy machine) is not held by anything: it runs at once.
 */
export function delayAfterPass(pass: FinishedPass, dueMs: number | null, delayUntilDueMs: number, lookAgainMs: number): number {
  return pass.ran === 0 && dueMs !== null && dueMs <= pass.startedAtMs ? lookAgainMs : delayUntilDueMs;
}

/**
 * Run due jobs as they come due (docs/decisions.md#scheduler-wake-up), in slices (runDueJobsInSlices): one timer,
 * armed for the earliest pending job while time flows, woken earlier by a job scheduled sooner or a move of the clock,
 * and never asleep longer than LOOK_AGAIN_MS. An idle sandbox (no job due soon, or a frozen clock) costs one look a
 * second. Returns a stop function.
 */
export function startSchedulerTimer(ctx: AppContext, lookAgainMs: number = ctx.db.memory ? LOOK_AGAIN_MS.memory : LOOK_AGAIN_MS.file): () => void {
  let stopped = false;
  let running = false;
  let timer: NodeJS.Timeout | null = null;
  let firesAtRealMs = Infinity;

  /** Fire in `delayMs` of real time, unless the timer already fires sooner. */
  const arm = (delayMs: number) => {
    if (stopped) return;
    const at = Date.now() + Math.max(0, Math.min(delayMs, lookAgainMs));
    if (timer && at >= firesAtRealMs) return;
    if (timer) clearTimeout(timer);
    firesAtRealMs = at;
    timer = setTimeout(fire, at - Date.now());
    timer.unref();
  };
  /** Real ms until the emulated clock reaches `dueAtMs` (Infinity while it is frozen short of it). */
  const delayUntil = (dueAtMs: number) => {
    const now = ctx.clock.nowMs();
    if (dueAtMs <= now) return 0;
    return ctx.clock.state().mode === 'frozen' ? Infinity : dueAtMs - now;
  };
  /** Arm for the earliest pending job after a pass (`delayAfterPass`). */
  const lookAgain = (pass: FinishedPass) => {
    let due: number | null = null;
    try {
      due = earliestPendingJob(ctx);
    } catch {
      // the database may be closing; look again later
      arm(lookAgainMs);
      return;
    }
    arm(delayAfterPass(pass, due, due === null ? Infinity : delayUntil(due), lookAgainMs));
  };
  function fire(): void {
    timer = null;
    firesAtRealMs = Infinity;
    if (stopped) return;
    if (running) return; // the pass going on looks again when it ends
    if (clockMoveUnderWay(ctx)) return; // no pass starts during a move: it runs what is due, then re-arms this timer (docs/decisions.md#scheduler-slices)
    running = true;
    const startedAtMs = ctx.clock.nowMs();
    void runDueJobsInSlices(ctx, () => stopped).then((ran) => {
      running = false;
      lookAgain({ ran, startedAtMs });
    });
  }

  // setImmediate-like first look: a session's clock is set after its sandbox opens (docs/sessions.md#how-fast)
  arm(0);
  ctx.runtime.get(jobsTimerSlot).wake = (dueAtMs) => {
    if (running) return; // the pass going on looks again when it ends
    if (dueAtMs === undefined) arm(0);
    else arm(delayUntil(dueAtMs));
  };
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    timer = null;
    ctx.runtime.get(jobsTimerSlot).wake = null;
  };
}

/** Jobs still to run: how many are due by the clock now, how many later, and when the next one is due (settle). */
export function pendingJobs(ctx: AppContext): { dueNow: number; later: number; nextDueMs: number | null } {
  const now = ctx.clock.nowMs();
  const row = prepared<{ due_now: number; later: number; next_due: number | null }>(
    ctx.db,
    `SELECT COUNT(*) FILTER (WHERE due_at_ms <= ?) AS due_now, COUNT(*) FILTER (WHERE due_at_ms > ?) AS later,
            MIN(due_at_ms) FILTER (WHERE due_at_ms > ?) AS next_due
     FROM jobs WHERE status = 'PENDING'`,
  ).get(now, now, now)!;
  return { dueNow: row.due_now, later: row.later, nextDueMs: row.next_due };
}
