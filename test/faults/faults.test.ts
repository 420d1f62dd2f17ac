import t from 'tap';
import { buildTestApp, json, AS_JANE, CREDENTIALS, START, type TestApp } from '../helper.js';
import { base64, countTransactions, fund, postPayout, signPayout, transactionsOfIntent } from '../helpers/funding.js';
import { fingerprint, diffFingerprints } from '../helpers/db-state.js';
import { ACCOUNT, PERIOD, STATEMENT_TEST_START, seedStatementScenario } from '../helpers/statements.js';
import { signRequest } from '../../src/lib/hmac.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { prepared } from '../../src/db/connection.js';

// Fault rules on API requests (docs/faults.md#fault-rules): every effect on JSON, payout text and statement
// download routes, matching, seeded determinism, the ambiguous failure, the journal, reset and sessions.

const TO_GLOBEX = { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' };
const DEPOSIT = { depositInstructionId: 'di_acme_usd_ach', amount: '10.00', reference: 'FAULT-TEST' };
const depositUrl = '/v1/sandbox/accounts/acct_acme_usd/deposits';

async function addRule(sandbox: TestApp, body: unknown) {
  const response = await sandbox.app.inject({ method: 'POST', url: '/_emulator/faults', payload: body as object });
  if (response.statusCode !== 201) throw new Error(`rule not added: ${response.statusCode} ${response.body}`);
  return json(response);
}

async function rule(sandbox: TestApp, id: string) {
  return json(await sandbox.app.inject({ method: 'GET', url: `/_emulator/faults/${id}` }));
}

async function journal(sandbox: TestApp, pathPrefix = '/v1') {
  return json(await sandbox.app.inject({ method: 'GET', url: `/_emulator/requests?pathPrefix=${encodeURIComponent(pathPrefix)}` })).data as any[];
}

function intentCount(sandbox: TestApp): number {
  return prepared<{ n: number }>(sandbox.ctx.db, 'SELECT COUNT(*) AS n FROM transaction_intents').get()!.n;
}

/** A signed fetch over real HTTP as usr_acme (the SINGLE_USER key). */
async function signedFetch(base: string, method: string, path: string, body?: unknown) {
  const payload = body === undefined ? '' : JSON.stringify(body);
  const timestamp = String(Date.now());
  const headers: Record<string, string> = {
    'x-service-api-key': CREDENTIALS.single.apiKey,
    'x-service-timestamp': timestamp,
    'x-service-program-id': CREDENTIALS.programmeId,
    'x-service-signature': signRequest({ apiKey: CREDENTIALS.single.apiKey, secret: CREDENTIALS.single.secret, timestamp, method, target: new URL(base + path).pathname + new URL(base + path).search, body: payload }),
  };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return fetch(base + path, { method, headers, body: body === undefined ? undefined : payload });
}

/** The error a client sees when the connection closes without an answer. */
async function connectionError(request: Promise<Response>): Promise<string> {
  try {
    const response = await request;
    return `answered ${response.status}`;
  } catch (error) {
    return String((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message);
  }
}

t.test('create, list, read, delete and clear rules; every bad body is a 400 naming the field', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const created = await addRule(sandbox, { match: { method: 'post', path: '/v1/transaction-intents/*/commit' }, effect: { type: 'status', status: 503 }, times: 2 });
  t.match(created, { id: 'flt_1', match: { method: 'POST', path: '/v1/transaction-intents/*/commit' }, effect: { type: 'status', status: 503 }, times: 2, probability: null, seed: 'service-sandbox:flt_1', matched: 0, fired: 0, remaining: 2, active: true });
  const second = await addRule(sandbox, { effect: { type: 'latency', ms: 1 }, probability: 0.5, seed: 'my-seed' });
  t.match(second, { id: 'flt_2', match: {}, times: null, probability: 0.5, seed: 'my-seed', remaining: null });

  t.same(json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/faults' })).data.map((r: any) => r.id), ['flt_1', 'flt_2']);
  t.equal((await rule(sandbox, 'flt_2')).seed, 'my-seed');
  const unknown = await sandbox.app.inject({ method: 'GET', url: '/_emulator/faults/flt_99' });
  t.equal(unknown.statusCode, 404);
  t.match(json(unknown), { errorCode: 'NOT_FOUND', message: /No fault rule flt_99/ });
  t.equal((await sandbox.app.inject({ method: 'DELETE', url: '/_emulator/faults/flt_1' })).statusCode, 204);
  t.equal((await sandbox.app.inject({ method: 'DELETE', url: '/_emulator/faults/flt_1' })).statusCode, 404, 'deleted once');
  t.equal((await sandbox.app.inject({ method: 'DELETE', url: '/_emulator/faults' })).statusCode, 204);
  t.same(json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/faults' })).data, []);
  t.equal((await addRule(sandbox, { effect: { type: 'drop' } })).id, 'flt_3', 'ids keep counting after a clear');

  const bad: Array<[string, unknown, string]> = [
    ['no effect', {}, 'effect'],
    ['unknown effect', { effect: { type: 'explode' } }, 'effect.type'],
    ['latency without ms', { effect: { type: 'latency' } }, 'effect.ms'],
    ['latency with ms and a range', { effect: { type: 'latency', ms: 5, minMs: 1, maxMs: 9 } }, 'effect.ms'],
    ['half a range', { effect: { type: 'latency', minMs: 1 } }, 'effect.maxMs'],
    ['range upside down', { effect: { type: 'latency', minMs: 9, maxMs: 1 } }, 'effect.minMs'],
    ['latency over a minute', { effect: { type: 'latency', ms: 60_001 } }, 'effect.ms'],
    ['status not offered', { effect: { type: 'status', status: 418 } }, 'effect.status'],
    ['ambiguous 429', { effect: { type: 'ambiguous', status: 429 } }, 'effect.status'],
    ['probability above 1', { effect: { type: 'drop' }, probability: 1.5 }, 'probability'],
    ['times 0', { effect: { type: 'drop' }, times: 0 }, 'times'],
    ['unknown match field', { match: { host: 'x' }, effect: { type: 'drop' } }, 'match.host'],
    ['path without a slash', { match: { path: 'v1/accounts' }, effect: { type: 'drop' } }, 'match.path'],
    ['method with a digit', { match: { method: 'G3T' }, effect: { type: 'drop' } }, 'match.method'],
    ['unknown top-level field', { effect: { type: 'drop' }, when: 'now' }, ''],
    ['empty seed', { effect: { type: 'drop' }, seed: '' }, 'seed'],
  ];
  for (const [name, body, field] of bad) {
    const response = await sandbox.app.inject({ method: 'POST', url: '/_emulator/faults', payload: body as object });
    t.equal(response.statusCode, 400, name);
    const answer = json(response);
    t.ok(answer.message && !/\.type\.type/.test(answer.message), `${name}: ${answer.message}`);
    if (field) t.ok(answer.validationErrors?.some((item: any) => item.fieldRef === field), `${name} names ${field}: ${JSON.stringify(answer.validationErrors)}`);
  }
  const malformed = await sandbox.app.inject({ method: 'POST', url: '/_emulator/faults', payload: '{"effect":', headers: { 'content-type': 'application/json' } });
  t.equal(malformed.statusCode, 400, 'malformed JSON');
  t.equal(json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/faults' })).data.length, 1, 'no refused body added a rule');
});

t.test('at most 100 rules: the 101st is a 409 and adds nothing', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  for (let i = 0; i < 100; i++) await addRule(sandbox, { match: { path: `/v1/never/${i}` }, effect: { type: 'drop' } });
  const refused = await sandbox.app.inject({ method: 'POST', url: '/_emulator/faults', payload: { effect: { type: 'drop' } } });
  t.equal(refused.statusCode, 409);
  t.match(json(refused).message, /at most 100 fault rules/);
  t.equal(json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/faults' })).data.length, 100);
  t.equal((await sandbox.request('GET', '/v1/accounts')).statusCode, 200, 'rules on other paths leave this one alone');
});

t.test('status effects: the error body, Retry-After, nothing processed, next N only', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  await addRule(sandbox, { match: { method: 'POST', path: '/v1/sandbox/accounts/*/deposits' }, effect: { type: 'status', status: 429 }, times: 2 });
  const before = fingerprint(sandbox.ctx.db);
  for (let i = 0; i < 2; i++) {
    const limited = await sandbox.request('POST', depositUrl, DEPOSIT);
    t.equal(limited.statusCode, 429);
    t.equal(limited.headers['retry-after'], '1', 'Retry-After 1 by default on 429');
    t.match(json(limited), { errorCode: 'TOO_MANY_REQUESTS', message: /fault rule flt_1: nothing was processed/ });
  }
  t.same(diffFingerprints(before, fingerprint(sandbox.ctx.db)), [], 'a faulted request wrote nothing');
  t.equal((await sandbox.request('POST', depositUrl, DEPOSIT)).statusCode, 202, 'the third is processed: times 2 spent');
  t.match(await rule(sandbox, 'flt_1'), { matched: 2, fired: 2, remaining: 0, active: false });

  await addRule(sandbox, { match: { path: '/v1/accounts' }, effect: { type: 'status', status: 503, retryAfterSeconds: 7, message: 'Down for maintenance' }, times: 1 });
  const unavailable = await sandbox.request('GET', '/v1/accounts');
  t.equal(unavailable.statusCode, 503);
  t.equal(unavailable.headers['retry-after'], '7');
  t.same(json(unavailable), { message: 'Down for maintenance' }, 'no errorCode the interface does not list for a 503');
  await addRule(sandbox, { match: { path: '/v1/accounts' }, effect: { type: 'status', status: 500 }, times: 1 });
  const internal = await sandbox.request('GET', '/v1/accounts');
  t.match(json(internal), { errorCode: 'INTERNAL_ERROR' });
  t.equal(internal.headers['retry-after'], undefined, 'no Retry-After on a 500 unless asked');
  await addRule(sandbox, { match: { path: '/v1/accounts' }, effect: { type: 'status', status: 502 }, times: 1 });
  t.equal((await sandbox.request('GET', '/v1/accounts')).statusCode, 502);
  t.equal((await sandbox.request('GET', '/v1/accounts')).statusCode, 200);
});

t.test('matching: method, path patterns, user, body fields, Base64 payout text; the control plane is never matched', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  fund(sandbox.ctx, 'acct_acme_usd', '5000.00');
  await addRule(sandbox, { match: { method: 'GET', path: '/v1/accounts/*' }, effect: { type: 'status', status: 503 } });
  t.equal((await sandbox.request('GET', '/v1/accounts/acct_acme_usd')).statusCode, 503, '* is one segment');
  t.equal((await sandbox.request('GET', '/v1/accounts')).statusCode, 200, '* needs a segment');
  t.equal((await sandbox.request('GET', '/v1/accounts/acct_acme_usd/statement?startDate=2026-03-01&endDate=2026-03-01')).statusCode, 200, '* does not span segments');
  await sandbox.app.inject({ method: 'DELETE', url: '/_emulator/faults' });

  await addRule(sandbox, { match: { path: '/v1/accounts/**' }, effect: { type: 'status', status: 503 } });
  t.equal((await sandbox.request('GET', '/v1/accounts/acct_acme_usd/statement?startDate=2026-03-01&endDate=2026-03-01')).statusCode, 503, '** spans segments');
  await sandbox.app.inject({ method: 'DELETE', url: '/_emulator/faults' });

  await addRule(sandbox, { match: { userId: 'usr_jane' }, effect: { type: 'status', status: 503 } });
  t.equal((await sandbox.request('GET', '/v1/accounts')).statusCode, 200, 'usr_acme is not matched');
  t.equal((await sandbox.request('GET', '/v1/accounts', undefined, AS_JANE)).statusCode, 503, 'usr_jane is');
  await sandbox.app.inject({ method: 'DELETE', url: '/_emulator/faults' });

  await addRule(sandbox, { match: { body: { creditAmount: '13.00', 'credit.beneficiaryId': 'ben_globex' } }, effect: { type: 'status', status: 503 } });
  const intent = (amount: string, key: string) => sandbox.request('POST', '/v1/transaction-intents', { idempotencyKey: key, debitAccountId: 'acct_acme_usd', credit: TO_GLOBEX, creditAmount: amount });
  t.equal((await intent('13.00', 'match-body-1')).statusCode, 503, 'body fields and a dotted path match');
  t.equal((await intent('14.00', 'match-body-2')).statusCode, 201, 'another amount does not');
  await sandbox.app.inject({ method: 'DELETE', url: '/_emulator/faults' });

  await addRule(sandbox, { match: { path: '/v1/payout-origination/*', bodyContains: 'INV-FAULT' }, effect: { type: 'status', status: 503 } });
  const payout = (reference: string) =>
    postPayout(sandbox, { body: base64(JSON.stringify({ entityId: 'acct_acme_usd', beneficiaryId: 'ben_globex', amount: '1.00', currency: 'USD', reference })) });
  t.equal((await payout('INV-FAULT-1')).statusCode, 503, 'bodyContains looks inside the Base64 text body');
  t.equal((await payout('INV-OK-1')).statusCode, 202);

  await sandbox.app.inject({ method: 'DELETE', url: '/_emulator/faults' });
  await addRule(sandbox, { effect: { type: 'status', status: 503 } });
  t.equal((await sandbox.request('GET', '/v1/accounts')).statusCode, 503, 'no match: every API request');
  t.equal((await sandbox.app.inject({ method: 'GET', url: '/_emulator/health' })).statusCode, 200, 'the control plane is never faulted');
  t.equal((await sandbox.app.inject({ method: 'GET', url: '/_emulator/faults' })).statusCode, 200);
  t.equal((await sandbox.app.inject({ method: 'GET', url: '/openapi.json' })).statusCode, 200);
  const refused = await sandbox.request('GET', '/v1/accounts', undefined, { apiKey: 'pk_nope', secret: 'x' });
  t.equal(refused.statusCode, 401, 'a request refused by authentication is answered as usual');
});

t.test('seeded probability: same seed same faults, another seed other faults, 0 never and 1 always', async (t) => {
  async function pattern(seed: string | undefined, probability: number): Promise<string> {
    const sandbox = await buildTestApp();
    try {
      await addRule(sandbox, { match: { path: '/v1/accounts' }, effect: { type: 'status', status: 503 }, probability, ...(seed ? { seed } : {}) });
      let out = '';
      for (let i = 0; i < 40; i++) out += (await sandbox.request('GET', '/v1/accounts')).statusCode === 503 ? 'x' : '.';
      return out;
    } finally {
      await sandbox.close();
    }
  }
  const first = await pattern('seed-a', 0.5);
  t.equal(await pattern('seed-a', 0.5), first, `same seed, same faults: ${first}`);
  t.not(await pattern('seed-b', 0.5), first, 'another seed, another pattern');
  const fired = first.split('x').length - 1;
  t.ok(fired > 5 && fired < 35, `about half fire: ${fired} of 40`);
  t.equal(await pattern(undefined, 0.5), await pattern(undefined, 0.5), 'the default seed is fixed too');
  t.equal(await pattern('s', 0), '.'.repeat(40));
  t.equal(await pattern('s', 1), 'x'.repeat(40));

  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  await addRule(sandbox, { match: { path: '/v1/accounts' }, effect: { type: 'status', status: 503 }, probability: 0.5, times: 3, seed: 'seed-a' });
  let statuses = '';
  for (let i = 0; i < 40; i++) statuses += (await sandbox.request('GET', '/v1/accounts')).statusCode === 503 ? 'x' : '.';
  t.equal(statuses.split('x').length - 1, 3, 'probability and times: fires until 3 fired');
  t.equal(statuses.slice(0, statuses.lastIndexOf('x') + 1), first.slice(0, statuses.lastIndexOf('x') + 1), 'the same draws as without times');
});

t.test('latency: fixed and a seeded range, added up, then processed; in the journal', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  await addRule(sandbox, { match: { path: '/v1/accounts' }, effect: { type: 'latency', ms: 120 }, times: 1 });
  await addRule(sandbox, { match: { path: '/v1/accounts' }, effect: { type: 'latency', minMs: 10, maxMs: 40 }, seed: 'range' });
  const started = performance.now();
  const slow = await sandbox.request('GET', '/v1/accounts');
  const elapsed = performance.now() - started;
  t.equal(slow.statusCode, 200, 'processed after the wait');
  // libuv times a timer from the loop's cached time, which can be a few ms older than performance.now() here: a
  // margin for that, not an assumption about the machine's speed (an unheld request takes a few ms)
  t.ok(elapsed >= 125, `waited ${elapsed.toFixed(0)} ms (120 + at least 10, less the loop-time margin)`);
  for (let i = 0; i < 4; i++) await sandbox.request('GET', '/v1/accounts');
  const entries = (await journal(sandbox)).filter((entry) => entry.path === '/v1/accounts');
  t.equal(entries.length, 5);
  t.match(entries[0].faults, [{ ruleId: 'flt_1', type: 'latency', detail: '120 ms added' }, { ruleId: 'flt_2', type: 'latency', detail: /^\d+ ms added$/ }]);
  const drawn = entries.map((entry) => Number(/^(\d+) ms/.exec(entry.faults.at(-1).detail)![1]));
  t.ok(drawn.every((ms) => ms >= 10 && ms <= 40), `range draws ${drawn.join(', ')}`);
  t.ok(entries.slice(1).every((entry) => entry.faults.length === 1), 'the fixed rule fired once (times 1)');

  const again = await buildTestApp();
  t.teardown(again.close);
  await addRule(again, { match: { path: '/v1/accounts' }, effect: { type: 'latency', ms: 1 }, times: 1 });
  await addRule(again, { match: { path: '/v1/accounts' }, effect: { type: 'latency', minMs: 10, maxMs: 40 }, seed: 'range' });
  for (let i = 0; i < 5; i++) await again.request('GET', '/v1/accounts');
  const redrawn = (await journal(again)).map((entry) => Number(/^(\d+) ms/.exec(entry.faults.at(-1).detail)![1]));
  t.same(redrawn, drawn, 'same seed, same latencies');
});

t.test('drop and ambiguous failures over real HTTP: the client retries and gets the stored result, exactly once', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  fund(sandbox.ctx, 'acct_acme_usd', '5000.00');
  const base = await sandbox.app.listen({ port: 0, host: '127.0.0.1' });

  // drop before processing: nothing written, no answer
  await addRule(sandbox, { match: { method: 'POST', path: '/v1/sandbox/accounts/*/deposits' }, effect: { type: 'drop' }, times: 1 });
  const before = fingerprint(sandbox.ctx.db);
  t.equal(await connectionError(signedFetch(base, 'POST', depositUrl, DEPOSIT)), 'UND_ERR_SOCKET', 'the connection closes without an answer');
  t.same(diffFingerprints(before, fingerprint(sandbox.ctx.db)), [], 'a dropped request wrote nothing');
  t.equal((await signedFetch(base, 'POST', depositUrl, DEPOSIT)).status, 202, 'the next is processed');

  // ambiguous on intent creation, then on its commit: retried many times, one intent and one transaction
  const intentsBefore = intentCount(sandbox);
  await addRule(sandbox, { match: { method: 'POST', path: '/v1/transaction-intents' }, effect: { type: 'ambiguous' }, times: 1 });
  const body = { idempotencyKey: 'ambiguous-intent-1', debitAccountId: 'acct_acme_usd', credit: TO_GLOBEX, creditAmount: '100.00' };
  t.equal(await connectionError(signedFetch(base, 'POST', '/v1/transaction-intents', body)), 'UND_ERR_SOCKET', 'created, then the connection closed');
  t.equal(intentCount(sandbox), intentsBefore + 1, 'the intent was committed before the connection closed');
  const retried = await signedFetch(base, 'POST', '/v1/transaction-intents', body);
  t.equal(retried.status, 200, 'the retry with the same key answers the stored intent');
  const intent = await retried.json();
  t.equal(intentCount(sandbox), intentsBefore + 1, 'still one intent');

  await addRule(sandbox, { match: { method: 'POST', path: '/v1/transaction-intents/*/commit' }, effect: { type: 'ambiguous', status: 502 }, times: 3 });
  const commitPath = `/v1/transaction-intents/${intent.id}/commit`;
  for (let i = 0; i < 3; i++) {
    const lost = await signedFetch(base, 'POST', commitPath, { idempotencyKey: body.idempotencyKey });
    t.equal(lost.status, 502, `attempt ${i + 1}: 502 after the commit`);
    t.match(await lost.json(), { message: /fault rule flt_3: the request was processed before this answer/ });
  }
  const committed = await signedFetch(base, 'POST', commitPath, { idempotencyKey: body.idempotencyKey });
  t.equal(committed.status, 200);
  const answer = await committed.json();
  t.equal(answer.status, 'COMMITTED');
  t.equal(transactionsOfIntent(sandbox, intent.id).length, 1, 'four commits, three answers lost: exactly one transaction');
  t.same(transactionsOfIntent(sandbox, intent.id), [answer.relatedTransactionId]);

  // the journal records each fired fault, a drop with status 0
  const entries = await journal(sandbox);
  const dropped = entries.filter((entry) => entry.status === 0);
  t.equal(dropped.length, 2, 'the drop and the ambiguous drop');
  t.match(dropped[0], { method: 'POST', path: depositUrl, faults: [{ ruleId: 'flt_1', type: 'drop', detail: 'connection closed before processing' }] });
  t.match(dropped[1], { path: '/v1/transaction-intents', faults: [{ ruleId: 'flt_2', type: 'ambiguous', detail: 'processed (201) and committed, then the connection was closed' }] });
  const lostCommits = entries.filter((entry) => entry.path === commitPath && entry.status === 502);
  t.equal(lostCommits.length, 3);
  t.match(lostCommits[0].faults, [{ ruleId: 'flt_3', type: 'ambiguous', detail: 'processed (200) and committed, then 502 answered' }]);
});

