#!/usr/bin/env node
// Builds the large databases of the benchmark (bench/README.md) and caches them under bench/.data/:
//   transactions-100k.db  the default fixtures + 100,000 transactions of usr_acme
//   transactions-1m.db    the default fixtures + 1,000,000 transactions of usr_acme
//
// What a row is: a fixtures history entry (history.schema.ts), i.e. exactly what a fixtures file with a million
// history entries would load through the app's own loader (seedHistory -> createTransaction in history mode):
// the app's columns, the stored REST JSON (rest_json, made by the app's own toTransaction), ledger entries with
// running totals, and the listing tables and counters that the triggers of migration 002 maintain.
//
// How it is fast: the app's loader costs about 250-300 us a row here (it reads each row back twice, draws ids
// through a database counter, opens a savepoint per row), which is 5 minutes for a million. This script
// writes the same rows with one INSERT per row and per ledger entry (the triggers still maintain the counters
// and listing tables), in one SQLite transaction per BATCH entries, with the secondary indexes dropped
// during the load and recreated from their own CREATE statements afterwards. Build-time pragmas apply to
// the seeding connection only (rollback journal in memory, no fsync, a large page cache); files are built
// under a temporary name and renamed when complete.
//
// Exactness is checked, not assumed: before every build a self-test loads the same 1,000 entries once
// through the app's loader and once through this fast path, each into a fresh database, and compares every
// state table row for row; the build stops if they differ (e.g. after a change to the transaction core).
// After the build: counters equal COUNT(*), stored JSON equals the app's serialization of sampled rows,
// and the running balance equals the sum of the ledger entries.
//
// The cache is reused while its fingerprint matches: the data-generating code and constants of this script,
// the fixtures and the compiled code that decides what a row looks like (migrations, transaction core,
// ledger, history loader, ids, money). Otherwise it is rebuilt; `node bench/seed.mjs --force` rebuilds it.
//
// Shape of the data (deterministic, seeded PRNG): one transaction every 6 s from 2026-03-01T00:00Z;
// 70% ACH/wire deposits, 25% completed withdrawals with a fee, 5% failed withdrawals (hold reversed).
// Every 20,000 rows, 300 consecutive transactions settle at one instant (a settlement batch), so the
// change-sync procedure of interface 4.5 meets full pages that share one updatedAt.
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(BENCH_DIR);
const DIST = path.join(ROOT, 'dist', 'src');
export const DATA_DIR = path.join(BENCH_DIR, '.data');
export const DB_100K = path.join(DATA_DIR, 'transactions-100k.db');
export const DB_1M = path.join(DATA_DIR, 'transactions-1m.db');
const MANIFEST = path.join(DATA_DIR, 'manifest.json');

const SEED_VERSION = 1;
const SMALL = 100_000;
const LARGE = 1_000_000;
const BATCH = 10_000;
const START_MS = Date.parse('2026-03-01T00:00:00.000Z');
const SPACING_MS = 6_000;
const BURST_EVERY = 20_000;
const BURST_AT = 10_000; // offset of the burst inside each block of BURST_EVERY rows
const BURST_SIZE = 300;

/** Files whose change makes a cached database stale. */
function fingerprint() {
  const hash = createHash('sha256');
  hash.update(`seed v${SEED_VERSION}\n`);
  // the code and constants that decide the rows (not the comments or logging of this script)
  hash.update([entryAt, fastWriter, prng, memoryCounter].map(String).join('\n'));
  hash.update(JSON.stringify({ SMALL, LARGE, START_MS, SPACING_MS, BURST_EVERY, BURST_AT, BURST_SIZE, PAYERS, BENEFICIARIES, PURPOSES, INSERT_TRANSACTION, INSERT_ENTRY }));
  const files = [
    'fixtures/default.json',
    'dist/src/db/migrations/index.js',
    ...['001-core', '002-money-in', '003-money-out', '004-webhooks', '005-statements', '006-enrollment', '007-programme-transactions'].map((name) => `dist/src/db/migrations/${name}.js`),
    ...['transactions.create', 'transactions.stored', 'transactions.rail', 'transactions.transition'].map((name) => `dist/src/domains/transactions/${name}.js`),
    'dist/src/domains/transactions/transactions.schema.js',
    'dist/src/domains/transactions/history.seed.js',
    'dist/src/domains/ledger/ledger.service.js',
    'dist/src/lib/ids.js',
    'dist/src/config.js',
    'dist/src/lib/money.js',
  ];
  for (const file of files) {
    const full = path.join(ROOT, file);
    hash.update(`${file}\n`);
    if (existsSync(full)) hash.update(readFileSync(full));
  }
  return hash.digest('hex');
}

