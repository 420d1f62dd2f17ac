import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import fc from 'fast-check';
import { Agent, request } from 'undici';
import { signRequest } from '../../src/lib/hmac.js';
import { CREDENTIALS, buildTestApp, type Identity } from '../helper.js';
import { base64, signPayout } from '../helpers/funding.js';
import { checkLedger, freshContext } from '../helpers/ledger.js';
import { ensureBuilt, startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import type { AppContext } from '../../src/context.js';

// Concurrency (docs/robustness.md#concurrency-testdbconcurrencytestts): 200 requests at once over real sockets, mixing
// idempotent retries of the same keys (deposit-instruction creation with one idempotencyKey, intent creation and commit
// with one key, a payout with one Idempotency-Key, user creation with one externalId) with simulated deposits,
// conflicting commits and reads. Whatever the interleaving: one row per key, the same answer to every retry, exactly
// one 201 for a creation, no SQLITE_BUSY and no 5xx.
//
// Two settings: the in-process app of test/helper.ts on a listener (one connection: Node serialises the
// synchronous SQLite work), and two built server processes on one database file, where the requests really
// race on SQLite's locks (the setting where SQLITE_BUSY could surface).

const MULTI: Identity = { apiKey: CREDENTIALS.multi.apiKey, secret: CREDENTIALS.multi.secret };
const TO_GLOBEX = { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' };
const FROZEN_AT = '2026-03-01T12:00:00.000Z';

interface Call {
  kind: string;
  method: string;
  path: string;
  body?: unknown;
  as?: Identity;
  /** Payout submissions: Base64 text body, the payout signature variant and this Idempotency-Key. */
  payoutKey?: string;
}

interface Answer {
  call: Call;
  status: number;
  text: string;
  body: any;
  server: string;
}

/** Send calls all at once, spread over the servers in turn. */
async function fire(servers: string[], calls: Call[], agent: Agent): Promise<Answer[]> {
  return Promise.all(
    calls.map(async (call, index) => {
      const server = servers[index % servers.length]!;
      const payload = call.body === undefined ? undefined : typeof call.body === 'string' ? call.body : JSON.stringify(call.body);
      let headers: Record<string, string>;
      if (call.payoutKey) {
        headers = { ...signPayout(call.path, payload ?? ''), 'content-type': 'text/plain', 'idempotency-key': call.payoutKey };
      } else {
        const as = call.as ?? {};
        const apiKey = as.apiKey ?? CREDENTIALS.single.apiKey;
        const secret = as.secret ?? CREDENTIALS.single.secret;
        const timestamp = String(Date.now());
        headers = {
          'x-service-api-key': apiKey,
          'x-service-timestamp': timestamp,
          'x-service-program-id': CREDENTIALS.programmeId,
          'x-service-signature': signRequest({ apiKey, secret, timestamp, method: call.method, target: call.path, body: payload ?? '' }),
        };
        if (as.userId) headers['x-service-user-id'] = as.userId;
        if (payload !== undefined) headers['content-type'] = 'application/json';
      }
      const response = await request(`${server}${call.path}`, { method: call.method as 'GET', headers, body: payload, dispatcher: agent });
      const text = await response.body.text();
      let body: unknown = null;
      try {
        body = JSON.parse(text);
      } catch {
        body = null;
      }
      return { call, status: response.statusCode, text, body, server };
    }),
  );
}

/** Deterministic shuffle (seeded), so every run interleaves the kinds the same way on the client side. */
function shuffle<T>(items: T[], seed: number): T[] {
  const order = fc.sample(fc.shuffledSubarray(items.map((_, i) => i), { minLength: items.length, maxLength: items.length }), { seed, numRuns: 1 })[0]!;
  return order.map((i) => items[i]!);
}

function repeat(count: number, make: (i: number) => Call): Call[] {
  return Array.from({ length: count }, (_, i) => make(i));
}

interface Prepared {
  intentA: { id: string; key: string };
  intentD: { id: string; key: string };
  /** Users with no enrollment yet: the first GET /v1/enrollment (or activate) creates it. */
  freshUsers: string[];
}

const INTENT_B_BODY = { idempotencyKey: 'conc-intent-b', debitAccountId: 'acct_acme_usd', credit: TO_GLOBEX, creditAmount: '7.00' };
const PAYOUT_PATH = '/v1/payout-origination/json';
const PAYOUT_BODY = base64(JSON.stringify({ entityId: 'acct_acme_usd', beneficiaryId: 'ben_globex', amount: '25.00', currency: 'USD', reference: 'CONC-PAYOUT' }));

function firstBurst(prepared: Prepared, tag: string): Call[] {
  return shuffle(
    [
      ...repeat(25, (i) => ({
        kind: 'deposit-instruction',
        method: 'POST',
        path: '/v1/accounts/acct_acme_usd/deposit-instructions',
        body: { name: `Concurrent ${i}`, idempotencyKey: `conc-di-${tag}` },
      })),
      ...repeat(20, () => ({ kind: 'intent-create', method: 'POST', path: '/v1/transaction-intents', body: INTENT_B_BODY })),
      ...repeat(20, () => ({
        kind: 'commit',
        method: 'POST',
        path: `/v1/transaction-intents/${prepared.intentA.id}/commit`,
        body: { idempotencyKey: prepared.intentA.key },
      })),
      ...repeat(10, (i) => ({
        kind: 'commit-wrong-key',
        method: 'POST',
        path: `/v1/transaction-intents/${prepared.intentA.id}/commit`,
        body: { idempotencyKey: `not-the-key-${i}` },
      })),
      ...repeat(20, () => ({ kind: 'payout', method: 'POST', path: PAYOUT_PATH, body: PAYOUT_BODY, payoutKey: `conc-payout-${tag}` })),
      ...repeat(20, () => ({ kind: 'user', method: 'POST', path: '/v1/auth/users', body: { externalId: `conc-user-${tag}`, type: 'BUSINESS', name: 'Concurrent Co' }, as: MULTI })),
      ...repeat(20, (i) => ({
        kind: 'deposit',
        method: 'POST',
        path: '/v1/sandbox/accounts/acct_acme_usd/deposits',
        body: { depositInstructionId: 'di_acme_usd_ach', amount: `${i + 1}.00`, reference: `CONC-DEP-${tag}-${i}` },
      })),
      ...repeat(10, () => ({ kind: 'token', method: 'POST', path: '/v1/auth/token', body: { scopes: ['accounts:read'] } })),
      ...repeat(20, (i) => ({ kind: 'enrollment', method: 'GET', path: '/v1/enrollment', as: { ...MULTI, userId: prepared.freshUsers[i % prepared.freshUsers.length] } })),
      ...repeat(10, (i) => ({ kind: 'activate', method: 'POST', path: '/v1/enrollment/activate', as: { ...MULTI, userId: prepared.freshUsers[i % prepared.freshUsers.length] } })),
      ...repeat(10, (i) => ({ kind: 'information-requests', method: 'GET', path: '/v1/information-requests', as: { ...MULTI, userId: prepared.freshUsers[i % prepared.freshUsers.length] } })),
      ...repeat(5, (i) => ({
        kind: 'beneficiary',
        method: 'POST',
        path: '/v1/beneficiaries',
        body: {
          type: 'BUSINESS',
          businessName: `Concurrent Supplier ${tag} ${i}`,
          instruments: [{ type: 'BANK_ACCOUNT', currency: 'USD', country: 'US', accountHolderName: 'Concurrent Supplier', accountNumber: '987654321012', routingNumber: '021000021' }],
        },
      })),
      ...repeat(10, (i) => ({
        kind: 'read',
        method: 'GET',
        path: ['/v1/transactions?pageSize=5', '/v1/accounts/acct_acme_usd', '/v1/transaction-intents?pageSize=5', `/v1/transaction-intents/${prepared.intentA.id}`, '/v1/users?pageSize=3'][i % 5]!,
      })),
    ],
    9_2026_03 + tag.length,
  );
}

function secondBurst(prepared: Prepared, intentB: string): Call[] {
  return shuffle(
    [
      ...repeat(40, () => ({ kind: 'commit-b', method: 'POST', path: `/v1/transaction-intents/${intentB}/commit`, body: { idempotencyKey: INTENT_B_BODY.idempotencyKey } })),
      ...repeat(40, () => ({ kind: 'cancel-d', method: 'POST', path: `/v1/transaction-intents/${prepared.intentD.id}/cancel` })),
      ...repeat(20, (i) => ({ kind: 'read', method: 'GET', path: i % 2 ? '/v1/accounts/acct_acme_usd' : `/v1/transaction-intents/${intentB}` })),
    ],
    9_2026_04,
  );
}

function count(ctx: AppContext, sqlText: string, ...params: unknown[]): number {
  return (ctx.db.prepare(sqlText).get(...params) as { n: number }).n;
}

function byKind(answers: Answer[], kind: string): Answer[] {
  return answers.filter((answer) => answer.call.kind === kind);
}

function distinct<T>(values: T[]): T[] {
  return [...new Set(values)];
}

/** Every answer of a kind has one of these statuses. */
function statuses(t: Test, answers: Answer[], kind: string, allowed: number[]): void {
  const wrong = byKind(answers, kind).filter((answer) => !allowed.includes(answer.status));
  t.same(
    wrong.map((answer) => `${answer.status} ${answer.text.slice(0, 200)}`),
    [],
    `${kind}: every answer is ${allowed.join(' or ')}`,
  );
}

/** A view of the database: the app's own context, or a connection of the test's own to the file. */
interface Opened {
  ctx: AppContext;
  release(): void;
}

/** Run both bursts against `servers` and check answers and the database (read through `open()`). */
async function scenario(t: Test, servers: string[], prepare: () => Promise<Prepared>, open: () => Opened, tag: string): Promise<void> {
  const agent = new Agent({ connections: 256, pipelining: 1 });
  t.teardown(() => agent.close());
  const prepared = await prepare();

  const before = open();
  const transactionsBefore = count(before.ctx, 'SELECT COUNT(*) AS n FROM transactions');
  before.release();

  const started = Date.now();
  const answers = await fire(servers, firstBurst(prepared, tag), agent);
  t.equal(answers.length, 200, `200 parallel requests over ${servers.length} server(s) in ${Date.now() - started} ms`);
  const fatal = answers.filter((answer) => answer.status >= 500 || /SQLITE|BUSY|locked/i.test(answer.text));
  t.same(fatal.map((answer) => `${answer.call.kind} ${answer.status} ${answer.text.slice(0, 300)}`), [], 'no 5xx, no SQLITE_BUSY');

  // deposit-instruction creation with one idempotencyKey: one request row, the first name in every answer
  statuses(t, answers, 'deposit-instruction', [202]);
  const names = distinct(byKind(answers, 'deposit-instruction').map((answer) => answer.body?.name));
  t.equal(names.length, 1, `every retry answers the same name (${names.join(', ')})`);
  // intent creation with one key: one intent, exactly one 201
  statuses(t, answers, 'intent-create', [200, 201]);
  t.equal(byKind(answers, 'intent-create').filter((answer) => answer.status === 201).length, 1, 'exactly one intent creation answered 201');
  const intentIds = distinct(byKind(answers, 'intent-create').map((answer) => answer.body?.id));
  t.equal(intentIds.length, 1, 'every retry answers the same intent');
  // commit of A with its key: one transaction, the same committed intent every time
  statuses(t, answers, 'commit', [200]);
  t.same(distinct(byKind(answers, 'commit').map((answer) => `${answer.body?.status} ${answer.body?.relatedTransactionId}`)).length, 1, 'every commit answers the same COMMITTED intent');
  t.equal(byKind(answers, 'commit')[0]?.body?.status, 'COMMITTED');
  statuses(t, answers, 'commit-wrong-key', [409]);
  // payout with one Idempotency-Key: one transaction, the same 202 every time
  statuses(t, answers, 'payout', [202]);
  t.equal(distinct(byKind(answers, 'payout').map((answer) => answer.text)).length, 1, 'every payout retry answers the same 202 body');
  // user creation with one externalId: one user, exactly one 201
  statuses(t, answers, 'user', [200, 201]);
  t.equal(byKind(answers, 'user').filter((answer) => answer.status === 201).length, 1, 'exactly one user creation answered 201');
  t.equal(distinct(byKind(answers, 'user').map((answer) => answer.body?.userId)).length, 1, 'every retry answers the same user');
  // simulated deposits are not idempotent: 25 of them
  statuses(t, answers, 'deposit', [202]);
  statuses(t, answers, 'read', [200]);
  statuses(t, answers, 'token', [200]);
  t.equal(distinct(byKind(answers, 'token').map((answer) => answer.body?.accessToken)).length, 10, 'ten distinct tokens');
  // the first read of an enrollment creates it: one enrollment whatever the race
  statuses(t, answers, 'enrollment', [200]);
  statuses(t, answers, 'activate', [200]);
  statuses(t, answers, 'information-requests', [200]);
  const enrollments = distinct([...byKind(answers, 'enrollment'), ...byKind(answers, 'activate')].map((answer) => answer.body?.id));
  t.equal(enrollments.length, prepared.freshUsers.length, 'reads and activations answer one enrollment per user');
  statuses(t, answers, 'beneficiary', [201]);

  const intentB = intentIds[0] as string;
  const second = await fire(servers, secondBurst(prepared, intentB), agent);
  t.same(second.filter((answer) => answer.status >= 500).map((answer) => `${answer.call.kind} ${answer.status} ${answer.text.slice(0, 300)}`), [], 'second burst: no 5xx');
  statuses(t, second, 'commit-b', [200]);
  t.equal(distinct(byKind(second, 'commit-b').map((answer) => answer.body?.relatedTransactionId)).length, 1, 'commits of B answer one transaction');
  statuses(t, second, 'cancel-d', [200, 409]);
  t.equal(byKind(second, 'cancel-d').filter((answer) => answer.status === 200).length, 1, 'exactly one cancel succeeded; the others found it CANCELED (409)');
  statuses(t, second, 'read', [200]);

  // the database: one row per key, nothing duplicated
  const opened = open();
  t.teardown(() => opened.release());
  const ctx = opened.ctx;
  t.equal(count(ctx, 'SELECT COUNT(*) AS n FROM deposit_instruction_requests WHERE idempotency_key = ?', `conc-di-${tag}`), 1, 'one deposit-instruction request for the key');
  t.equal(count(ctx, "SELECT COUNT(*) AS n FROM transaction_intents WHERE idempotency_key = 'conc-intent-b'"), 1, 'one intent for the key');
  t.equal(count(ctx, 'SELECT COUNT(*) AS n FROM transactions WHERE intent_id = ?', prepared.intentA.id), 1, 'intent A: one transaction');
  t.equal(count(ctx, 'SELECT COUNT(*) AS n FROM transactions WHERE intent_id = ?', intentB), 1, 'intent B: one transaction');
  t.equal(count(ctx, "SELECT COUNT(*) AS n FROM idempotency_records WHERE key = ?", `conc-payout-${tag}`), 1, 'one payout record for the Idempotency-Key');
  const payoutTransaction = byKind(answers, 'payout')[0]?.body?.transactionId;
  t.equal(count(ctx, 'SELECT COUNT(*) AS n FROM transactions WHERE id = ?', payoutTransaction), 1, 'the payout transaction exists');
  t.equal(count(ctx, 'SELECT COUNT(*) AS n FROM users WHERE external_id = ?', `conc-user-${tag}`), 1, 'one user for the externalId');
  t.equal(count(ctx, 'SELECT COUNT(*) AS n FROM transactions WHERE debit_reference LIKE ?', `CONC-DEP-${tag}-%`), 20, '20 simulated deposits');
  t.equal(
    count(ctx, 'SELECT COUNT(*) AS n FROM transactions') - transactionsBefore,
    20 + 3,
    'new transactions: 20 deposits, the commits of A and B, one payout',
  );
  t.equal(count(ctx, "SELECT COUNT(*) AS n FROM transaction_intents WHERE id = ? AND status = 'CANCELED'", prepared.intentD.id), 1, 'intent D canceled once');
  for (const user of prepared.freshUsers) {
    t.equal(count(ctx, 'SELECT COUNT(*) AS n FROM enrollments WHERE user_id = ?', user), 1, `one enrollment for ${user}`);
    t.equal(count(ctx, 'SELECT COUNT(*) AS n FROM information_requests WHERE user_id = ?', user), 1, `one information request for ${user}`);
  }
  t.equal(count(ctx, 'SELECT COUNT(*) AS n FROM beneficiaries WHERE business_name LIKE ?', `Concurrent Supplier ${tag} %`), 5, 'five beneficiaries');
  t.equal(count(ctx, 'SELECT COUNT(*) AS n FROM (SELECT reference_number FROM transactions GROUP BY reference_number HAVING COUNT(*) > 1)'), 0, 'no reference number twice');
  t.ok(checkLedger(t, ctx, `after the bursts (${tag})`), 'every balance is the sum of its entries; available never negative');
}

t.test('in-process app on a listener: 200 parallel requests with idempotent retries', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'concurrency-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const dbPath = path.join(dir, 'sandbox.db');
  const sandbox = await buildTestApp({ db: dbPath });
  t.teardown(sandbox.close);
  await sandbox.app.listen({ port: 0, host: '127.0.0.1' });
  const address = sandbox.app.server.address() as { port: number };
  const url = `http://127.0.0.1:${address.port}`;
  await scenario(
    t,
    [url],
    async () => prepareIntents(url),
    () => ({ ctx: sandbox.ctx, release: () => undefined }),
    'inproc',
  );
});

t.test('two server processes on one database file: 200 parallel requests race on SQLite locks', { timeout: 90_000 }, async (t) => {
  await ensureBuilt();
  const dir = mkdtempSync(path.join(tmpdir(), 'concurrency-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const dbPath = path.join(dir, 'sandbox.db');
  // seed the file once, then both processes open it
  freshContext(dbPath).db.close();
  const servers: ServerProcess[] = await Promise.all([startServerProcess({ db: dbPath, clock: FROZEN_AT }), startServerProcess({ db: dbPath, clock: FROZEN_AT })]);
  t.teardown(async () => {
    await Promise.all(servers.map((server) => server.stop()));
  });
  await scenario(
    t,
    servers.map((server) => server.url),
    async () => prepareIntents(servers[0]!.url),
    () => {
      const ctx = freshContext(dbPath);
      return { ctx, release: () => ctx.db.open && ctx.db.close() };
    },
    'twoproc',
  );
  for (const server of servers) t.notMatch(server.output(), /SQLITE_BUSY|database is locked|Error/i, 'nothing alarming in the server log');
});

t.test('two server processes with flowing clocks: every scheduled step runs exactly once', { timeout: 90_000 }, async (t) => {
  // Both processes poll the same jobs table (rail steps of the deposits); each step must run once, none lost.
  await ensureBuilt();
  const dir = mkdtempSync(path.join(tmpdir(), 'concurrency-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const dbPath = path.join(dir, 'sandbox.db');
  freshContext(dbPath).db.close();
  const servers = await Promise.all([startServerProcess({ db: dbPath }), startServerProcess({ db: dbPath })]);
  t.teardown(async () => {
    await Promise.all(servers.map((server) => server.stop()));
  });
  const agent = new Agent({ connections: 256, pipelining: 1 });
  t.teardown(() => agent.close());
  const urls = servers.map((server) => server.url);
  const deposits = repeat(200, (i) => ({
    kind: 'deposit',
    method: 'POST',
    path: '/v1/sandbox/accounts/acct_acme_usd/deposits',
    body: { depositInstructionId: 'di_acme_usd_ach', amount: '1.00', reference: `FLOW-${i}` },
  }));
  const answers = [...(await fire(urls, deposits.slice(0, 100), agent)), ...(await fire(urls, deposits.slice(100), agent))];
  t.same(answers.filter((answer) => answer.status !== 202).map((answer) => `${answer.status} ${answer.text.slice(0, 200)}`), [], '200 deposits accepted');

  // a deposit completes after 1 s of (flowing) emulated time; give both schedulers a few seconds
  const ctx = freshContext(dbPath);
  t.teardown(() => ctx.db.open && ctx.db.close());
  const pending = () => count(ctx, "SELECT COUNT(*) AS n FROM transactions WHERE debit_reference LIKE 'FLOW-%' AND status <> 'COMPLETED'");
  const deadline = Date.now() + 20_000;
  while (pending() > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  t.equal(pending(), 0, 'every deposit completed');
  t.equal(count(ctx, "SELECT COUNT(*) AS n FROM jobs WHERE status = 'FAILED'"), 0, 'no job failed');
  const events = ctx.db
    .prepare(
      `SELECT t.id, SUM(o.event_type = 'transaction_created') AS created, SUM(o.event_type = 'transaction_status_updated') AS updated
         FROM transactions t JOIN outbox o ON o.resource_id = t.id WHERE t.debit_reference LIKE 'FLOW-%' GROUP BY t.id`,
    )
    .all() as Array<{ id: string; created: number; updated: number }>;
  t.equal(events.length, 200, 'events for every deposit');
  t.same(events.filter((row) => row.created !== 1 || row.updated !== 1), [], 'each deposit: one transaction_created, one status update (its step ran once)');
  t.ok(checkLedger(t, ctx, 'after flowing deposits'), 'ledger balances');
  for (const server of servers) t.notMatch(server.output(), /SQLITE_BUSY|database is locked|Error/i, 'nothing alarming in the server log');
});

/** Intent A (to commit in the burst) and D (to cancel), created before the bursts. */
async function prepareIntents(url: string): Promise<Prepared> {
  const agent = new Agent({ connections: 4 });
  try {
    const make = async (key: string, amount: string) => {
      const [answer] = await fire(
        [url],
        [{ kind: 'prepare', method: 'POST', path: '/v1/transaction-intents', body: { idempotencyKey: key, debitAccountId: 'acct_acme_usd', credit: TO_GLOBEX, creditAmount: amount } }],
        agent,
      );
      if (answer!.status !== 201) throw new Error(`prepare intent ${key}: ${answer!.status} ${answer!.text}`);
      return { id: answer!.body.id as string, key };
    };
    const users = await fire(
      [url],
      repeat(4, (i) => ({ kind: 'prepare', method: 'POST', path: '/v1/auth/users', body: { externalId: `fresh-${i}`, type: 'PERSON', name: `Fresh Person ${i}` }, as: MULTI })),
      agent,
    );
    for (const user of users) if (user.status !== 201) throw new Error(`prepare user: ${user.status} ${user.text}`);
    return { intentA: await make('conc-intent-a', '10.00'), intentD: await make('conc-intent-d', '3.00'), freshUsers: users.map((user) => user.body.userId as string) };
  } finally {
    await agent.close();
  }
}