t.test('the payout text body: ambiguous 503 then a retry with the same Idempotency-Key replays the first answer', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  fund(sandbox.ctx, 'acct_acme_usd', '5000.00');
  await addRule(sandbox, { match: { method: 'POST', path: '/v1/payout-origination/json' }, effect: { type: 'ambiguous', status: 503 }, times: 2 });
  const payload = base64(JSON.stringify({ entityId: 'acct_acme_usd', beneficiaryId: 'ben_globex', amount: '75.00', currency: 'USD', reference: 'INV-AMBIGUOUS' }));
  const transactionsBefore = countTransactions(sandbox);
  for (let i = 0; i < 2; i++) {
    const lost = await postPayout(sandbox, { body: payload, idempotencyKey: 'payout-ambiguous-0001' });
    t.equal(lost.statusCode, 503);
    t.equal(lost.headers['content-type'], 'application/json; charset=utf-8');
  }
  const replayed = await postPayout(sandbox, { body: payload, idempotencyKey: 'payout-ambiguous-0001' });
  t.equal(replayed.statusCode, 202);
  t.equal(countTransactions(sandbox), transactionsBefore + 1, 'three submissions, one payout transaction');
  t.equal(json(replayed).transactionId, prepared<{ id: string }>(sandbox.ctx.db, 'SELECT id FROM transactions ORDER BY rowid DESC LIMIT 1').get()!.id);

  await addRule(sandbox, { match: { path: '/v1/payout-origination/*' }, effect: { type: 'status', status: 429, retryAfterSeconds: 2 }, times: 1 });
  const url = '/v1/payout-origination/json';
  const headers = { ...signPayout(url, payload), 'content-type': 'text/plain', 'idempotency-key': 'payout-ambiguous-0002' };
  const limited = await sandbox.app.inject({ method: 'POST', url, payload, headers });
  t.equal(limited.statusCode, 429);
  t.equal(limited.headers['retry-after'], '2');
  t.equal(countTransactions(sandbox), transactionsBefore + 1, 'the 429 processed nothing');
  t.equal((await sandbox.app.inject({ method: 'POST', url, payload, headers: { ...signPayout(url, payload), 'content-type': 'text/plain', 'idempotency-key': 'payout-ambiguous-0002' } })).statusCode, 202, 'the same key after the 429 is processed once');
});

