import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { buildTestApp, CREDENTIALS, json, START } from '../helper.js';
import { fingerprint, diffFingerprints } from '../helpers/db-state.js';
import { startReceiver, type ReceivedRequest } from '../helpers/receiver.js';
import { CLI, ensureBuilt } from '../helpers/server-process.js';
import { verifyWebhookSignature } from '../../src/webhook-verify.js';
import { startServer } from '../../src/server.js';
import type { Config } from '../../src/config.js';
import { plainNode } from '../helpers/node-child.js';

// The receiver check (docs/faults.md#receiver-check): POST /_emulator/webhooks/check and `service-sandbox
// check-receiver` against receivers written here as real HTTP servers: a correct one, one that never checks
// signatures, a slow one and one that folds the query string into its signature check.

const WEBHOOK = CREDENTIALS.webhook;
const OTHER_WEBHOOK = { apiKey: 'wk_other', secret: 'whsec_other_secret' };
const CASES = ['valid', 'bad-signature', 'tampered-body', 'stale-timestamp', 'future-timestamp', 'unknown-api-key', 'duplicate', 'query-string'];
const REFUSAL_CASES = ['bad-signature', 'tampered-body', 'stale-timestamp', 'future-timestamp', 'unknown-api-key'];

interface TestReceiver {
  url: string;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

type Decide = (request: ReceivedRequest) => { status: number; body?: string; delayMs?: number };

/** The shared test receiver (test/helpers/receiver.ts) answering as `decide` says, closed with the test. */
async function startTestReceiver(t: Test, decide: Decide, pathName = '/webhooks'): Promise<TestReceiver> {
  const receiver = await startReceiver({ path: pathName, answer: (request) => decide(request) });
  t.teardown(() => receiver.close());
  return { url: receiver.url, received: receiver.requests, close: () => receiver.close() };
}

/** What docs/webhooks.md#verifying-deliveries-in-your-app asks: the key, the signature and its time, then dedupe on eventId. */
function correctReceiver(credentials: { apiKey: string; secret: string } = WEBHOOK): Decide {
  const seen = new Set<string>();
  return (request) => {
    const h = request.headers;
    if (h['x-service-api-key'] !== credentials.apiKey) return { status: 401, body: 'unknown key' };
    const ok = verifyWebhookSignature({
      apiKey: h['x-service-api-key'],
      secret: credentials.secret,
      timestamp: h['x-service-timestamp'] as string | undefined,
      signature: h['x-service-signature'] as string | undefined,
      path: request.url,
      rawBody: request.rawBody,
    });
    if (!ok) return { status: 401, body: 'bad signature' };
    const eventId = request.body.metadata.eventId as string;
    if (seen.has(eventId)) return { status: 200, body: 'duplicate' };
    seen.add(eventId);
    return { status: 204 };
  };
}

/** Accepts everything: never looks at the signature, its time or the key (still dedupes). */
const naiveReceiver: Decide = () => ({ status: 200, body: '{"received":true}' });

/** Checks like the correct one, but signs over the request target with its query string (the mistake of case 8). */
function queryFoldingReceiver(): Decide {
  const correct = correctReceiver();
  return (request) => {
    const h = request.headers;
    const timestamp = String(h['x-service-timestamp']);
    const expected = createHmac('sha256', WEBHOOK.secret).update(`${h['x-service-api-key']}${timestamp}POST${request.url}${request.rawBody.toString('utf8')}`).digest('hex');
    if (expected !== h['x-service-signature']) return { status: 401, body: 'signature over path and query does not match' };
    return correct(request);
  };
}

async function check(sandbox: Awaited<ReturnType<typeof buildTestApp>>, body?: unknown, query = '') {
  return sandbox.app.inject({
    method: 'POST',
    url: `/_emulator/webhooks/check${query}`,
    ...(body === undefined ? {} : { payload: body as object }),
  });
}

function failedNames(report: any): string[] {
  return report.cases.filter((item: any) => !item.passed).map((item: any) => item.name);
}

t.test('a correct receiver passes every case, sent in order, signed as the sender signs, and nothing is written', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const receiver = await startTestReceiver(t, correctReceiver());
  const before = fingerprint(sandbox.ctx.db);
  const logBefore = json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/webhooks/deliveries' })).totalRecords;

  const response = await check(sandbox, { url: receiver.url });
  t.equal(response.statusCode, 200);
  t.match(response.headers['content-type'], /^application\/json/);
  const report = json(response);
  t.match(report, { url: receiver.url, programId: 'prg_sandbox', timeoutMs: 10000, passed: true, passedCount: 8, failedCount: 0 });
  t.same(report.cases.map((item: any) => item.name), CASES, 'the eight cases in their fixed order');
  t.same(report.cases.map((item: any) => item.number), [1, 2, 3, 4, 5, 6, 7, 8]);
  t.same(report.cases.map((item: any) => item.expected), ['ACKNOWLEDGED', 'REFUSED', 'REFUSED', 'REFUSED', 'REFUSED', 'REFUSED', 'ACKNOWLEDGED', 'ACKNOWLEDGED']);
  for (const item of report.cases) {
    t.equal(item.passed, true, `${item.name} passed: ${item.reason}`);
    t.match(item.reason, item.expected === 'ACKNOWLEDGED' ? /^acknowledged with 2\d\d in \d+ ms$/ : /^refused with 401 in \d+ ms$/, item.name);
    t.type(item.got.latencyMs, 'number');
    t.equal(item.got.error, null);
  }
  t.same(report.cases.map((item: any) => item.got.status), [204, 401, 401, 401, 401, 401, 200, 204]);
  t.equal(report.cases[1].got.body, 'bad signature', 'the first bytes of the answer');
  t.equal(report.cases[5].got.body, 'unknown key');

  // what the receiver saw: eight requests in the report's order
  const seen = receiver.received;
  t.equal(seen.length, 8);
  t.same(seen.map((request) => request.body.metadata.eventId), report.cases.map((item: any) => item.sent.eventId), 'the report names each eventId sent');
  t.equal(seen[6]!.body.metadata.eventId, seen[0]!.body.metadata.eventId, 'the duplicate carries the valid delivery\'s eventId');
  t.same(seen[6]!.rawBody, seen[0]!.rawBody, 'and its very bytes');
  t.equal(new Set(seen.map((request) => request.body.metadata.eventId)).size, 7, 'every other case is an event of its own');
  t.equal(seen[7]!.url, '/webhooks?receiver-check=query-string', 'case 8 adds a query string');
  t.equal(report.cases[7].sent.url, `${receiver.url}?receiver-check=query-string`);
  for (const request of seen.slice(0, 7)) t.equal(request.url, '/webhooks');

  // a real delivery's headers and body shape (docs/webhooks.md#what-a-delivery-looks-like)
  const valid = seen[0]!;
  t.same(Object.keys(valid.headers).filter((name) => name.startsWith('x-service-')).sort(), [
    'x-service-api-key',
    'x-service-event-type',
    'x-service-resource-type',
    'x-service-signature',
    'x-service-timestamp',
  ]);
  t.match(valid.headers, { 'content-type': 'application/json', 'x-service-resource-type': 'transaction', 'x-service-event-type': 'transaction_created', 'x-service-api-key': WEBHOOK.apiKey });
  t.ok(Math.abs(Number(valid.headers['x-service-timestamp']) - Date.now()) < 60_000, 'real wall-clock timestamp');
  const signed = `${WEBHOOK.apiKey}${valid.headers['x-service-timestamp']}POST/webhooks${valid.rawBody.toString('utf8')}`;
  t.equal(valid.headers['x-service-signature'], createHmac('sha256', WEBHOOK.secret).update(signed).digest('hex'), 'signed over key + timestamp + POST + path + raw body');
  t.same(Object.keys(valid.body), ['transaction', 'metadata']);
  t.match(valid.body.transaction, { id: /^txn_check_[a-z2-7]{8}_1$/, type: 'DEPOSIT', status: 'PENDING', debitAmount: '100.00', creditAmount: '100.00', debitCurrency: 'USD' });
  t.notOk(Object.values(valid.body.transaction).includes(null), 'valueless fields left out, as in the webhook form');
  t.same(valid.body.metadata, {
    eventId: report.cases[0].sent.eventId,
    eventType: 'transaction_created',
    programId: 'prg_sandbox',
    userId: 'usr_receiver_check',
    occurredAt: START,
  }, 'occurredAt is the emulated clock');
  t.match(report.cases[0].sent.eventId, /^evt_check_[a-z2-7]{8}_1$/);

  // each refusal case changes one thing
  t.not(seen[1]!.headers['x-service-signature'], valid.headers['x-service-signature']);
  t.match(seen[1]!.headers['x-service-signature'], /^[0-9a-f]{64}$/, 'a bad signature is still well-formed');
  t.equal(seen[2]!.body.transaction.creditAmount, '100000.00', 'the tampered body changes creditAmount');
  const tamperedOriginal = seen[2]!.rawBody.toString('utf8').replace('"creditAmount":"100000.00"', '"creditAmount":"100.00"');
  t.ok(
    verifyWebhookSignature({ apiKey: WEBHOOK.apiKey, secret: WEBHOOK.secret, timestamp: String(seen[2]!.headers['x-service-timestamp']), signature: String(seen[2]!.headers['x-service-signature']), path: '/webhooks', rawBody: tamperedOriginal }),
    'its signature is over the original body',
  );
  const now = Date.now();
  t.ok(now - Number(seen[3]!.headers['x-service-timestamp']) > 55 * 60_000, 'stale: an hour old');
  t.ok(Number(seen[4]!.headers['x-service-timestamp']) - now > 55 * 60_000, 'future: an hour ahead');
  t.equal(seen[5]!.headers['x-service-api-key'], 'wk_unknown_receiver_check');
  t.ok(
    verifyWebhookSignature({ apiKey: 'wk_unknown_receiver_check', secret: WEBHOOK.secret, timestamp: String(seen[5]!.headers['x-service-timestamp']), signature: String(seen[5]!.headers['x-service-signature']), path: '/webhooks', rawBody: seen[5]!.rawBody }),
    'the unknown key is signed with the real secret: only the key is wrong',
  );

  t.same(diffFingerprints(before, fingerprint(sandbox.ctx.db)), [], 'no table changed, the id counter included');
  const logAfter = json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/webhooks/deliveries' })).totalRecords;
  t.equal(logAfter, logBefore, 'nothing in the delivery log');
});

