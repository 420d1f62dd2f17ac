import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { buildTestApp, json, type TestApp } from '../helper.js';
import { diffFingerprints, fingerprint } from '../helpers/db-state.js';
import { toServiceError } from '../../src/http/error-handling.js';

// docs/errors.md#disk-full: SQLITE_FULL and ENOSPC answer 507 with the error body (INTERNAL_ERROR, a message that
// says the disk is full); the failed write leaves the database as it was and reads go on. Real SQLite: `PRAGMA
// max_page_count` makes it refuse to grow the database exactly as a full disk does (SQLITE_FULL).

const deposit = (i: number) => ({ depositInstructionId: 'di_acme_usd_ach', amount: '10.00', reference: `disk full ${i}` });

/** Cap the database at its current size, so the next write that needs a new page fails with SQLITE_FULL. */
function fillTheDisk(sandbox: TestApp): number {
  const pages = sandbox.ctx.db.pragma('page_count', { simple: true }) as number;
  sandbox.ctx.db.pragma(`max_page_count = ${pages}`);
  return pages;
}

async function writeUntilFull(t: Test, sandbox: TestApp) {
  // every page already allocated may still take a few rows: write until one does not fit (a bound, not a time)
  for (let i = 0; i < 10_000; i += 1) {
    const before = fingerprint(sandbox.ctx.db);
    const response = await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', deposit(i));
    if (response.statusCode === 202) continue;
    return { response, before, after: fingerprint(sandbox.ctx.db), written: i };
  }
  t.fail('the capped database never filled');
  throw new Error('unreachable');
}

for (const db of ['file', 'memory'] as const) {
  t.test(`SQLITE_FULL on a ${db} database: 507 with the error body, nothing half-written, reads go on`, async (t) => {
    let file = ':memory:';
    if (db === 'file') {
      const dir = mkdtempSync(path.join(tmpdir(), 'disk-full-'));
      t.teardown(() => rmSync(dir, { recursive: true, force: true }));
      file = path.join(dir, 'sandbox.db');
    }
    const sandbox = await buildTestApp({ db: file });
    t.teardown(sandbox.close);
    const balanceBefore = json(await sandbox.request('GET', '/v1/accounts/acct_acme_usd')).balances;
    fillTheDisk(sandbox);

    const { response, before, after, written } = await writeUntilFull(t, sandbox);
    t.equal(response.statusCode, 507, `the write that did not fit (after ${written} that did) answers 507 Insufficient Storage`);
    t.match(response.headers['content-type'], /^application\/json/);
    const body = json(response);
    t.equal(body.errorCode, 'INTERNAL_ERROR', "the interface's code");
    t.match(body.message, /disk is full/i, 'the message says the disk is full');
    t.notMatch(response.body, /SQLITE|at .*\.js/, 'no internal detail or stack trace');
    t.same(diffFingerprints(before, after), [], 'the failed request left every state table as it was');

    // reads go on
    const accounts = await sandbox.request('GET', '/v1/accounts');
    t.equal(accounts.statusCode, 200, 'a list still answers');
    const account = await sandbox.request('GET', '/v1/accounts/acct_acme_usd');
    t.equal(account.statusCode, 200, 'an account still answers');
    t.equal(json(account).balances.current, balanceBefore.current, 'deposits are PENDING: the balance is as before');
    const listed = json(await sandbox.request('GET', '/v1/transactions?pageSize=25'));
    t.ok(listed.data.length > 0, 'the transactions written before the disk filled are there');
    t.equal((await sandbox.request('GET', '/_emulator/health')).statusCode, 200, 'the control plane still answers');

    // a control-plane write meets the same handler
    const moved = await sandbox.app.inject({ method: 'POST', url: '/_emulator/clock', payload: { advanceMs: 1000 } });
    t.ok([200, 507].includes(moved.statusCode), `a control-plane write answers 200 or 507, never 500 (${moved.statusCode})`);

    // space again: writes work again, the refused request can be sent again
    sandbox.ctx.db.pragma('max_page_count = 1073741823');
    const again = await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', deposit(written));
    t.equal(again.statusCode, 202, 'with space again the same request is accepted');
  });
}

t.test('ENOSPC from the file system and a wrapped SQLITE_FULL map to the same 507', async (t) => {
  const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
  const mapped = toServiceError(enospc);
  t.equal(mapped.statusCode, 507);
  t.same(mapped.toBody().errorCode, 'INTERNAL_ERROR');
  t.match(mapped.message, /disk is full/);
  const wrapped = new Error('could not save', { cause: Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }) });
  t.equal(toServiceError(wrapped).statusCode, 507, 'found in the cause chain');
  t.equal(toServiceError(new Error('something else')).statusCode, 500, 'other errors stay 500');
});