function readManifest() {
  try {
    return JSON.parse(readFileSync(MANIFEST, 'utf8'));
  } catch {
    return null;
  }
}

/** Deterministic PRNG (mulberry32). */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PAYERS = [
  { displayName: 'Northwind Traders', institutionName: 'Lakeside Credit Union', accountNumber: '****2291' },
  { displayName: 'Contoso Retail Ltd', institutionName: 'Granite State Bank', accountNumber: '****6074' },
  { displayName: 'Fabrikam Industries', institutionName: 'Harbor National Bank', accountNumber: '****1138' },
  { displayName: 'Tailspin Toys Inc.', institutionName: 'First Prairie Bank', accountNumber: '****5502' },
  { displayName: 'Wide World Importers', institutionName: 'Bay Commerce Bank', accountNumber: '****9017' },
  { displayName: 'Adventure Works Cycles', institutionName: 'Summit Trust', accountNumber: '****4420' },
];
const BENEFICIARIES = [
  { beneficiary: { id: 'ben_globex', type: 'BUSINESS', name: 'Globex Corporation' }, bankAccount: { id: 'bi_globex_usd', displayName: 'Globex Corporation ...6789', mask: '6789' } },
  { beneficiary: { id: 'ben_hist_initech', type: 'BUSINESS', name: 'Initech Components Corp.' }, bankAccount: { id: 'bi_hist_initech_usd', displayName: 'Initech Components Corp. ...9020', mask: '9020' } },
  { beneficiary: { id: 'ben_hist_umbrella', type: 'BUSINESS', name: 'Umbrella Logistics LLC' }, bankAccount: { id: 'bi_hist_umbrella_usd', displayName: 'Umbrella Logistics LLC ...4431', mask: '4431' } },
];
const PURPOSES = ['PAYMENT_FOR_IMPORTED_GOODS', 'INFORMATION_SERVICE_CHARGES', 'TRANSPORTATION_FEES_FOR_GOODS', undefined];

const money = (cents) => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
const iso = (ms) => new Date(ms).toISOString();

/** History entry number i (fixtures' history format, interface of history.schema.ts). */
function entryAt(i, random, id) {
  const createdMs = START_MS + i * SPACING_MS;
  const inBlock = i % BURST_EVERY;
  const burst = inBlock >= BURST_AT && inBlock < BURST_AT + BURST_SIZE;
  // a settlement batch: every row of the burst completes at the same instant, after the last one is created
  const completedMs = burst ? START_MS + (i - inBlock + BURST_AT + BURST_SIZE) * SPACING_MS + 3_600_000 : createdMs + 1_000 + Math.floor(random() * 180) * 1_000;
  const common = { id, accountId: 'acct_acme_usd', createdAt: iso(createdMs), completedAt: iso(completedMs) };
  const r = random();
  if (r < 0.7) {
    const wire = random() < 0.2;
    const entry = {
      ...common,
      type: 'DEPOSIT',
      status: 'COMPLETED',
      amount: money(5_000 + Math.floor(random() * 495_000)),
      rail: wire ? 'US.USD.FEDWIRE' : 'US.USD.ACH',
      payer: PAYERS[Math.floor(random() * PAYERS.length)],
      reference: `${wire ? 'FW' : 'ACH'}${String(i).padStart(9, '0')}`,
    };
    if (wire) entry.memo = `Invoice ${100_000 + (i % 900_000)}`;
    return entry;
  }
  const to = BENEFICIARIES[Math.floor(random() * BENEFICIARIES.length)];
  const wire = random() < 0.3;
  const failed = r >= 0.95;
  const entry = {
    ...common,
    type: 'WITHDRAWAL',
    status: failed ? 'FAILED' : 'COMPLETED',
    amount: money(1_000 + Math.floor(random() * 99_000)),
    fee: { type: 'PROCESSING', label: wire ? 'Wire processing fee' : 'ACH processing fee', amount: wire ? '15.00' : '0.50' },
    rail: wire ? 'US.USD.FEDWIRE' : 'US.USD.ACH',
    beneficiary: to.beneficiary,
    bankAccount: to.bankAccount,
  };
  const purpose = PURPOSES[Math.floor(random() * PURPOSES.length)];
  if (purpose) entry.purpose = purpose;
  if (failed) {
    entry.statusCode = 'RAIL_REJECTED';
    entry.statusReason = 'Returned by the receiving bank: account closed (ACH return R02)';
  }
  return entry;
}