t.test('a receiver that never checks signatures: the report names exactly the five cases it gets wrong', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const receiver = await startTestReceiver(t, naiveReceiver);
  const report = json(await check(sandbox, { url: receiver.url }));
  t.equal(report.passed, false);
  t.same(failedNames(report), REFUSAL_CASES);
  t.match(report, { passedCount: 3, failedCount: 5 });
  const byName = Object.fromEntries(report.cases.map((item: any) => [item.name, item]));
  t.match(byName['bad-signature'].reason, /^got 200, expected a refusal .*verify X-Service-Signature/);
  t.match(byName['tampered-body'].reason, /raw body bytes/);
  t.match(byName['stale-timestamp'].reason, /5 minutes old/);
  t.match(byName['future-timestamp'].reason, /5 minutes ahead/);
  t.match(byName['unknown-api-key'].reason, /X-Service-Api-Key/);
  t.equal(byName['bad-signature'].got.body, '{"received":true}');
  t.match(report.summary, /FAIL {2}2\. a bad signature: got 200/);
  t.match(report.summary, /\n5 of 8 cases failed \(3 passed\) in \d+ ms\.\n$/);
});

t.test('a slow receiver: every case names the timeout', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const receiver = await startTestReceiver(t, () => ({ status: 204, delayMs: 1500 }));
  const report = json(await check(sandbox, { url: receiver.url, timeoutMs: 150 }));
  t.equal(report.timeoutMs, 150);
  t.equal(report.passed, false);
  t.same(failedNames(report), CASES, 'no answer in time is a failure, for a refusal too');
  for (const item of report.cases) {
    t.same([item.got.status, item.got.error], [null, 'no answer within 150 ms (timeout)'], item.name);
    // no answer (status null) is the proof it gave up before the 1,500 ms answer; no upper bound on a loaded machine
    t.ok(item.got.latencyMs >= 140, `${item.name} gave up at the timeout (${item.got.latencyMs} ms)`);
    t.match(item.reason, /^no answer within 150 ms \(timeout\), expected /);
  }
  t.equal(receiver.received.length, 8, 'all eight were still sent, one after another');
});

