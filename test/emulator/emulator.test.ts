import t, { type Test } from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import { errorBodySchema } from '../../src/core/errors.js';
import { scheduleJob } from '../../src/scheduler/scheduler.js';
import { stateTables } from '../../src/db/migrate.js';
import { resetState } from '../../src/fixtures/fixtures.seed.js';
import { sessionWebhookUrlSlot } from '../../src/domains/webhooks/webhooks.endpoints.js';
import { VERSION } from '../../src/version.js';
import { CREDENTIALS, START, buildTestApp, json, type Identity, type TestApp } from '../helper.js';

// The control plane (docs/control-plane.md): health, clock, reset and the ADMIN_TOKEN guard.

const MULTI: Identity = { apiKey: CREDENTIALS.multi.apiKey, secret: CREDENTIALS.multi.secret };
const at = (offsetMs: number) => new Date(Date.parse(START) + offsetMs).toISOString();

function expectError(t: Test, response: LightMyRequestResponse, status: number, errorCode: string | undefined): Record<string, any> {
  t.equal(response.statusCode, status, `status ${status}`);
  const body = json(response);
  t.ok(errorBodySchema.safeParse(body).success, 'interface 7.1 error body');
  t.equal(body.errorCode, errorCode);
  return body;
}

const clock = (sandbox: TestApp, payload?: unknown, headers: Record<string, string> = {}) =>
  sandbox.app.inject({
    method: payload === undefined ? 'GET' : 'POST',
    url: '/_emulator/clock',
    headers: payload === undefined ? headers : { 'content-type': 'application/json', ...headers },
    payload: payload === undefined ? undefined : typeof payload === 'string' ? payload : JSON.stringify(payload),
  });

t.test('health', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const response = await sandbox.app.inject({ method: 'GET', url: '/_emulator/health' });
  t.equal(response.statusCode, 200);
  t.same(json(response), { status: 'ok', now: START, version: VERSION });
});

t.test('clock: read, freeze, advance, realtime', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);

  const initial = json(await clock(sandbox));
  t.match(initial, { now: START, mode: 'frozen' });
  t.type(initial.offsetMs, 'number');

  const advanced = await clock(sandbox, { advanceMs: 1500 });
  t.equal(advanced.statusCode, 200);
  t.match(json(advanced), { now: at(1500), mode: 'frozen', jobsRun: 0 });
  t.equal(json(await clock(sandbox)).now, at(1500), 'a frozen clock stays put between requests');

  const frozen = await clock(sandbox, { freezeAt: '2026-03-02T00:00:00+02:00' });
  t.equal(frozen.statusCode, 200);
  t.match(json(frozen), { now: '2026-03-01T22:00:00.000Z', mode: 'frozen' }, 'an offset is accepted and normalised to UTC');

  const backwards = await clock(sandbox, { freezeAt: START });
  const body = expectError(t, backwards, 400, undefined);
  t.match(body.validationErrors, [{ type: 'InvalidValue', fieldRef: 'freezeAt' }]);
  t.match(body.message, /forward/);
  t.equal(json(await clock(sandbox)).now, '2026-03-01T22:00:00.000Z', 'a refused change changes nothing');

  t.equal((await clock(sandbox, { advanceMs: 0 })).statusCode, 200, 'advancing by 0 is allowed');

  const before = Date.parse(json(await clock(sandbox)).now);
  const realtime = await clock(sandbox, { realtime: true });
  t.equal(realtime.statusCode, 200);
  t.equal(json(realtime).mode, 'realtime');
  t.ok(Math.abs(Date.parse(json(realtime).now) - before) < 5000, 'time flows on from the emulated instant, not from the wall clock');
  await new Promise((resolve) => setTimeout(resolve, 30));
  t.ok(Date.parse(json(await clock(sandbox)).now) > Date.parse(json(realtime).now), 'and it flows');

  const advancedFlowing = json(await clock(sandbox, { advanceMs: 3_600_000 }));
  t.equal(advancedFlowing.mode, 'realtime', 'advancing a flowing clock keeps it flowing');
  t.ok(Date.parse(advancedFlowing.now) - before >= 3_600_000);
  t.equal(json(await clock(sandbox, { freezeAt: '2027-01-01T00:00:00.000Z' })).mode, 'frozen');
});