function removeDb(file) {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(file + suffix, { force: true });
}

async function loadApp() {
  const load = (file) => import(pathToFileURL(path.join(DIST, file)).href);
  const [context, history, ids, schema, migrate, config] = await Promise.all([
    load('create-context.js'),
    load('domains/transactions/history.seed.js'),
    load('lib/ids.js'),
    load('domains/transactions/transactions.schema.js'),
    load('db/migrate.js'),
    load('config.js'),
  ]);
  const ledger = await load('domains/ledger/ledger.service.js');
  const core = await load('domains/transactions/transactions.stored.js');
  return {
    createContext: context.createContext,
    seedHistory: history.seedHistory,
    createIdSource: ids.createIdSource,
    defaultSeed: config.DEFAULT_SEED,
    toTransaction: schema.toTransaction,
    stateTables: migrate.stateTables,
    availableOf: ledger.availableOf,
    sumOfEntries: ledger.sumOfEntries,
    serializeTransaction: (ctx, row) => schema.toTransaction(row, core.precisionLookup(ctx)),
    getTransactionRow: core.getTransactionRow,
  };
}

/** The id counter of lib/ids.ts kept in memory during a load and written back to `meta` with each batch. */
function memoryCounter(db) {
  const row = db.prepare("SELECT value FROM meta WHERE key = 'id_counter'").get();
  let value = row ? Number(row.value) : 0;
  return {
    next: () => (value += 1),
    save() {
      if (value === 0) return;
      db.prepare("INSERT INTO meta (key, value) VALUES ('id_counter', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(String(value));
    },
  };
}

const INSERT_TRANSACTION = `INSERT INTO transactions (
  id, programme_id, user_id, account_id, debit_account_id, credit_account_id, direction, type, status, status_reason,
  status_code, category, reference_number, external_id, deposit_reconciliation_id, related_transaction_id,
  debit_amount_minor, net_debit_amount_minor, debit_currency, debit_party, debit_rail, debit_memo, debit_reference,
  debit_entry_descriptor, debit_instrument, credit_amount_minor, credit_currency, credit_party, credit_rail,
  credit_instrument, fees, exchange_rate, base_exchange_rate, fx_spread, tags, purpose, rail_behaviour, intent_id,
  created_at, created_at_ms, updated_at, updated_at_ms, completed_at, rest_json
) VALUES (
  @id, @programme_id, @user_id, @account_id, @debit_account_id, @credit_account_id, @direction, @type, @status, @status_reason,
  @status_code, @category, @reference_number, @external_id, @deposit_reconciliation_id, @related_transaction_id,
  @debit_amount_minor, @net_debit_amount_minor, @debit_currency, @debit_party, @debit_rail, @debit_memo, @debit_reference,
  @debit_entry_descriptor, @debit_instrument, @credit_amount_minor, @credit_currency, @credit_party, @credit_rail,
  @credit_instrument, @fees, @exchange_rate, @base_exchange_rate, @fx_spread, @tags, @purpose, @rail_behaviour, @intent_id,
  @created_at, @created_at_ms, @updated_at, @updated_at_ms, @completed_at, @rest_json
)`;
const INSERT_ENTRY = `INSERT INTO ledger_entries (account_id, transaction_id, kind, amount_minor, currency, is_fee, description, posted_at, posted_at_ms, available_after_minor)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/**
 * The fast path: the rows createTransaction writes in history mode for a DEPOSIT (fiat) or WITHDRAWAL
 * (bank account) entry of acct_acme_usd, without reading anything back. The self-test proves it equal.
 */
function fastWriter(app, ctx, ids) {
  const db = ctx.db;
  const account = db.prepare("SELECT * FROM accounts WHERE id = 'acct_acme_usd'").get();
  const precision = (currency) => ctx.fixtures.currencies[currency].precision;
  const insertTransaction = db.prepare(INSERT_TRANSACTION);
  const insertEntry = db.prepare(INSERT_ENTRY);
  const last = db.prepare('SELECT available_after_minor AS n FROM ledger_entries WHERE account_id = ? ORDER BY id DESC LIMIT 1').get(account.id);
  let available = last ? Number(last.n) : 0;
  const ownInstrument = JSON.stringify({ instrumentType: 'ACCOUNT', account: { id: account.id, displayName: account.display_name, currency: account.currency } });
  const cents = (text) => Math.round(Number(text) * 100);

  function post(transactionId, kind, amount, isFee, description, postedAt) {
    available += amount;
    insertEntry.run(account.id, transactionId, kind, amount, account.currency, isFee ? 1 : 0, description, postedAt, Date.parse(postedAt), available);
  }

  return (entry) => {
    const reference = ids.reference();
    const completed = entry.status === 'COMPLETED';
    const row = {
      id: entry.id,
      programme_id: 'prg_sandbox',
      user_id: account.user_id,
      account_id: account.id,
      debit_account_id: null,
      credit_account_id: null,
      direction: 'INCOMING',
      type: entry.type,
      status: entry.status,
      status_reason: null,
      status_code: null,
      category: null,
      reference_number: reference,
      external_id: null,
      deposit_reconciliation_id: null,
      related_transaction_id: null,
      debit_amount_minor: 0,
      net_debit_amount_minor: null,
      debit_currency: account.currency,
      debit_party: null,
      debit_rail: null,
      debit_memo: entry.memo ?? null,
      debit_reference: null,
      debit_entry_descriptor: null,
      debit_instrument: null,
      credit_amount_minor: 0,
      credit_currency: account.currency,
      credit_party: null,
      credit_rail: null,
      credit_instrument: null,
      fees: '[]',
      exchange_rate: null,
      base_exchange_rate: null,
      fx_spread: null,
      tags: '[]',
      purpose: entry.purpose ?? null,
      rail_behaviour: 'NONE',
      intent_id: null,
      created_at: entry.createdAt,
      created_at_ms: Date.parse(entry.createdAt),
      updated_at: entry.completedAt,
      updated_at_ms: Date.parse(entry.completedAt),
      completed_at: completed ? entry.completedAt : null,
      rest_json: null,
    };
    const amount = cents(entry.amount);
    if (entry.type === 'DEPOSIT') {
      Object.assign(row, {
        credit_account_id: account.id,
        debit_amount_minor: amount,
        credit_amount_minor: amount,
        debit_party: JSON.stringify({ partyType: 'PAYER', payer: entry.payer }),
        debit_rail: entry.rail,
        debit_reference: entry.reference ?? null,
        credit_instrument: ownInstrument,
        deposit_reconciliation_id: account.deposit_reconciliation_id,
      });
    } else {
      const fee = cents(entry.fee.amount);
      if (available < amount + fee) throw new Error(`seed: withdrawal ${entry.id} overdraws the account`);
      Object.assign(row, {
        debit_account_id: account.id,
        direction: 'OUTGOING',
        status_reason: completed ? null : entry.statusReason,
        status_code: completed ? null : entry.statusCode,
        debit_amount_minor: amount + fee,
        net_debit_amount_minor: amount,
        // The book rail the app gives a debit on the platform's own books (transactions.create.ts bookRailOf).
        debit_rail: account.country ? `${account.country}.${account.currency}.INTERNAL` : `INTERNAL.${account.currency}`,
        debit_instrument: ownInstrument,
        credit_amount_minor: amount,
        credit_party: JSON.stringify({
          partyType: 'BENEFICIARY',
          beneficiary: { beneficiaryType: 'BUSINESS', business: { id: entry.beneficiary.id, name: entry.beneficiary.name } },
        }),
        credit_rail: entry.rail,
        credit_instrument: JSON.stringify({ instrumentType: 'BANK_ACCOUNT', bankAccount: { ...entry.bankAccount, currency: account.currency } }),
        fees: JSON.stringify([{ type: entry.fee.type, label: entry.fee.label, amount: entry.fee.amount, currency: account.currency }]),
      });
    }
    row.rest_json = JSON.stringify(app.toTransaction(row, precision));
    insertTransaction.run(row);
    if (entry.type === 'DEPOSIT') {
      post(row.id, 'PRINCIPAL', amount, false, `Deposit from ${entry.payer.displayName}`, entry.completedAt);
    } else {
      const description = `Withdrawal to ${entry.beneficiary.name}`;
      const fee = cents(entry.fee.amount);
      post(row.id, 'PRINCIPAL', -amount, false, description, entry.createdAt);
      post(row.id, 'FEE', -fee, true, entry.fee.label, entry.createdAt);
      if (!completed) {
        post(row.id, 'REVERSAL', amount, false, `Reversal: ${description}`, entry.completedAt);
        post(row.id, 'REVERSAL', fee, true, `Reversal: ${entry.fee.label}`, entry.completedAt);
      }
    }
  };
}

function openBuildContext(app, file) {
  const ctx = app.createContext({ config: { db: file, logLevel: 'silent' } });
  if (file !== ':memory:') {
    // Build-time settings of this connection only; the server opens the finished file in WAL mode as usual.
    ctx.db.pragma('journal_mode = MEMORY');
    ctx.db.pragma('synchronous = OFF');
  }
  ctx.db.pragma('cache_size = -524288');
  ctx.db.pragma('temp_store = MEMORY');
  return ctx;
}

/** Load entries [from, to) with the fast path, BATCH per SQLite transaction. */
function fastLoad(app, ctx, state, from, to, onBatch) {
  for (let start = from; start < to; start += BATCH) {
    const end = Math.min(to, start + BATCH);
    ctx.db.transaction(() => {
      const entries = [];
      for (let i = start; i < end; i += 1) entries.push(entryAt(i, state.random, state.ids.id('transaction')));
      for (const entry of entries) state.write(entry);
      state.counter.save();
    })();
    onBatch?.(end);
  }
}

function fastState(app, ctx, seed) {
  const counter = memoryCounter(ctx.db);
  const ids = app.createIdSource(ctx.config.seed ?? app.defaultSeed, counter) // the context's own seed (docs/sessions.md#ids);
  return { counter, ids, random: prng(seed), write: fastWriter(app, ctx, ids) };
}

/** Every row of every state table, as sorted JSON lines (for comparing two databases). */
function snapshot(app, db) {
  const out = {};
  for (const table of app.stateTables(db).sort()) {
    out[table] = db
      .prepare(`SELECT * FROM "${table}"`)
      .raw()
      .all()
      .map((row) => JSON.stringify(row))
      // The clock's high-water mark is the wall clock when each context was opened (src/db/clock-store.ts),
      // not something either loader writes: left out of the comparison.
      .filter((line) => !(table === 'meta' && line.startsWith('["clock_high_water_ms"')))
      .sort();
  }
  return out;
}

/** The fast path must write exactly what the app's history loader writes. */
function selfTest(app) {
  const from = BURST_AT - 500; // includes the start of a settlement burst
  const count = 1_000;
  const viaApp = openBuildContext(app, ':memory:');
  const programme = viaApp.fixtures.programmes.find((p) => p.id === 'prg_sandbox');
  const random = prng(7);
  const entries = [];
  for (let i = from; i < from + count; i += 1) entries.push(entryAt(i, random, viaApp.ids.id('transaction')));
  viaApp.db.transaction(() => app.seedHistory(viaApp, { ...programme, history: entries }))();

  const viaFast = openBuildContext(app, ':memory:');
  const state = fastState(app, viaFast, 7);
  viaFast.db.transaction(() => {
    const again = [];
    for (let i = from; i < from + count; i += 1) again.push(entryAt(i, state.random, state.ids.id('transaction')));
    for (const entry of again) state.write(entry);
    state.counter.save();
  })();

  const a = snapshot(app, viaApp.db);
  const b = snapshot(app, viaFast.db);
  for (const table of Object.keys(a)) {
    const left = a[table];
    const right = b[table] ?? [];
    const differs = left.length !== right.length || left.some((line, index) => line !== right[index]);
    if (differs) {
      const onlyApp = left.filter((line) => !right.includes(line)).slice(0, 2);
      const onlyFast = right.filter((line) => !left.includes(line)).slice(0, 2);
      throw new Error(
        `seed self-test: table ${table} differs between the app's history loader and the fast path\n app:  ${onlyApp.join('\n       ')}\n fast: ${onlyFast.join('\n       ')}`,
      );
    }
  }
  viaApp.db.close();
  viaFast.db.close();
}

