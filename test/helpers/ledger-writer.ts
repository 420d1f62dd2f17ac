// A separate process that spends from one account of a shared database file (test/domains/ledger/ledger-concurrency.test.ts):
// several of these at once must never take `available` below zero. Prints one JSON line with its counts.
// It assembles a minimal context (the transaction core only) so that it starts quickly.
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { openDatabase } from '../../src/db/connection.js';
import { databaseCounter } from '../../src/db/id-counter.js';
import { configSchema, DEFAULT_SEED } from '../../src/config.js';
import { createClock } from '../../src/lib/clock.js';
import { createIdSource } from '../../src/lib/ids.js';
import { loadFixtures } from '../../src/fixtures/fixtures.loader.js';
import type { AppContext } from '../../src/context.js';
import { createTransaction, InsufficientFundsError } from '../../src/domains/transactions/transactions.create.js';
import { RAIL_STEP_JOB } from '../../src/domains/transactions/transactions.rail.js';
import { runRailStep } from '../../src/domains/transactions/transactions.transition.js';
import { outboxSlot } from '../../src/domains/webhooks/outbox.js';
import { SandboxRuntime } from '../../src/runtime/sandbox-runtime.js';
import { jobsTimerSlot } from '../../src/scheduler/scheduler.js';

const [dbPath, attemptsText, amountText, writersText] = process.argv.slice(2);
const config = configSchema.parse({ db: dbPath, logLevel: 'silent' });
const db = openDatabase(config.db);
const ctx: AppContext = {
  db,
  clock: createClock({ mode: 'frozen', atMs: Date.parse('2026-03-01T12:00:00.000Z') }),
  ids: createIdSource(config.seed ?? DEFAULT_SEED, databaseCounter(db)),
  config,
  fixtures: loadFixtures(config.fixtures),
  jobHandlers: { [RAIL_STEP_JOB]: runRailStep },
  // the slots the transaction core touches: recordEvent tells the outbox's subscriber and scheduleJob the jobs timer
  // (docs/decisions.md#scheduler-wake-up); neither runs here
  runtime: new SandboxRuntime([outboxSlot, jobsTimerSlot], config),
};
// A barrier: every writer waits for the others to be ready, so their loops really overlap.
const barrier = path.dirname(dbPath!);
writeFileSync(path.join(barrier, `ready.${process.pid}`), '');
const pause = new Int32Array(new SharedArrayBuffer(4));
const deadline = Date.now() + 60_000;
while (readdirSync(barrier).filter((name) => name.startsWith('ready.')).length < Number(writersText) && Date.now() < deadline) Atomics.wait(pause, 0, 0, 2);

let accepted = 0;
let refused = 0;
for (let i = 0; i < Number(attemptsText); i += 1) {
  try {
    createTransaction(ctx, {
      programmeId: 'prg_sandbox',
      userId: 'usr_jane',
      accountId: 'acct_jane_usd',
      debitAccountId: 'acct_jane_usd',
      creditAccountId: null,
      direction: 'OUTGOING',
      type: 'WITHDRAWAL',
      debitAmountMinor: BigInt(amountText!),
      debitCurrency: 'USD',
      creditAmountMinor: BigInt(amountText!),
      creditCurrency: 'USD',
      externalId: `writer-${process.pid}`,
    });
    accepted += 1;
  } catch (error) {
    if (!(error instanceof InsufficientFundsError)) throw error;
    refused += 1;
  }
  // Like requests arriving one after another: leave the lock to the other writers between attempts.
  Atomics.wait(pause, 0, 0, 1);
}
db.close();
process.stdout.write(`${JSON.stringify({ accepted, refused })}\n`);