t.test('a receiver that folds the query string into its signature check fails case 8 alone', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const receiver = await startTestReceiver(t, queryFoldingReceiver());
  const report = json(await check(sandbox, { url: receiver.url }));
  t.same(failedNames(report), ['query-string']);
  t.match(report.cases[7].reason, /^got 401, expected a 2xx: verify over the URL path without its query string/);

  // a configured URL that has a query of its own keeps it, and gets the check's parameter after it
  const withQuery = await startTestReceiver(t, correctReceiver(), '/hooks');
  const second = json(await check(sandbox, { url: `${withQuery.url}?token=abc` }));
  t.equal(second.passed, true, second.summary);
  t.same(withQuery.received.map((request) => request.url).slice(6), ['/hooks?token=abc', '/hooks?token=abc&receiver-check=query-string']);
});

t.test("the programme's configured URL, key and secret; programId picks another; a connection refused", async (t) => {
  const receiver = await startTestReceiver(t, correctReceiver());
  const sandbox = await buildTestApp({ config: { webhookUrl: receiver.url } });
  t.teardown(() => sandbox.close());

  const noBody = await check(sandbox);
  t.equal(noBody.statusCode, 200);
  t.match(json(noBody), { url: receiver.url, programId: 'prg_sandbox', passed: true });
  const empty = json(await check(sandbox, {}));
  t.equal(empty.passed, true, 'an empty body is the same');

  // prg_other signs with its own key: the receiver that knows only prg_sandbox's refuses its valid delivery
  const other = json(await check(sandbox, { programId: 'prg_other', timeoutMs: 2000 }));
  t.match(other, { programId: 'prg_other', url: receiver.url, timeoutMs: 2000, passed: false });
  t.same(
    receiver.received.slice(-8).map((request) => request.headers['x-service-api-key']),
    ['wk_other', 'wk_other', 'wk_other', 'wk_other', 'wk_other', 'wk_unknown_receiver_check', 'wk_other', 'wk_other'],
  );
  t.same(failedNames(other), ['valid', 'duplicate', 'query-string']);
  const otherReceiver = await startTestReceiver(t, correctReceiver(OTHER_WEBHOOK));
  const otherPassed = json(await check(sandbox, { programId: 'prg_other', url: otherReceiver.url }));
  t.equal(otherPassed.passed, true, otherPassed.summary);
  t.equal(otherReceiver.received[0]!.body.metadata.programId, 'prg_other');

  const unknown = await check(sandbox, { programId: 'prg_nope' });
  t.equal(unknown.statusCode, 404);
  t.match(json(unknown), { errorCode: 'NOT_FOUND', message: 'Programme prg_nope not found' });

  // nothing listening: each case names the network error, and the answer is still a 200 report
  await receiver.close();
  const refused = json(await check(sandbox, { timeoutMs: 1000 }));
  t.equal(refused.passed, false);
  for (const item of refused.cases) {
    t.equal(item.got.status, null);
    t.match(item.got.error, /ECONNREFUSED/, item.name);
    t.match(item.reason, /ECONNREFUSED.*, expected /);
  }
});