t.test('statement downloads: a status before the file, an ambiguous 500 instead of it', async (t) => {
  const sandbox = await buildTestApp({ start: STATEMENT_TEST_START });
  t.teardown(sandbox.close);
  seedStatementScenario(sandbox.ctx);
  const link = json(await sandbox.request('GET', `/v1/accounts/${ACCOUNT}/statement?startDate=${PERIOD.startDate}&endDate=${PERIOD.endDate}&format=pdf`)).url as string;
  const target = new URL(link).pathname + new URL(link).search;

  await addRule(sandbox, { match: { path: '/v1/statement-files/*' }, effect: { type: 'status', status: 503 }, times: 1 });
  const unavailable = await sandbox.app.inject({ method: 'GET', url: target });
  t.equal(unavailable.statusCode, 503);
  t.equal(unavailable.headers['content-disposition'], undefined);

  await addRule(sandbox, { match: { path: '/v1/statement-files/*' }, effect: { type: 'ambiguous', status: 500 }, times: 1 });
  const lost = await sandbox.app.inject({ method: 'GET', url: target });
  t.equal(lost.statusCode, 500);
  t.equal(lost.headers['content-type'], 'application/json; charset=utf-8', 'the error body, not the PDF');
  t.equal(lost.headers['content-disposition'], undefined, 'no attachment header left over');
  t.match(json(lost), { errorCode: 'INTERNAL_ERROR' });

  const file = await sandbox.app.inject({ method: 'GET', url: target });
  t.equal(file.statusCode, 200);
  t.equal(file.rawPayload.subarray(0, 5).toString(), '%PDF-', 'the file once the rules are spent');
});

