import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { balancesOf } from '../../../src/domains/ledger/ledger.service.js';
import { checkLedger, freshContext } from '../../helpers/ledger.js';
import { plainNode } from '../../helpers/node-child.js';

// docs/decisions.md#ledger: a debit never takes `available` below zero, even with several writers at once. In one
// process better-sqlite3 serialises everything; here three processes spend from the same account of one
// database file at the same time (test/helpers/ledger-writer.ts), each check-and-hold being one
// IMMEDIATE SQLite transaction.

const WRITERS = 3;
const ATTEMPTS = 150;
const AMOUNT = 5_000; // 50.00 USD: jane's 13,098.50 covers 261 of them

t.test('concurrent writers on one database file never overdraw', { timeout: 90_000 }, async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ledger-'));
  const dbPath = path.join(dir, 'sandbox.db');
  freshContext(dbPath).db.close(); // migrate and seed once
  const run = () =>
    new Promise<{ accepted: number; refused: number }>((resolve, reject) => {
      const child = spawn(
        ...plainNode(['--import=./scripts/ts-loader.mjs', 'test/helpers/ledger-writer.ts', dbPath, String(ATTEMPTS), String(AMOUNT), String(WRITERS)]),
        { cwd: path.resolve(import.meta.dirname, '..', '..', '..'), stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      let err = '';
      child.stdout.on('data', (chunk) => (out += chunk));
      child.stderr.on('data', (chunk) => (err += chunk));
      child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1)!)) : reject(new Error(`writer exited ${code}: ${err}`))));
    });
  const results = await Promise.all(Array.from({ length: WRITERS }, run));
  const accepted = results.reduce((sum, r) => sum + r.accepted, 0);
  t.equal(accepted, 261, 'exactly as many debits as the balance covers, across the writers');
  t.equal(results.reduce((sum, r) => sum + r.refused, 0), WRITERS * ATTEMPTS - 261);
  const ctx = freshContext(dbPath);
  t.teardown(() => ctx.db.close());
  // The holds were written by the writers in turns, not one writer after another.
  const writers = (ctx.db.prepare("SELECT external_id FROM transactions WHERE external_id LIKE 'writer-%' ORDER BY rowid").all() as Array<{ external_id: string }>).map((row) => row.external_id);
  const switches = writers.filter((writer, i) => i > 0 && writer !== writers[i - 1]).length;
  t.ok(switches >= WRITERS, `the writers interleaved (${switches} switches between writers over ${writers.length} holds)`);
  t.equal(balancesOf(ctx, 'acct_jane_usd').availableMinor, 1_309_850n - 261n * BigInt(AMOUNT));
  t.ok(checkLedger(t, ctx, 'after concurrent writers'));
});