t.test('400s name the field; a failed request sends nothing', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const receiver = await startTestReceiver(t, correctReceiver());
  const cases: Array<[string, unknown, string, RegExp]> = [
    ['no URL configured and none given', undefined, 'url', /No webhook URL is configured for programme prg_sandbox: pass url/],
    ['no URL configured, empty body', {}, 'url', /No webhook URL is configured/],
    ['ftp URL', { url: 'ftp://127.0.0.1/webhooks' }, 'url', /url must be an http:\/\/ or https:\/\/ URL/],
    ['not a URL', { url: 'localhost:3000/webhooks' }, 'url', /url must be an http/],
    ['url not a string', { url: 42 }, 'url', /url must be an http/],
    ['timeoutMs below the bounds', { url: receiver.url, timeoutMs: 99 }, 'timeoutMs', /timeoutMs must be an integer number of milliseconds 100-30000/],
    ['timeoutMs above the bounds', { url: receiver.url, timeoutMs: 30001 }, 'timeoutMs', /100-30000/],
    ['timeoutMs not an integer', { url: receiver.url, timeoutMs: 150.5 }, 'timeoutMs', /100-30000/],
    ['timeoutMs a string', { url: receiver.url, timeoutMs: '1000' }, 'timeoutMs', /100-30000/],
    ['programId empty', { url: receiver.url, programId: '' }, 'programId', /programId must be a programme id/],
    ['an unknown field', { url: receiver.url, retries: 3 }, 'retries', /retries/],
  ];
  for (const [what, body, field, message] of cases) {
    const response = await check(sandbox, body);
    t.equal(response.statusCode, 400, what);
    const error = json(response);
    t.ok(error.validationErrors?.some((item: any) => item.fieldRef === field), `${what}: names ${field} (${response.body})`);
    t.match(error.message, message, what);
  }
  const format = await check(sandbox, { url: receiver.url }, '?format=xml');
  t.equal(format.statusCode, 400);
  t.match(json(format), { validationErrors: [{ fieldRef: 'format' }] });
  const notJson = await sandbox.app.inject({ method: 'POST', url: '/_emulator/webhooks/check', payload: '{"url":', headers: { 'content-type': 'application/json' } });
  t.equal(notJson.statusCode, 400);
  t.equal(receiver.received.length, 0, 'no delivery was sent by a refused request');
});

