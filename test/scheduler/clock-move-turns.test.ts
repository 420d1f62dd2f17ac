import t from 'tap';
import { buildTestApp, json } from '../helper.js';
import { createContext } from '../../src/create-context.js';
import { createClock } from '../../src/lib/clock.js';
import { advanceClockYielding, clockMoveUnderWay, holdSandbox, scheduleJob, SLICE_MAX_JOBS } from '../../src/scheduler/scheduler.js';
import type { AppContext } from '../../src/context.js';
import { waitUntil } from '../helpers/wait.js';

// docs/decisions.md#scheduler-slices: a move of the clock asked for by a request runs its jobs in slices with a turn of
// the event loop between two. Other sandboxes (and the health check) are answered meanwhile; the sandbox's own requests
// wait for the move's end and see the settled state. Nothing here depends on time: the checks count slices and turns.

const START_MS = Date.parse('2026-03-02T09:00:00.000Z');
const pendingOf = (ctx: AppContext) => ctx.db.prepare("SELECT COUNT(*) FROM jobs WHERE status = 'PENDING' AND type = 'test:record'").pluck().get() as number;

function withRecorder(ctx: AppContext): string[] {
  const ran: string[] = [];
  ctx.jobHandlers = { ...ctx.jobHandlers, 'test:record': (_ctx, payload) => void ran.push(String(payload.label)) };
  return ran;
}

t.test('a move yields after its first slice, holds the sandbox until its end, and runs every job in time order', async (t) => {
  const ctx = createContext({ config: { logLevel: 'silent', db: ':memory:' }, clock: createClock({ mode: 'frozen', atMs: START_MS }) });
  t.teardown(() => ctx.db.close());
  const ran = withRecorder(ctx);
  const count = SLICE_MAX_JOBS * 4 + 7;
  // scheduled in reverse time order: the run must follow due times, not ids
  for (let i = count - 1; i >= 0; i -= 1) scheduleJob(ctx, 'test:record', START_MS + 1_000 + i, { label: String(i) });
  const move = advanceClockYielding(ctx, 60_000);
  t.ok(clockMoveUnderWay(ctx), 'the sandbox is held once the move has started');
  t.ok(ran.length > 0 && ran.length <= SLICE_MAX_JOBS, `one slice ran before the first turn (${ran.length} jobs)`);
  t.ok(pendingOf(ctx) > 0, 'jobs are still pending at the first turn');
  const ranJobs = await move;
  t.equal(ranJobs, count, 'the answer counts every job');
  t.equal(pendingOf(ctx), 0);
  t.same(ran, Array.from({ length: count }, (_, i) => String(i)), 'in due-time order');
  t.equal(ctx.clock.nowMs(), START_MS + 60_000, 'the clock ends at the target');
  t.equal(clockMoveUnderWay(ctx), null, 'the hold is released');
});

t.test('a hold taken during a move (the test kit\'s reset, snapshot and restore, a restore by name) starts once the move has ended', async (t) => {
  const ctx = createContext({ config: { logLevel: 'silent', db: ':memory:' }, clock: createClock({ mode: 'frozen', atMs: START_MS }) });
  t.teardown(() => ctx.db.close());
  withRecorder(ctx);
  for (let i = 0; i < SLICE_MAX_JOBS * 3; i += 1) scheduleJob(ctx, 'test:record', START_MS + 1_000 + i, { label: String(i) });
  const move = advanceClockYielding(ctx, 60_000);
  t.ok(pendingOf(ctx) > 0, 'the move is under way');
  const seen = await holdSandbox(ctx, async () => ({ pending: pendingOf(ctx), nowMs: ctx.clock.nowMs() }));
  t.same(seen, { pending: 0, nowMs: START_MS + 60_000 }, 'every job of the move ran, and the clock is at the target, before the hold began');
  await move;
  t.equal(clockMoveUnderWay(ctx), null, 'and both are let go');
  t.equal(await holdSandbox(ctx, async () => 'at once'), 'at once', 'with nothing under way, a hold starts at once');
});

t.test('two moves of one sandbox from inside the process take turns instead of interleaving', async (t) => {
  const ctx = createContext({ config: { logLevel: 'silent', db: ':memory:' }, clock: createClock({ mode: 'frozen', atMs: START_MS }) });
  t.teardown(() => ctx.db.close());
  const ran = withRecorder(ctx);
  for (let i = 0; i < SLICE_MAX_JOBS * 3; i += 1) scheduleJob(ctx, 'test:record', START_MS + 1_000 + i, { label: `a${i}` });
  scheduleJob(ctx, 'test:record', START_MS + 120_000, { label: 'second' });
  const first = advanceClockYielding(ctx, 60_000);
  const second = advanceClockYielding(ctx, 60_000);
  t.same(await Promise.all([first, second]), [SLICE_MAX_JOBS * 3, 1]);
  t.equal(ran.at(-1), 'second', 'the second move ran after every job of the first');
  t.equal(ctx.clock.nowMs(), START_MS + 120_000);
});