t.test('reset clears the rules and numbers from flt_1 again', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  await addRule(sandbox, { effect: { type: 'status', status: 503 } });
  await addRule(sandbox, { effect: { type: 'status', status: 503 } });
  t.equal((await sandbox.app.inject({ method: 'POST', url: '/_emulator/reset' })).statusCode, 200);
  t.same(json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/faults' })).data, []);
  t.equal((await sandbox.request('GET', '/v1/accounts')).statusCode, 200);
  t.equal((await addRule(sandbox, { effect: { type: 'drop' }, times: 1 })).id, 'flt_1');
});

t.test('sessions: a rule acts only in the sandbox that holds it', async (t) => {
  const server: RunningServer = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent', clock: START } as never });
  t.teardown(() => server.close());
  const created = await fetch(`${server.url}/_emulator/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  const session = (await created.json()) as { id: string; baseUrl: string };
  const prefix = new URL(session.baseUrl).pathname;

  const add = await fetch(`${session.baseUrl}/_emulator/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ match: { path: '/v1/accounts' }, effect: { type: 'status', status: 503 } }),
  });
  t.equal(add.status, 201);
  t.equal((await signedFetch(session.baseUrl, 'GET', '/v1/accounts')).status, 503, 'the session path is matched without its prefix');
  t.equal((await signedFetch(server.url, 'GET', '/v1/accounts')).status, 200, 'the root has no rule');
  t.same(((await (await fetch(`${server.url}/_emulator/faults`)).json()) as any).data, []);
  const entries = ((await (await fetch(`${session.baseUrl}/_emulator/requests?pathPrefix=/v1`)).json()) as any).data;
  t.match(entries, [{ path: '/v1/accounts', status: 503, faults: [{ ruleId: 'flt_1', type: 'status' }] }]);
  t.ok(prefix.startsWith('/_sessions/'));
});