t.test('?format=text answers the one-screen summary as text/plain', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const receiver = await startTestReceiver(t, naiveReceiver);
  const response = await check(sandbox, { url: receiver.url }, '?format=text');
  t.equal(response.statusCode, 200);
  t.equal(response.headers['content-type'], 'text/plain; charset=utf-8');
  const lines = response.body.split('\n');
  t.equal(lines[0], `Receiver check of ${receiver.url} (programme prg_sandbox, timeout 10000 ms)`);
  t.equal(lines[1], '');
  const caseLines = lines.slice(2, 10);
  t.same(caseLines.map((line) => line.slice(0, 4)), ['PASS', 'FAIL', 'FAIL', 'FAIL', 'FAIL', 'FAIL', 'PASS', 'PASS']);
  t.match(caseLines[0], /^PASS {2}1\. a valid delivery: acknowledged with 200 in \d+ ms$/);
  t.match(caseLines[6], /^PASS {2}7\. the valid delivery again \(same eventId\): acknowledged with 200/);
  t.match(lines[11], /^5 of 8 cases failed \(3 passed\) in \d+ ms\.$/);
  t.equal(lines.length, 13, 'heading, blank, eight cases, blank, verdict, final newline');
  t.ok(lines.every((line) => line.length <= 200), 'no line longer than 200 characters');

  const json200 = await check(sandbox, { url: receiver.url }, '?format=json');
  t.match(json200.headers['content-type'], /^application\/json/);
  t.match(json(json200).summary, /^Receiver check of /);
  const accept = await sandbox.app.inject({ method: 'POST', url: '/_emulator/webhooks/check', payload: { url: receiver.url }, headers: { accept: 'text/plain' } });
  t.match(accept.headers['content-type'], /^application\/json/, 'the Accept header is not read: ?format=text is the one rule');
});