const LOADED_TABLES = ['transactions', 'transaction_accounts', 'ledger_entries'];

function dropSecondaryIndexes(db) {
  const indexes = db
    .prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN (${LOADED_TABLES.map(() => '?').join(', ')})`)
    .all(...LOADED_TABLES);
  for (const index of indexes) db.exec(`DROP INDEX "${index.name}"`);
  return indexes;
}

function createIndexes(db, indexes) {
  db.transaction(() => {
    for (const index of indexes) db.exec(index.sql);
  })();
  db.exec('ANALYZE');
}

/** Counters equal COUNT(*), stored JSON equals the app's serialization, running balance equals the sum. */
function verify(app, file) {
  const ctx = app.createContext({ config: { db: file, logLevel: 'silent' } });
  try {
    const counted = ctx.db.prepare("SELECT COUNT(*) AS n FROM transactions WHERE user_id = 'usr_acme'").get().n;
    const counter = ctx.db.prepare("SELECT SUM(n) AS n FROM transaction_counts WHERE scope = 'user:usr_acme'").get().n;
    if (counted !== counter) throw new Error(`seed check: counter ${counter} != COUNT(*) ${counted}`);
    const sample = ctx.db.prepare("SELECT id, rest_json FROM transactions WHERE user_id = 'usr_acme' AND abs(random()) % 1000 = 0 LIMIT 500").all();
    for (const row of sample) {
      const rebuilt = JSON.stringify(app.serializeTransaction(ctx, app.getTransactionRow(ctx, row.id)));
      if (rebuilt !== row.rest_json) throw new Error(`seed check: stored JSON of ${row.id} differs from the app's serialization`);
    }
    if (app.availableOf(ctx, 'acct_acme_usd') !== app.sumOfEntries(ctx, 'acct_acme_usd')) throw new Error('seed check: running balance != sum of entries');
    return counted;
  } finally {
    ctx.db.close();
  }
}

