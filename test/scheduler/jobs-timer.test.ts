import t from 'tap';
import { createContext } from '../../src/create-context.js';
import { createClock } from '../../src/lib/clock.js';
import { delayAfterPass, jobsTimerSlot, LOOK_AGAIN_MS, rearmJobsTimer, scheduleJob, startSchedulerTimer } from '../../src/scheduler/scheduler.js';
import { resetSandbox } from '../../src/emulator/reset.service.js';
import { openSandbox } from '../../src/sandbox.js';
import type { AppContext } from '../../src/context.js';
import { waitUntil } from '../helpers/wait.js';

// docs/decisions.md#scheduler-wake-up: the jobs timer fires when the earliest job comes due, woken by each job
// scheduled and each move of the clock. Every case here starts the timer with a look-again of 10 minutes, so a job
// that runs within the test's deadline was run by a wake-up, never by the safety look.
const NEVER_MS = 600_000;
const START_MS = Date.parse('2026-03-02T09:00:00.000Z');

function sandboxWith(mode: 'frozen' | 'realtime'): { ctx: AppContext; ran: string[]; stop: () => void } {
  const clock = createClock({ mode: 'frozen', atMs: START_MS });
  const ctx = createContext({ config: { logLevel: 'silent', db: ':memory:' }, clock });
  if (mode === 'realtime') clock.resume();
  const ran: string[] = [];
  ctx.jobHandlers = { ...ctx.jobHandlers, 'test:record': (_ctx, payload) => void ran.push(String(payload.label)) };
  const stop = startSchedulerTimer(ctx, NEVER_MS);
  return { ctx, ran, stop: () => (stop(), ctx.db.close()) };
}

const pending = (ctx: AppContext) => ctx.db.prepare("SELECT COUNT(*) FROM jobs WHERE status = 'PENDING' AND type = 'test:record'").pluck().get() as number;

t.test('a job scheduled while time flows runs when it comes due, not at a poll', async (t) => {
  const { ctx, ran, stop } = sandboxWith('realtime');
  t.teardown(stop);
  scheduleJob(ctx, 'test:record', ctx.clock.nowMs() + 150, { label: 'soon' });
  t.same(ran, [], 'not before it is due');
  await waitUntil(() => ran.length === 1, 'the job to run');
  t.same(ran, ['soon']);
  t.equal(pending(ctx), 0, 'recorded DONE');
});

t.test('a sooner job wakes a timer armed for a later one', async (t) => {
  const { ctx, ran, stop } = sandboxWith('realtime');
  t.teardown(stop);
  scheduleJob(ctx, 'test:record', ctx.clock.nowMs() + 3_600_000, { label: 'in an hour' });
  await new Promise((resolve) => setImmediate(resolve));
  scheduleJob(ctx, 'test:record', ctx.clock.nowMs() + 100, { label: 'soon' });
  await waitUntil(() => ran.length === 1, 'the sooner job');
  t.same(ran, ['soon'], 'the later one still waits');
  t.equal(pending(ctx), 1);
});

t.test('a frozen clock runs nothing by itself; resuming it arms the timer for what is pending', async (t) => {
  const { ctx, ran, stop } = sandboxWith('frozen');
  t.teardown(stop);
  scheduleJob(ctx, 'test:record', ctx.clock.nowMs() + 100, { label: 'after resume' });
  scheduleJob(ctx, 'test:record', ctx.clock.nowMs(), { label: 'due now' });
  await waitUntil(() => ran.length === 1, 'the job due now');
  t.same(ran, ['due now'], 'a job due at the frozen instant runs; the one 100 ms later waits for the clock');
  ctx.clock.resume();
  rearmJobsTimer(ctx); // as POST /_emulator/clock does after a resume (runDueJobs)
  await waitUntil(() => ran.length === 2, 'the job after the resume');
  t.same(ran, ['due now', 'after resume']);
});

t.test('after a reset the timer still wakes for new jobs (its slot is kept)', async (t) => {
  const { ctx, ran, stop } = sandboxWith('realtime');
  t.teardown(stop);
  scheduleJob(ctx, 'test:record', ctx.clock.nowMs() + 3_600_000, { label: 'before the reset' });
  resetSandbox(ctx);
  t.equal(pending(ctx), 0, 'the reset took the pending job');
  ctx.clock.resume(); // the reset put the clock back to its frozen start
  scheduleJob(ctx, 'test:record', ctx.clock.nowMs() + 100, { label: 'after the reset' });
  await waitUntil(() => ran.length === 1, 'the job after the reset');
  t.same(ran, ['after the reset']);
});

t.test('a job scheduled in a transaction that rolls back wakes the timer for nothing', async (t) => {
  const { ctx, ran, stop } = sandboxWith('realtime');
  t.teardown(stop);
  t.throws(() =>
    ctx.db.transaction(() => {
      scheduleJob(ctx, 'test:record', ctx.clock.nowMs() + 20, { label: 'rolled back' });
      throw new Error('refused');
    })(),
  );
  scheduleJob(ctx, 'test:record', ctx.clock.nowMs() + 200, { label: 'kept' });
  await waitUntil(() => ran.length === 1, 'the kept job');
  t.same(ran, ['kept'], 'only the committed job ran');
});

t.test('stopping the timer ends its wake-up; a sandbox opens with it and closes without it', async (t) => {
  const sandbox = openSandbox({ config: { logLevel: 'silent', db: ':memory:' } });
  const slot = sandbox.ctx.runtime.get(jobsTimerSlot);
  t.type(slot.wake, 'function', 'an open sandbox has a jobs timer');
  await sandbox.close();
  t.equal(slot.wake, null, 'a closed one has none');
  t.equal(LOOK_AGAIN_MS.memory, 1000, 'an in-memory sandbox looks again once a second at most');
  t.equal(LOOK_AGAIN_MS.file, 100, 'a database file, which other processes may write, every 100 ms');
});

// docs/decisions.md#scheduler-wake-up: the wait after a pass. A CI run on two busy cores once saw the timer fire a
// little before a job's due time: that pass ran nothing, the job came due before the timer looked again, and it was
// taken for a job held by another process's lock, so it waited for the look-again (10 minutes in this file's cases).
t.test('after a pass: a job that came due during it runs at once; one due before it that did not run waits', async (t) => {
  const look = 1000;
  const at = START_MS;
  t.equal(delayAfterPass({ ran: 0, startedAtMs: at - 2 }, at, 0, look), 0, 'came due during a pass that ran nothing: at once');
  t.equal(delayAfterPass({ ran: 0, startedAtMs: at }, at, 0, look), look, 'due when the pass started, and still pending after it ran nothing: held elsewhere, look again later');
  t.equal(delayAfterPass({ ran: 0, startedAtMs: at + 5 }, at, 0, look), look, 'overdue when the pass started: the same');
  t.equal(delayAfterPass({ ran: 3, startedAtMs: at + 5 }, at, 0, look), 0, 'a pass that ran jobs and left one due (the rest of a slice): at once');
  t.equal(delayAfterPass({ ran: 0, startedAtMs: at - 500 }, at, 120, look), 120, 'not due yet: when it comes due');
  t.equal(delayAfterPass({ ran: 0, startedAtMs: at }, null, Infinity, look), Infinity, 'nothing pending: no wake-up of its own (the timer caps it at the look-again)');
});