t.test('act-as is not subject to fault rules (docs/faults.md#what-rules-never-touch); a client still is', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const actAs = (path: string, method = 'GET', body?: unknown) =>
    sandbox.app.inject({ method: 'POST', url: '/_emulator/act-as', payload: { userId: 'usr_acme', method, path, ...(body === undefined ? {} : { body }) } });
  await addRule(sandbox, { match: { path: '/v1/accounts' }, effect: { type: 'status', status: 503 }, times: 1 });
  await addRule(sandbox, { match: { path: '/v1/accounts' }, effect: { type: 'drop' }, times: 1 });
  await addRule(sandbox, { match: { path: '/v1/sandbox/accounts/acct_acme_usd/deposits' }, effect: { type: 'ambiguous' } });
  for (let i = 0; i < 3; i += 1) {
    const answer = await actAs('/v1/accounts');
    t.equal(answer.statusCode, 200);
    t.match(json(answer), { status: 200, body: { data: Array }, actedAs: { userId: 'usr_acme' } }, `act-as ${i + 1}: the real answer`);
  }
  const deposit = json(await actAs('/v1/sandbox/accounts/acct_acme_usd/deposits', 'POST', { depositInstructionId: 'di_acme_usd_ach', amount: '5.00' }));
  t.equal(deposit.status, 202, 'an act-as write under an ambiguous rule answers what it did');
  t.same([(await rule(sandbox, 'flt_1')).fired, (await rule(sandbox, 'flt_2')).fired, (await rule(sandbox, 'flt_3')).fired], [0, 0, 0], 'no rule fired');
  t.equal((await sandbox.request('GET', '/v1/accounts')).statusCode, 503, "a client's request is faulted");
  const spoofed = await sandbox.app.inject({ method: 'GET', url: '/v1/accounts', headers: { ...sandbox.sign('GET', '/v1/accounts'), 'x-sandbox-internal-call': 'guess' } }).catch((error: Error) => error);
  t.ok(spoofed instanceof Error, "a client that guesses the internal header is still dropped (the second rule)");
});