t.test('a session ended while its clock moves: the move stops between slices and answers 404', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const created = await sandbox.app.inject({ method: 'POST', url: '/_emulator/sessions', payload: {} });
  t.equal(created.statusCode, 201);
  const session = sandbox.sessions.get(json(created).id)!;
  const ctx = session.sandbox.ctx;
  withRecorder(ctx);
  for (let i = 0; i < SLICE_MAX_JOBS * 20; i += 1) scheduleJob(ctx, 'test:record', ctx.clock.nowMs() + 1_000 + i, { label: String(i) });
  const moving = sandbox.app.inject({ method: 'POST', url: `/_sessions/${session.id}/_emulator/clock`, payload: { advanceMs: 60_000 } });
  while (!clockMoveUnderWay(ctx)) await new Promise((resolve) => setImmediate(resolve));
  // requests of the session queued behind the move
  const prefix = `/_sessions/${session.id}`;
  const queued = [
    sandbox.app.inject({ method: 'GET', url: `${prefix}/_emulator/clock` }),
    sandbox.app.inject({ method: 'POST', url: `${prefix}/_emulator/clock`, payload: { advanceMs: 1 } }),
    sandbox.app.inject({ method: 'POST', url: `${prefix}/_emulator/reset` }),
  ];
  await new Promise((resolve) => setImmediate(resolve));
  // what ending the session does to a request still inside after its few seconds of wait (src/sessions/sessions.registry.ts)
  ctx.db.close();
  const answer = await moving;
  t.equal(answer.statusCode, 404);
  t.match(json(answer).message, /ended while its clock moved/);
  for (const [what, waited] of [['a clock read', await queued[0]!], ['a second move', await queued[1]!], ['a reset', await queued[2]!]] as const) {
    t.equal(waited.statusCode, 404, `${what} that waited for the move: 404, not a 500 on the closed database`);
    t.match(json(waited).message, /ended while its clock moved/);
  }
});

t.test('a move that fails still re-arms the jobs timer it held back', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const created = await sandbox.app.inject({ method: 'POST', url: '/_emulator/sessions', payload: {} });
  const ctx = sandbox.sessions.get(json(created).id)!.sandbox.ctx;
  const ran = withRecorder(ctx);
  for (let i = 0; i < SLICE_MAX_JOBS * 2; i += 1) scheduleJob(ctx, 'test:record', ctx.clock.nowMs() + 1_000 + i, { label: String(i) });
  const afterJobsRan = ctx.afterJobsRan;
  ctx.afterJobsRan = () => {
    throw new Error('a failure at the end of the move');
  };
  await t.rejects(advanceClockYielding(ctx, 60_000), /a failure at the end of the move/);
  ctx.afterJobsRan = afterJobsRan;
  t.equal(clockMoveUnderWay(ctx), null, 'the hold is released');
  // a job due now, written without a wake-up (as another process writing the same file would): only a live timer runs it
  ctx.db.prepare("INSERT INTO jobs (type, due_at_ms, payload, created_at_ms) VALUES ('test:record', ?, '{\"label\":\"late\"}', ?)").run(ctx.clock.nowMs(), ctx.clock.nowMs());
  await waitUntil(() => ran.includes('late'), 'the timer to run the job written after the failed move');
  t.ok(ran.includes('late'));
});

t.test('over the app: while the root clock moves, a session and the health check are answered; the root waits', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const ran = withRecorder(sandbox.ctx);
  const created = await sandbox.app.inject({ method: 'POST', url: '/_emulator/sessions', payload: {} });
  const sessionId = json(created).id as string;
  // 3,000 jobs are at least 47 slices, so at least 46 turns: far more than an injected GET needs to be answered
  const count = 3_000;
  for (let i = 0; i < count; i += 1) scheduleJob(sandbox.ctx, 'test:record', sandbox.ctx.clock.nowMs() + 1_000 + i, { label: String(i) });
  const order: string[] = [];
  const jobsRunWhenAnswered: Record<string, number> = {};
  const settled = <R>(name: string, request: Promise<R>): Promise<R> =>
    request.then((response) => {
      order.push(name);
      jobsRunWhenAnswered[name] = ran.length;
      return response;
    });
  const move = settled('root clock move', sandbox.app.inject({ method: 'POST', url: '/_emulator/clock', payload: { advanceMs: 86_400_000 } }));
  while (!clockMoveUnderWay(sandbox.ctx)) await new Promise((resolve) => setImmediate(resolve));
  const rootRead = settled('root clock read', sandbox.app.inject({ method: 'GET', url: '/_emulator/clock' }));
  const refused = settled('root bad request', sandbox.app.inject({ method: 'POST', url: '/_emulator/clock', payload: { advanceMs: -1 } }));
  const sessionRead = settled('session clock read', sandbox.app.inject({ method: 'GET', url: `/_sessions/${sessionId}/_emulator/clock` }));
  const health = settled('health', sandbox.app.inject({ method: 'GET', url: '/_emulator/health' }));
  const sessionList = settled('session list', sandbox.app.inject({ method: 'GET', url: '/_emulator/sessions' }));
  const [moved, read, other, healthy, listed, bad] = await Promise.all([move, rootRead, sessionRead, health, sessionList, refused]);
  t.equal(moved.statusCode, 200);
  t.equal(json(moved).jobsRun, count);
  t.equal(ran.length, count);
  t.equal(other.statusCode, 200);
  t.equal(healthy.statusCode, 200);
  t.ok(order.indexOf('session clock read') < order.indexOf('root clock move'), `a session was answered during the root's move (${order.join(', ')})`);
  t.ok(order.indexOf('health') < order.indexOf('root clock move'), 'and the health check');
  t.ok(jobsRunWhenAnswered['session clock read']! < count, `the session's answer came with root jobs still to run (${jobsRunWhenAnswered['session clock read']} of ${count} run)`);
  t.equal(jobsRunWhenAnswered['root clock read'], count, "the root's own read waited for every job of the move");
  t.equal(bad.statusCode, 400);
  t.equal(jobsRunWhenAnswered['root bad request'], count, 'so did a request its validation refuses: nothing of it runs during the move');
  t.equal(listed.statusCode, 200);
  t.ok(jobsRunWhenAnswered['session list']! < count, "the root's session routes are not held (they read nothing the move changes)");
  t.equal(read.statusCode, 200);
  t.equal(json(read).now, json(moved).now, 'and saw the settled clock');
});
