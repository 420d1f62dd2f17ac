import t from 'tap';
import { MAX_INSTANT, MIN_INSTANT_MS } from '../../src/lib/clock.js';
import { buildTestApp, json } from '../helper.js';

// docs/decisions.md#clock-range: an instant computed from the clock (a job's due time, an expiry, the default start
// of a window) is held inside years 0000-9999. At the ceiling the API used to write jobs due in the year 10000
// ("+010000-01-01T00:00:00.999Z"), which the clock can never reach and which the upload of its own export refused;
// at the floor the balance history's default window started in the year -1.

const FLOOR = new Date(MIN_INSTANT_MS).toISOString();

t.test('at the clock ceiling: jobs and a token expiry are due at the ceiling, and the export of that state uploads again', async (t) => {
  const sandbox = await buildTestApp({ start: MAX_INSTANT });
  t.teardown(sandbox.close);
  const deposit = await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '12.00', reference: 'ceiling' });
  t.equal(deposit.statusCode, 202, deposit.body);
  const token = await sandbox.request('POST', '/v1/auth/token');
  t.equal(token.statusCode, 200, token.body);

  const jobs = json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/jobs' })).data as Array<{ type: string; dueAt: string }>;
  t.ok(jobs.length > 0, 'the deposit scheduled its rail step');
  t.same(new Set(jobs.map((job) => job.dueAt)), new Set([MAX_INSTANT]), 'every job due at the ceiling, none after it');
  const expiries = sandbox.ctx.db.prepare('SELECT expires_at_ms FROM access_tokens').pluck().all() as number[];
  t.same(new Set(expiries), new Set([Date.parse(MAX_INSTANT)]), "the token's expiry at the ceiling too");

  t.equal((await sandbox.app.inject({ method: 'POST', url: '/_emulator/snapshots', payload: { name: 'ceiling' } })).statusCode, 201);
  const file = (await sandbox.app.inject({ method: 'GET', url: '/_emulator/snapshots/ceiling/export' })).rawPayload;
  const uploaded = await sandbox.app.inject({ method: 'PUT', url: '/_emulator/snapshots/again', payload: file, headers: { 'content-type': 'application/octet-stream' } });
  t.equal(uploaded.statusCode, 201, uploaded.body);
  t.equal((await sandbox.app.inject({ method: 'POST', url: '/_emulator/snapshots/again/restore' })).statusCode, 200, 'and restores');
});

t.test('at the clock floor: the balance history\'s default window starts at 0000-01-01, not before; the export uploads again', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  // seeded at the usual start (the fixtures' dates must not be in the clock's future), then set back to the floor
  // directly: the control plane moves the clock only forward
  const historyAt = async (clock: string) => {
    sandbox.ctx.clock.freezeAt(Date.parse(clock));
    const history = await sandbox.app.inject({ method: 'GET', url: '/_emulator/accounts/acct_acme_usd/balance-history' });
    t.equal(history.statusCode, 200, history.body);
    return json(history);
  };
  const atFloor = await historyAt(FLOOR);
  t.match(atFloor, { from: FLOOR, to: FLOOR });
  t.same(atFloor.points.map((point: { at: string }) => point.at), [FLOOR], 'one point: the window is that one instant');
  t.match(await historyAt('0000-01-03T00:00:00.000Z'), { from: FLOOR, to: '0000-01-03T00:00:00.000Z' }, 'two days in: the window is the two days there are');

  t.equal((await sandbox.app.inject({ method: 'POST', url: '/_emulator/snapshots', payload: { name: 'floor' } })).statusCode, 201);
  const file = (await sandbox.app.inject({ method: 'GET', url: '/_emulator/snapshots/floor/export' })).rawPayload;
  const again = await sandbox.app.inject({ method: 'PUT', url: '/_emulator/snapshots/again', payload: file, headers: { 'content-type': 'application/octet-stream' } });
  t.equal(again.statusCode, 201, `an export before 1970 uploads again: ${again.body}`);
});