t.test('clock: bad bodies give 400 with the error body', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const cases: Array<[unknown, string | undefined]> = [
    [{}, undefined],
    [{ advanceMs: -1 }, 'advanceMs'],
    [{ advanceMs: 1.5 }, 'advanceMs'],
    [{ advanceMs: '1000' }, undefined],
    [{ advanceMs: 400 * 24 * 3600 * 1000 }, 'advanceMs'],
    [{ freezeAt: 'tomorrow' }, 'freezeAt'],
    [{ freezeAt: '2026-03-02' }, 'freezeAt'],
    [{ realtime: false }, undefined],
    [{ advanceMs: 1000, realtime: true }, undefined],
    [[], undefined],
    ['"advance"', undefined],
  ];
  for (const [payload, fieldRef] of cases) {
    const response = await clock(sandbox, typeof payload === 'string' ? payload : payload);
    const body = expectError(t, response, 400, undefined);
    t.ok(body.validationErrors.length > 0, JSON.stringify(payload));
    if (fieldRef) t.equal(body.validationErrors[0].fieldRef, fieldRef, `${JSON.stringify(payload)} names ${fieldRef}`);
  }
  const empty = json(await clock(sandbox, {}));
  t.match(empty.message, /freezeAt.*advanceMs.*realtime/, 'says what is accepted');
  const unknownField = json(await clock(sandbox, { nothing: true }));
  t.match(unknownField.validationErrors, [{ type: 'InvalidValue', fieldRef: 'nothing' }]);
  const noBody = await sandbox.app.inject({ method: 'POST', url: '/_emulator/clock' });
  t.match(expectError(t, noBody, 400, undefined).validationErrors, [{ type: 'MissingRequestBody' }]);
  t.equal(json(await clock(sandbox)).now, START, 'no bad request moved the clock');
});

t.test('advancing runs due jobs in time order at their due times', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const seen: Array<{ label: string; at: string }> = [];
  sandbox.ctx.jobHandlers = {
    ...sandbox.ctx.jobHandlers,
    'test:record': (ctx, payload) => {
      seen.push({ label: String(payload.label), at: ctx.clock.nowIso() });
    },
    // a job that schedules a follow-up inside the same advance
    'test:chain': (ctx, payload) => {
      seen.push({ label: String(payload.label), at: ctx.clock.nowIso() });
      scheduleJob(ctx, 'test:record', ctx.clock.nowMs() + 500, { label: `${String(payload.label)}+500` });
    },
    'test:fail': () => {
      throw new Error('this job fails on purpose');
    },
  };
  const base = Date.parse(START);
  scheduleJob(sandbox.ctx, 'test:record', base + 3000, { label: 'c' });
  scheduleJob(sandbox.ctx, 'test:record', base + 1000, { label: 'a' });
  scheduleJob(sandbox.ctx, 'test:fail', base + 1500, {});
  scheduleJob(sandbox.ctx, 'test:chain', base + 2000, { label: 'b' });
  scheduleJob(sandbox.ctx, 'test:record', base + 1000, { label: 'a-second' });
  scheduleJob(sandbox.ctx, 'test:record', base + 10_000, { label: 'late' });

  const response = await clock(sandbox, { advanceMs: 5000 });
  t.equal(response.statusCode, 200);
  t.same(seen, [
    { label: 'a', at: at(1000) },
    { label: 'a-second', at: at(1000) },
    { label: 'b', at: at(2000) },
    { label: 'b+500', at: at(2500) },
    { label: 'c', at: at(3000) },
  ]);
  t.match(json(response), { now: at(5000), jobsRun: 6 }, 'the failing job counts as run and does not stop the queue');
  const failed = sandbox.ctx.db.prepare("SELECT status, last_error FROM jobs WHERE type = 'test:fail'").get() as { status: string; last_error: string };
  t.same(failed, { status: 'FAILED', last_error: 'this job fails on purpose' });

  const frozen = await clock(sandbox, { freezeAt: at(10_000) });
  t.match(json(frozen), { now: at(10_000), jobsRun: 1 }, 'freezing forward runs the jobs due on the way, up to and including the instant');
  t.same(seen.at(-1), { label: 'late', at: at(10_000) });
  const pending = sandbox.ctx.db.prepare("SELECT COUNT(*) AS n FROM jobs WHERE status = 'PENDING'").get() as { n: number };
  t.equal(pending.n, 0);
});