/** Build both databases: the 100k one is a copy of the 1M build taken on the way. */
async function build(log) {
  const app = await loadApp();
  const started = performance.now();
  selfTest(app);
  const selfTestSeconds = (performance.now() - started) / 1000;
  log(`  self-test passed: the fast path writes what the app's history loader writes (${selfTestSeconds.toFixed(1)} s)`);

  mkdirSync(DATA_DIR, { recursive: true });
  const building = path.join(DATA_DIR, 'building.db');
  const smallTmp = `${DB_100K}.tmp`;
  removeDb(building);
  removeDb(smallTmp);
  const ctx = openBuildContext(app, building);
  const indexes = dropSecondaryIndexes(ctx.db);
  const state = fastState(app, ctx, 20260301);
  const elapsed = () => (performance.now() - started) / 1000;
  const progress = (done) => {
    if (done % 100_000 === 0) log(`  loaded ${done.toLocaleString('en-US')} rows (${elapsed().toFixed(1)} s)`);
  };

  fastLoad(app, ctx, state, 0, SMALL, progress);
  copyFileSync(building, smallTmp);
  {
    const small = openBuildContext(app, smallTmp);
    createIndexes(small.db, indexes);
    small.db.close();
  }
  const seconds100k = elapsed();
  log(`  ${path.basename(DB_100K)} ready (${seconds100k.toFixed(1)} s)`);

  fastLoad(app, ctx, state, SMALL, LARGE, progress);
  createIndexes(ctx.db, indexes);
  ctx.db.close();
  const seconds1m = elapsed();
  log(`  ${path.basename(DB_1M)} ready (${seconds1m.toFixed(1)} s); checking`);

  const transactions100k = verify(app, smallTmp);
  const transactions1m = verify(app, building);
  removeDb(DB_1M);
  renameSync(building, DB_1M);
  removeDb(DB_100K);
  renameSync(smallTmp, DB_100K);
  return { seconds100k, seconds1m, secondsTotal: elapsed(), usrAcmeTransactions: { small: transactions100k, large: transactions1m } };
}

/** Make sure both databases exist and match the current code; returns the manifest. */
export async function ensureDatabases({ force = false, log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  const print = fingerprint();
  const manifest = readManifest();
  if (!force && manifest?.fingerprint === print && existsSync(DB_100K) && existsSync(DB_1M)) return { ...manifest, reused: true };
  log(`building ${path.relative(ROOT, DB_100K)} and ${path.relative(ROOT, DB_1M)} (cached for later runs)`);
  const timings = await build(log);
  const fresh = { fingerprint: print, builtAt: new Date().toISOString(), rows: { small: SMALL, large: LARGE }, ...timings };
  writeFileSync(MANIFEST, `${JSON.stringify(fresh, null, 2)}\n`);
  return { ...fresh, reused: false };
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  const result = await ensureDatabases({ force: process.argv.includes('--force') });
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
