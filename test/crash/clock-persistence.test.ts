import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { waitUntil } from '../helpers/wait.js';
import Database from 'better-sqlite3';
import { createContext } from '../../src/create-context.js';
import { planClockStart } from '../../src/db/clock-store.js';
import { ensureBuilt, signedCall, startServerProcess, type ServerProcess } from '../helpers/server-process.js';

// The emulated clock never runs backwards, across restarts included (docs/configuration.md#clock): every
// move is stored in the database file; a later --clock moves it forward at start-up, running the jobs due on
// the way at their own due times, and is stored; an earlier one is ignored with one warning line.

const T0 = '2026-03-02T09:00:00.000Z';
const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();

function tempDb(t: Test): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'sandbox-clock-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'state.db');
}

const signed = signedCall;

async function control(server: ServerProcess, method: string, target: string, body?: unknown): Promise<any> {
  const response = await fetch(`${server.url}${target}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status !== 200) throw new Error(`${method} ${target}: ${response.status} ${await response.text()}`);
  return response.json();
}

const clockOf = (server: ServerProcess) => control(server, 'GET', '/_emulator/clock');

/** A simulated ACH deposit (settles `depositCompletionMs` = 1 s after it is made); returns its id. */
async function deposit(server: ServerProcess, reference: string): Promise<string> {
  const answer = await signed(server, 'POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '12.34', reference });
  if (answer.status !== 202) throw new Error(`deposit: ${answer.status} ${JSON.stringify(answer.body)}`);
  return /Deposit (txn_[a-z0-9]+)/.exec(answer.body.message)![1]!;
}

const warnings = (server: ServerProcess) => server.output().split('\n').filter((line) => /warning: --clock/.test(line));

t.before(ensureBuilt);

t.test('frozen: a later --clock is stored and runs the jobs due on the way at their due times; an earlier one is ignored with one warning', async (t) => {
  const db = tempDb(t);
  let server = await startServerProcess({ db, clock: T0 });
  t.teardown(() => server.kill());
  t.match(await clockOf(server), { now: T0, mode: 'frozen' });
  const pending = await deposit(server, 'CLOCK-1');
  t.match((await signed(server, 'GET', `/v1/transactions/${pending}`)).body, { status: 'PENDING', createdAt: T0 });
  t.match(await control(server, 'POST', '/_emulator/clock', { advanceMs: 500 }), { now: at(500), jobsRun: 0 });
  await server.stop();

  // the same (now earlier) --clock: ignored, one warning line naming both instants
  server = await startServerProcess({ db, clock: T0 });
  t.match(await clockOf(server), { now: at(500), mode: 'frozen' }, 'resumes the stored instant');
  t.equal(warnings(server).length, 1, 'one warning line');
  t.match(warnings(server)[0], new RegExp(`--clock / CLOCK ${T0} is earlier than the clock stored in the database, ${at(500)}`));
  t.match((await signed(server, 'GET', `/v1/transactions/${pending}`)).body, { status: 'PENDING' }, 'nothing ran');
  await server.stop();

  // a later --clock: moves forward, and the deposit settles at its own due time (T0 + 1 s), not at T0 + 1 h
  server = await startServerProcess({ db, clock: at(3_600_000) });
  t.same(warnings(server), [], 'no warning when moving forward');
  t.match(await clockOf(server), { now: at(3_600_000), mode: 'frozen' });
  const settled = (await signed(server, 'GET', `/v1/transactions/${pending}`)).body;
  t.match(settled, { status: 'COMPLETED', updatedAt: at(1000) }, 'settled at its due time');
  await server.stop();

  // the later --clock was stored: a restart without --clock (or with the old one) does not go back
  server = await startServerProcess({ db, clock: null });
  t.match(await clockOf(server), { now: at(3_600_000), mode: 'frozen' }, 'stored, so the next restart resumes it');
  // transactions created in between settle on the next move
  const later = await deposit(server, 'CLOCK-2');
  t.match(await control(server, 'POST', '/_emulator/clock', { advanceMs: 1000 }), { now: at(3_601_000), jobsRun: 1 });
  t.match((await signed(server, 'GET', `/v1/transactions/${later}`)).body, { status: 'COMPLETED', createdAt: at(3_600_000), updatedAt: at(3_601_000) });
  await server.stop();

  server = await startServerProcess({ db, clock: T0 });
  t.match(await clockOf(server), { now: at(3_601_000) }, 'still never behind the stored clock');
  t.equal(warnings(server).length, 1);
});

t.test('freeze, resume and advance are each stored; a flowing clock resumes flowing, never behind the mark', async (t) => {
  const db = tempDb(t);
  let server = await startServerProcess({ db, clock: T0 });
  t.teardown(() => server.kill());
  t.match(await control(server, 'POST', '/_emulator/clock', { freezeAt: at(60_000) }), { now: at(60_000), mode: 'frozen' });
  await server.kill(); // no shutdown hook: the move itself was stored
  server = await startServerProcess({ db, clock: T0 });
  t.match(await clockOf(server), { now: at(60_000), mode: 'frozen' }, 'freezeAt survives a SIGKILL');

  const resumed = await control(server, 'POST', '/_emulator/clock', { realtime: true });
  t.match(resumed, { mode: 'realtime' });
  t.ok(Date.parse(resumed.now) >= Date.parse(at(60_000)), '{ realtime: true } continues from the frozen instant');
  const flowing = await clockOf(server);
  await server.kill();

  server = await startServerProcess({ db, clock: T0 });
  const after = await clockOf(server);
  t.equal(after.mode, 'realtime', 'a flowing clock resumes flowing (the earlier --clock is ignored)');
  t.ok(Date.parse(after.now) >= Date.parse(flowing.now), `not behind the last reading (${after.now} >= ${flowing.now})`);
  t.equal(warnings(server).length, 1, 'one warning line');
  await server.stop();

  // the wall clock stepped back while the server was stopped (the stored offset would now read 1 h earlier
  // than what was reached): the high-water mark holds the clock
  const file = new Database(db);
  const mark = Number((file.prepare("SELECT value FROM meta WHERE key = 'clock_high_water_ms'").get() as { value: string }).value);
  t.ok(mark >= Date.parse(flowing.now), 'the graceful stop recorded the instant reached');
  const state = JSON.parse((file.prepare("SELECT value FROM meta WHERE key = 'clock_state'").get() as { value: string }).value);
  t.equal(state.mode, 'realtime');
  file.prepare("UPDATE meta SET value = ? WHERE key = 'clock_state'").run(JSON.stringify({ mode: 'realtime', offsetMs: state.offsetMs - 3_600_000 }));
  file.close();
  server = await startServerProcess({ db, clock: null });
  const held = await clockOf(server);
  t.equal(held.mode, 'realtime');
  t.ok(Date.parse(held.now) >= mark, `held at or after the mark (${held.now} >= ${new Date(mark).toISOString()})`);
  t.same(warnings(server), [], 'no --clock, no warning');
});

t.test('a flowing clock records its high-water mark about once a second, not per request', async (t) => {
  const db = tempDb(t);
  const server = await startServerProcess({ db, clock: 'realtime' });
  t.teardown(() => server.kill());
  const file = new Database(db, { readonly: true });
  t.teardown(() => file.close());
  const readMark = () => Number((file.prepare("SELECT value FROM meta WHERE key = 'clock_high_water_ms'").get() as { value: string }).value);
  const first = readMark();
  // poll (generous bound) rather than sleep a fixed time: a loaded machine may run the once-a-second write late
  await waitUntil(() => readMark() - first >= 1000, 'the high-water mark to move');
  const second = readMark();
  t.ok(second - first >= 1000, `the mark moved with time (${second - first} ms)`);
  // per-request writes would show a new mark after nearly every request; once a second, at most one per
  // second of the burst (plus the one in flight when it began), however slow a loaded machine makes it
  const marks = new Set<number>();
  const burstStarted = Date.now();
  for (let i = 0; i < 20; i += 1) {
    await clockOf(server);
    marks.add(readMark());
  }
  const burstMs = Date.now() - burstStarted;
  t.ok(marks.size <= Math.ceil(burstMs / 1000) + 1, `requests do not write it (${marks.size} marks seen in a ${burstMs} ms burst of 20)`);
});

t.test('--clock realtime later than a frozen stored clock moves forward to now, running due jobs at their due times', async (t) => {
  const db = tempDb(t);
  let server = await startServerProcess({ db, clock: T0 });
  t.teardown(() => server.kill());
  const pending = await deposit(server, 'CLOCK-RT');
  await server.stop();
  const before = Date.now();
  server = await startServerProcess({ db, clock: 'realtime' });
  const clock = await clockOf(server);
  t.equal(clock.mode, 'realtime');
  t.ok(Date.parse(clock.now) >= before, 'at real time');
  t.ok(Math.abs(clock.offsetMs) < 1000, `offset about 0 (${clock.offsetMs})`);
  t.match((await signed(server, 'GET', `/v1/transactions/${pending}`)).body, { status: 'COMPLETED', updatedAt: at(1000) });
  t.same(warnings(server), []);
});

t.test('reset goes back to the --clock start (a new sandbox) and is stored', async (t) => {
  const db = tempDb(t);
  let server = await startServerProcess({ db, clock: T0 });
  t.teardown(() => server.kill());
  await control(server, 'POST', '/_emulator/clock', { advanceMs: 86_400_000 });
  t.match(await control(server, 'POST', '/_emulator/reset'), { status: 'reset' });
  t.match(await clockOf(server), { now: T0, mode: 'frozen' });
  await control(server, 'POST', '/_emulator/clock', { advanceMs: 2000 });
  await server.kill();
  server = await startServerProcess({ db, clock: null });
  t.match(await clockOf(server), { now: at(2000), mode: 'frozen' }, 'the restart resumes the reset sandbox\'s clock');
});

t.test('planClockStart', async (t) => {
  const wall = Date.parse('2026-11-23T12:00:00.000Z');
  const frozen = (ms: number, mark?: number) => ({ state: { mode: 'frozen' as const, frozenAtMs: ms }, highWaterMs: mark });
  t.same(planClockStart(undefined, undefined, wall), { fromMs: wall, toMs: wall, then: { mode: 'realtime', offsetMs: 0 } }, 'new file, no --clock: real time');
  t.same(planClockStart(undefined, T0, wall), { fromMs: Date.parse(T0), toMs: Date.parse(T0), then: { mode: 'frozen' } });
  t.same(planClockStart(frozen(Date.parse(T0)), undefined, wall), { fromMs: Date.parse(T0), toMs: Date.parse(T0), then: { mode: 'frozen' } }, 'no --clock resumes');
  t.same(planClockStart(frozen(Date.parse(T0)), 'realtime', wall), { fromMs: Date.parse(T0), toMs: wall, then: { mode: 'realtime', offsetMs: 0 } });
  t.same(planClockStart(frozen(Date.parse(T0), Date.parse(T0) + 5), T0, wall).toMs, Date.parse(T0) + 5, 'the mark wins over an older frozen state');
  const ignored = planClockStart(frozen(Date.parse(T0) + 1), T0, wall);
  t.match(ignored, { toMs: Date.parse(T0) + 1, then: { mode: 'frozen' }, warning: /2026-03-02T09:00:00.000Z is earlier than .* 2026-03-02T09:00:00.001Z/ });
  t.equal(planClockStart(frozen(Date.parse(T0)), T0, wall).warning, undefined, 'the same instant: no warning');
  const ahead = { state: { mode: 'realtime' as const, offsetMs: 3_600_000 }, highWaterMs: wall + 3_000_000 };
  t.match(planClockStart(ahead, 'realtime', wall), { fromMs: wall + 3_000_000, toMs: wall + 3_600_000, then: { mode: 'realtime', offsetMs: 3_600_000 }, warning: /realtime \(2026-11-23T12:00:00.000Z\) is earlier/ });
  const stepped = { state: { mode: 'realtime' as const, offsetMs: 0 }, highWaterMs: wall + 10_000 };
  t.same(planClockStart(stepped, undefined, wall), { fromMs: wall + 10_000, toMs: wall + 10_000, then: { mode: 'realtime', offsetMs: 10_000 } }, 'a wall clock stepped back is held at the mark');
  const old = { state: { mode: 'realtime' as const, offsetMs: -1000 }, highWaterMs: undefined };
  t.same(planClockStart(old, undefined, wall), { fromMs: wall - 1000, toMs: wall - 1000, then: { mode: 'realtime', offsetMs: -1000 } }, 'a file without a mark');
});

t.test('in process: the context resumes the stored clock', async (t) => {
  const db = tempDb(t);
  const config = { db, clock: T0, logLevel: 'silent' as const };
  const first = createContext({ config });
  first.clock.advance(5000);
  first.db.close();
  const lines: string[] = [];
  const second = createContext({ config, warn: (line) => lines.push(line) });
  t.equal(second.clock.nowIso(), at(5000));
  t.equal(lines.length, 1);
  second.clock.restoreInitial();
  t.equal(second.clock.nowIso(), T0, 'restoreInitial (reset) goes to the --clock start');
  second.db.close();
  const memory = createContext({ config: { clock: T0, logLevel: 'silent' } });
  t.equal(memory.clock.nowIso(), T0, 'a fresh in-memory database starts at the --clock instant');
  memory.db.close();
});