t.test('reset restores the fixtures', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const reset = () => sandbox.app.inject({ method: 'POST', url: '/_emulator/reset' });
  const createUser = () => sandbox.request('POST', '/v1/auth/users', { externalId: 'reset-me', type: 'PERSON', name: 'Reset Me' }, MULTI);
  const accountsBefore = (await sandbox.request('GET', '/v1/accounts')).body;

  const first = await createUser();
  t.equal(first.statusCode, 201);
  t.equal((await createUser()).statusCode, 200, 'exists before the reset');
  sandbox.ctx.jobHandlers = { ...sandbox.ctx.jobHandlers, 'test:noop': () => undefined };
  scheduleJob(sandbox.ctx, 'test:noop', Date.parse(START) + 60_000, {});
  t.equal((await clock(sandbox, { advanceMs: 5000 })).statusCode, 200);

  const response = await reset();
  t.equal(response.statusCode, 200);
  t.equal(json(response).status, 'reset');
  t.type(json(response).durationMs, 'number');

  const count = sandbox.ctx.db.prepare("SELECT COUNT(*) AS n FROM users WHERE external_id = 'reset-me'").get() as { n: number };
  t.equal(count.n, 0, 'the user is gone');
  const jobs = sandbox.ctx.db.prepare('SELECT COUNT(*) AS n FROM jobs').get() as { n: number };
  t.equal(jobs.n, 0, 'scheduled jobs are gone');
  t.equal(json(await clock(sandbox)).now, START, 'the clock is back at its start');
  t.equal((await sandbox.request('GET', '/v1/accounts')).body, accountsBefore, 'fixture accounts are back as they were');

  const again = await createUser();
  t.equal(again.statusCode, 201, 'created anew');
  t.equal(again.body, first.body, 'the id sequence restarts: the same request gives the same id and body');

  // A reset stays under 50 ms on the default fixtures (docs/decisions.md#reset). Wall time on a busy two-core machine
  // (test files run in parallel) swings from 10 to 90 ms for the same work, so the check uses the CPU time this process
  // spends on the fastest of five resets (about 12 ms today); a reset that does too much still fails it.
  const cpuMs: number[] = [];
  for (let i = 0; i < 5; i += 1) {
    const before = process.cpuUsage();
    t.equal((await reset()).statusCode, 200);
    const used = process.cpuUsage(before);
    cpuMs.push((used.user + used.system) / 1000);
  }
  t.ok(Math.min(...cpuMs) < 50, `reset under 50 ms of CPU (fastest of five: ${Math.min(...cpuMs).toFixed(1)} ms)`);
});