t.test('inside a session: /_sessions/{id}/_emulator/webhooks/check uses that session\'s webhook URL', async (t) => {
  const receiver = await startTestReceiver(t, correctReceiver());
  const server = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent', clock: START } as Partial<Config> as never });
  t.teardown(() => server.close());
  const created = await fetch(`${server.url}/_emulator/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ webhookUrl: receiver.url }) });
  t.equal(created.status, 201);
  const session = (await created.json()) as { id: string; baseUrl: string };

  const response = await fetch(`${session.baseUrl}/_emulator/webhooks/check`, { method: 'POST' });
  t.equal(response.status, 200);
  const report = (await response.json()) as any;
  t.match(report, { url: receiver.url, programId: 'prg_sandbox', passed: true });
  t.equal(receiver.received.length, 8);
  const text = await fetch(`${session.baseUrl}/_emulator/webhooks/check?format=text`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"timeoutMs":5000}' });
  t.match(await text.text(), /^Receiver check of .*timeout 5000 ms\)\n[\s\S]*All 8 cases passed in \d+ ms\.\n$/);

  // the root has no URL of its own: the session's is not the root's
  const root = await fetch(`${server.url}/_emulator/webhooks/check`, { method: 'POST' });
  t.equal(root.status, 400);
  t.match(await root.json(), { validationErrors: [{ fieldRef: 'url' }] });
  const log = (await (await fetch(`${session.baseUrl}/_emulator/webhooks/deliveries`)).json()) as { totalRecords: number };
  t.equal(log.totalRecords, 0, "nothing in the session's delivery log");
});

/** The built CLI, asynchronously: the receivers answer from this process meanwhile. */
function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(...plainNode([CLI, 'check-receiver', ...args]), { env: { PATH: process.env.PATH, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

t.test('service-sandbox check-receiver: the same check in process, exit 0 / 1 / 2', async (t) => {
  await ensureBuilt();
  const good = await startTestReceiver(t, correctReceiver());
  const naive = await startTestReceiver(t, naiveReceiver);
  const untouched = await startTestReceiver(t, correctReceiver());
  // --fixtures: another webhook key and secret for the first programme; --program: another programme
  const directory = mkdtempSync(path.join(tmpdir(), 'receiver-check-'));
  t.teardown(() => rmSync(directory, { recursive: true, force: true }));
  const fixtures = JSON.parse(readFileSync(path.join(import.meta.dirname, '..', '..', 'fixtures', 'default.json'), 'utf8'));
  fixtures.programmes[0].webhook = { apiKey: 'wk_custom', secret: 'whsec_custom_secret', url: null };
  const fixturesFile = path.join(directory, 'fixtures.json');
  writeFileSync(fixturesFile, JSON.stringify(fixtures));
  const custom = await startTestReceiver(t, correctReceiver({ apiKey: 'wk_custom', secret: 'whsec_custom_secret' }));
  const other = await startTestReceiver(t, correctReceiver(OTHER_WEBHOOK));

  const usage: Array<[string[], RegExp, NodeJS.ProcessEnv?]> = [
    [[], /^service-sandbox check-receiver: service-sandbox check-receiver URL \[--timeout MS\]/],
    [['ftp://127.0.0.1/x'], /URL "ftp:\/\/127\.0\.0\.1\/x": accepts an http:\/\/ or https:\/\/ URL/],
    [[untouched.url, '--timeout', '50'], /--timeout "50": accepts an integer number of milliseconds 100-30000/],
    [[untouched.url, '--retries', '3'], /unknown option --retries/],
    [[untouched.url, '--timeout', '3000'], /--fixtures \/ FIXTURES: cannot read fixtures file .*missing\.json/, { FIXTURES: path.join(directory, 'missing.json') }],
    [[untouched.url, '--program', 'prg_nope'], /--program prg_nope: not a programme of .* \(prg_sandbox, prg_other\)/],
  ];
  // every run at once (each its own process and receiver): a process start is slow on a busy machine
  const [passed, failed, withFixtures, withProgram, ...refused] = await Promise.all([
    runCli([good.url]),
    runCli([naive.url, '--json', '--timeout', '2000']),
    runCli([custom.url, '--timeout', '3000', '--fixtures', fixturesFile]),
    runCli([other.url, '--program', 'prg_other']),
    ...usage.map(([args, , env]) => runCli(args, env)),
  ]);

  t.equal(passed!.code, 0, passed!.stderr);
  t.match(passed!.stdout, new RegExp(`^Receiver check of ${good.url.replace(/[.]/g, '\\.')} \\(programme prg_sandbox, timeout 10000 ms\\)\\n`));
  t.match(passed!.stdout, /\nAll 8 cases passed in \d+ ms\.\n$/);
  t.equal(passed!.stderr, '');
  t.equal(good.received.length, 8);
  t.equal(good.received[0]!.headers['x-service-api-key'], WEBHOOK.apiKey, "the default fixtures' webhook key");
  t.ok(Math.abs(Date.parse(good.received[0]!.body.metadata.occurredAt) - Date.now()) < 120_000, 'occurredAt: no emulated clock here, the real one');

  t.equal(failed!.code, 1, failed!.stderr);
  const report = JSON.parse(failed!.stdout);
  t.match(report, { url: naive.url, timeoutMs: 2000, passed: false, failedCount: 5 });
  t.same(failedNames(report), REFUSAL_CASES);

  t.equal(withFixtures!.code, 0, withFixtures!.stdout);
  t.equal(custom.received[0]!.headers['x-service-api-key'], 'wk_custom', 'the --fixtures file\'s webhook key');
  t.equal(withProgram!.code, 0, withProgram!.stdout);
  t.match(withProgram!.stdout, /\(programme prg_other, timeout 10000 ms\)/);
  t.equal(other.received[0]!.headers['x-service-api-key'], OTHER_WEBHOOK.apiKey);

  for (const [index, [args, message]] of usage.entries()) {
    const result = refused[index]!;
    t.equal(result.code, 2, `exit 2: ${args.join(' ')}`);
    t.match(result.stderr, message, args.join(' '));
    t.equal(result.stderr.trim().split('\n').length, 1, 'one line');
    t.equal(result.stdout, '', 'nothing on stdout');
  }
  t.equal(untouched.received.length, 0, 'bad usage sends nothing');
});

t.test('--help lists check-receiver', async (t) => {
  await ensureBuilt();
  const help = await new Promise<string>((resolve) => {
    const child = spawn(...plainNode([CLI, '--help']));
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.on('close', () => resolve(out));
  });
  t.match(help, /service-sandbox check-receiver URL \[--timeout MS\] \[--json\] \[--fixtures FILE\] \[--program PRG\]/);
  t.match(help, /exit 0 all passed, 1 one failed, 2 bad usage/);
});
