// The write ceiling (bench/README.md, "The write ceiling"): a bare Fastify route (no hooks, no logger, no validation, no
// auth) that does, per request, in one BEGIN IMMEDIATE transaction with prepared statements, the row writes a commit of
// a fresh intent makes on the real path, on the app's own schema (its migrations, so the triggers of the listing tables
// fire as they do for the app), with the app's pragmas (WAL + synchronous=NORMAL on a file), and answers the intent's
// JSON prebuilt. What is left between it and `POST .../commit` is the app's own work: hooks, auth, validation, reads,
// JSON building, the journal.
//
// The writes are copies of the rows one real commit wrote (made here with the app's own services), with fresh keys:
//   4 x the id counter upsert (meta), one per id the commit draws
//   1 x INSERT transactions         (+ its listing triggers; its stored REST JSON in the same INSERT)
//   2 x INSERT ledger_entries
//   1 x INSERT outbox, 1 x INSERT webhook_deliveries
//   1 x INSERT jobs (the rail step)
//   1 x UPDATE transaction_intents
// The number is checked against the real path when the server starts: one real commit is run with better-sqlite3's
// statement trace on, its INSERT/UPDATE/DELETE statements counted (triggers excluded on both sides: they fire on
// both), and the server refuses to start if the count differs from COMMIT_WRITES.length.
//
// Usage: node bench/lib/write-ceiling.mjs PORT DB   (DB: ':memory:' or a file path, removed first)
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { fundAcme } from './fund-acme.mjs';

const DIST = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'src');
const load = (file) => import(pathToFileURL(path.join(DIST, file)).href);
const { createContext } = await load('create-context.js');
const { migrate } = await load('db/migrate.js');
const { createIntent, commitIntent } = await load('domains/intents/intents.service.js');
const { createIntentBody } = await load('domains/intents/intents.schema.js');

const [portText, dbPath = ':memory:'] = process.argv.slice(2);
if (dbPath !== ':memory:') for (const suffix of ['', '-wal', '-shm']) rmSync(dbPath + suffix, { force: true });

// The app's connection settings (src/db/connection.ts openDatabase), plus a statement trace for the count below.
let tracing = false;
const traced = [];
const db = new Database(dbPath, { verbose: (sql) => tracing && traced.push(sql) });
if (dbPath !== ':memory:') db.pragma('journal_mode = WAL');
db.pragma('foreign_keys = ON');
db.pragma('synchronous = NORMAL');
db.pragma('busy_timeout = 5000');
migrate(db);
const ctx = createContext({ config: { logLevel: 'silent' }, db });

// One real commit through the app's services, traced: its rows are the templates, its writes the count.
const caller = { programmeId: 'prg_sandbox', userId: 'usr_acme' };
const fundedAt = new Date(ctx.clock.nowMs() - 3_600_000).toISOString();
fundAcme(ctx, fundedAt);
const body = createIntentBody.parse({
  idempotencyKey: 'ceiling',
  debitAccountId: 'acct_acme_usd',
  credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' },
  creditAmount: '1.00',
});
const { intent } = createIntent(ctx, caller, body);
tracing = true;
const committed = commitIntent(ctx, caller, intent.id, 'ceiling');
tracing = false;
const realWrites = traced.filter((sql) => /^\s*(INSERT|UPDATE|DELETE|REPLACE)\b/i.test(sql)).length;

const one = (sql, ...args) => db.prepare(sql).get(...args);
const txn = one('SELECT * FROM transactions WHERE id = ?', committed.relatedTransactionId);
const entries = db.prepare('SELECT * FROM ledger_entries WHERE transaction_id = ? ORDER BY id').all(txn.id);
const event = one('SELECT * FROM outbox WHERE resource_id = ? ORDER BY seq DESC LIMIT 1', txn.id);
const delivery = one('SELECT * FROM webhook_deliveries WHERE event_seq = ?', event.seq);
const job = one("SELECT * FROM jobs WHERE type = 'transaction.rail-step' ORDER BY id DESC LIMIT 1");
const answer = JSON.stringify(committed);

const insertOf = (table, row, omit = []) => {
  const columns = Object.keys(row).filter((column) => !omit.includes(column));
  return { columns, statement: db.prepare(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`) };
};
const insertTxn = insertOf('transactions', txn);
const insertEntry = insertOf('ledger_entries', entries[0], ['id']);
const insertEvent = insertOf('outbox', event, ['seq']);
const insertDelivery = insertOf('webhook_deliveries', delivery);
const insertJob = insertOf('jobs', job, ['id']);
const nextId = db.prepare("INSERT INTO meta (key, value) VALUES ('id_counter', '1') ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1 RETURNING value");
const commitIntentRow = db.prepare('UPDATE transaction_intents SET status = ?, status_reason = ?, related_transaction_id = ?, updated_at = ?, updated_at_ms = ? WHERE id = ?');
const values = (insert, row, changes) => insert.columns.map((column) => (column in changes ? changes[column] : row[column]));

/** One commit's writes; COMMIT_WRITES.length is the count checked against the real path. */
const COMMIT_WRITES = ['id', 'id', 'id', 'id', 'transactions', 'entry', 'entry', 'outbox', 'delivery', 'job', 'intent'];
const commitWrites = db.transaction(() => {
  const ids = [nextId.get().value, nextId.get().value, nextId.get().value, nextId.get().value];
  const id = `txn_ceiling_${ids[0]}`;
  const now = Date.now();
  insertTxn.statement.run(...values(insertTxn, txn, { id }));
  for (const entry of entries) insertEntry.statement.run(...values(insertEntry, entry, { transaction_id: id }));
  const seq = insertEvent.statement.run(...values(insertEvent, event, { event_id: `evt_ceiling_${ids[1]}`, resource_id: id })).lastInsertRowid;
  insertDelivery.statement.run(...values(insertDelivery, delivery, { id: `dlv_ceiling_${ids[2]}`, event_seq: seq, event_id: `evt_ceiling_${ids[1]}`, resource_id: id }));
  insertJob.statement.run(...values(insertJob, job, { payload: JSON.stringify({ transactionId: id }) }));
  commitIntentRow.run('COMMITTED', `Committed: transaction ${id} created`, id, new Date(now).toISOString(), now, intent.id);
});
if (entries.length !== 2 || realWrites !== COMMIT_WRITES.length) {
  process.stderr.write(`write ceiling: the real commit made ${realWrites} row writes (${entries.length} ledger entries), the ceiling ${COMMIT_WRITES.length}: update COMMIT_WRITES\n`);
  process.exit(1);
}

const app = Fastify({ logger: false });
app.post('/v1/transaction-intents/:id/commit', async (_request, reply) => {
  commitWrites.immediate();
  return reply.type('application/json; charset=utf-8').send(answer);
});
app.get('/_emulator/health', async () => ({ status: 'ok', writesPerRequest: COMMIT_WRITES.length }));
await app.listen({ port: Number(portText), host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ writesPerRequest: COMMIT_WRITES.length, realPathWrites: realWrites })}\n`);
const stop = () => app.close().then(() => {
  db.close();
  process.exit(0);
});
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