t.test('a reset puts back exactly the rows seeding the fixtures gives, whatever happened and whenever', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const { ctx } = sandbox;
  const reset = () => sandbox.app.inject({ method: 'POST', url: '/_emulator/reset' });
  // every state table and sqlite_sequence, row by row
  const dump = () =>
    Object.fromEntries(
      [...stateTables(ctx.db), 'sqlite_sequence'].map((table) => [
        table,
        (ctx.db.prepare(`SELECT * FROM "${table}"`).raw().all() as unknown[][]).map((row) => JSON.stringify(row)).sort(),
      ]),
    );
  const busy = async (round: number) => {
    t.equal((await sandbox.request('POST', '/v1/auth/users', { externalId: `reset-${round}`, type: 'PERSON', name: 'Reset Me' }, MULTI)).statusCode, 201);
    const deposit = await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '12.34', reference: `r${round}` });
    t.equal(deposit.statusCode, 202);
    t.equal((await clock(sandbox, { advanceMs: 3_600_000 })).statusCode, 200, 'an hour later: the deposit settles, jobs and events run');
  };

  t.equal((await reset()).statusCode, 200, 'the first reset seeds the fixtures (and keeps their rows)');
  const seeded = dump();
  await busy(1);
  t.not(JSON.stringify(dump()), JSON.stringify(seeded), 'the state moved');
  t.equal((await reset()).statusCode, 200, 'a later reset puts the kept rows back');
  t.same(dump(), seeded, 'every table as the seeding left it, ids and sequences included');

  // the same rows as seeding again from scratch, an hour of real time and a moved clock later
  await busy(2);
  resetState(ctx);
  ctx.clock.restoreInitial();
  t.same(dump(), seeded, 'seeding from scratch gives the very rows a reset puts back');

  // a session's webhook URL is part of what the fixtures seed: a reset after it changed seeds it
  ctx.runtime.set(sessionWebhookUrlSlot, 'http://127.0.0.1:9/session-hooks');
  t.equal((await reset()).statusCode, 200);
  t.equal(ctx.db.prepare("SELECT webhook_url FROM programmes WHERE id = 'prg_sandbox'").pluck().get(), 'http://127.0.0.1:9/session-hooks');
  t.equal((await reset()).statusCode, 200);
  t.equal(ctx.db.prepare("SELECT webhook_url FROM programmes WHERE id = 'prg_sandbox'").pluck().get(), 'http://127.0.0.1:9/session-hooks', 'and keeps it on the next reset');
});

t.test('ADMIN_TOKEN guards the control plane (docs/decisions.md#control-plane-open)', async (t) => {
  const sandbox = await buildTestApp({ config: { adminToken: 'admin-secret-token' } });
  t.teardown(sandbox.close);

  t.equal((await sandbox.app.inject({ method: 'GET', url: '/_emulator/health' })).statusCode, 200, 'health stays open for container checks');
  expectError(t, await clock(sandbox), 401, 'UNAUTHORIZED');
  expectError(t, await clock(sandbox, undefined, { authorization: 'Bearer wrong-token' }), 401, 'UNAUTHORIZED');
  expectError(t, await clock(sandbox, undefined, { authorization: 'Bearer admin-secret-token-and-more' }), 401, 'UNAUTHORIZED');
  expectError(t, await sandbox.app.inject({ method: 'POST', url: '/_emulator/reset' }), 401, 'UNAUTHORIZED');
  expectError(t, await clock(sandbox, { advanceMs: 1000 }), 401, 'UNAUTHORIZED');
  t.equal(json(await clock(sandbox, undefined, { authorization: 'Bearer admin-secret-token' })).now, START, 'the refused advance did nothing');

  t.equal((await clock(sandbox, undefined, { authorization: 'Bearer admin-secret-token' })).statusCode, 200);
  t.equal((await clock(sandbox, undefined, { 'x-admin-token': 'admin-secret-token' })).statusCode, 200);
  t.equal((await sandbox.app.inject({ method: 'POST', url: '/_emulator/reset', headers: { 'x-admin-token': 'admin-secret-token' } })).statusCode, 200);
  t.equal((await sandbox.request('GET', '/v1/accounts')).statusCode, 200, 'the interface routes are not affected');

  const open = await buildTestApp();
  t.teardown(open.close);
  t.equal((await clock(open)).statusCode, 200, 'without ADMIN_TOKEN the control plane needs no credentials');
});