t.test('concurrent requests: times is exact, and a 429 storm with backoff ends', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  await addRule(sandbox, { match: { path: '/v1/accounts' }, effect: { type: 'status', status: 503 }, times: 5 });
  const statuses = await Promise.all(Array.from({ length: 20 }, () => sandbox.request('GET', '/v1/accounts').then((response) => response.statusCode)));
  t.equal(statuses.filter((status) => status === 503).length, 5, 'exactly 5 of 20 concurrent requests faulted');
  t.equal(statuses.filter((status) => status === 200).length, 15);

  // a client that honours Retry-After gets through once the storm (3 answers) is over
  await addRule(sandbox, { match: { path: '/v1/transactions' }, effect: { type: 'status', status: 429, retryAfterSeconds: 0 }, times: 3 });
  let attempts = 0;
  let status = 0;
  while (attempts < 10) {
    attempts += 1;
    const response = await sandbox.request('GET', '/v1/transactions?pageSize=1');
    status = response.statusCode;
    if (status !== 429) break;
    t.equal(response.headers['retry-after'], '0');
  }
  t.equal(status, 200);
  t.equal(attempts, 4, 'three 429s, then the answer');
});

t.test('every effect on every kind of route over real HTTP: JSON, the payout text body, a statement download', async (t) => {
  const sandbox = await buildTestApp({ start: STATEMENT_TEST_START });
  t.teardown(sandbox.close);
  seedStatementScenario(sandbox.ctx);
  fund(sandbox.ctx, 'acct_acme_usd', '5000.00');
  const base = await sandbox.app.listen({ port: 0, host: '127.0.0.1' });
  const link = json(await sandbox.request('GET', `/v1/accounts/${ACCOUNT}/statement?startDate=${PERIOD.startDate}&endDate=${PERIOD.endDate}&format=csv`)).url as string;
  const statementTarget = new URL(link).pathname + new URL(link).search;
  let payoutNumber = 0;

  const kinds: Array<{ name: string; path: string; send: () => Promise<Response>; ok: number }> = [
    { name: 'JSON', path: '/v1/accounts', send: () => signedFetch(base, 'GET', '/v1/accounts'), ok: 200 },
    {
      name: 'payout text body',
      path: '/v1/payout-origination/json',
      send: () => {
        payoutNumber += 1;
        const body = base64(JSON.stringify({ entityId: 'acct_acme_usd', beneficiaryId: 'ben_globex', amount: '1.00', currency: 'USD', reference: `MATRIX-${payoutNumber}` }));
        const url = '/v1/payout-origination/json';
        return fetch(base + url, { method: 'POST', body, headers: { ...signPayout(url, body), 'content-type': 'text/plain', 'idempotency-key': `matrix-payout-${payoutNumber}` } });
      },
      ok: 202,
    },
    { name: 'statement download', path: '/v1/statement-files/*', send: () => fetch(base + statementTarget), ok: 200 },
  ];
  const effects: Array<{ name: string; effect: unknown; expect: (outcome: { status: number | string; contentType: string | null; ms: number }) => boolean }> = [
    { name: 'latency', effect: { type: 'latency', ms: 60 }, expect: (o) => o.ms >= 55 }, // 5 ms: libuv's cached loop time
    { name: 'status', effect: { type: 'status', status: 503 }, expect: (o) => o.status === 503 && o.contentType === 'application/json; charset=utf-8' },
    { name: 'drop', effect: { type: 'drop' }, expect: (o) => o.status === 'UND_ERR_SOCKET' },
    { name: 'ambiguous drop', effect: { type: 'ambiguous' }, expect: (o) => o.status === 'UND_ERR_SOCKET' },
    { name: 'ambiguous 504', effect: { type: 'ambiguous', status: 504 }, expect: (o) => o.status === 504 && o.contentType === 'application/json; charset=utf-8' },
  ];
  for (const kind of kinds) {
    for (const { name, effect, expect } of effects) {
      const before = countTransactions(sandbox);
      await addRule(sandbox, { match: { path: kind.path }, effect, times: 1 });
      const started = performance.now();
      let outcome: { status: number | string; contentType: string | null; ms: number };
      try {
        const response = await kind.send();
        await response.arrayBuffer();
        outcome = { status: response.status, contentType: response.headers.get('content-type'), ms: performance.now() - started };
      } catch (error) {
        outcome = { status: String((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message), contentType: null, ms: performance.now() - started };
      }
      t.ok(expect(outcome), `${kind.name}, ${name}: ${JSON.stringify(outcome)}`);
      const committed = countTransactions(sandbox) - before;
      const processed = name === 'latency' || name.startsWith('ambiguous');
      if (kind.name === 'payout text body') t.equal(committed, processed ? 1 : 0, `${kind.name}, ${name}: ${processed ? 'processed once' : 'nothing processed'}`);
      const next = await kind.send();
      t.equal(next.status, kind.ok, `${kind.name}: the next request after ${name} is answered as usual`);
      await next.arrayBuffer();
    }
  }
});
