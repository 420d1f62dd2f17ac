import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';
import { startServer, type RunningServer } from '../../src/server.js';
import type { Config } from '../../src/config.js';
import {
  createSandboxClient,
  DEFAULT_SINGLE_KEY,
  SandboxApiError,
  signingFetch,
  verifyWebhookSignature,
  type SandboxClient,
  type Session,
} from '../../src/client/index.js';
import { START } from '../helper.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { plainNode } from '../helpers/node-child.js';

// The typed client of `service-sandbox/client` (docs/clients.md#typescript) against a real server on a port:
// a labelled session, numeric paging, a deposit moved by the clock and settled, a beneficiary, an intent created
// and committed, payouts by JSON and by pacs.008 (the payout variant's headers computed by the client, and by
// signingFetch for other generators), a statement PDF as bytes, snapshots, faults, webhook chaos, the delivery
// log and the listen relay, webhooks verified with the session's webhook secret, and the session ended by its
// label. No sleep: the clock moves and settle answers when the webhooks have arrived (docs/control-plane.md#settle).
// It supersedes nothing of test/client/journey.ts, which proves a client an integrator generates from the served
// document compiles and runs; this one is the package's own client.

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const FEDWIRE = readFileSync(new URL('../fixtures/pacs008/fedwire.xml', import.meta.url), 'utf8');

interface World {
  server: RunningServer;
  receiver: Receiver;
  root: SandboxClient;
  session: Session;
  client: SandboxClient;
  label: string;
}

async function world(t: Test, name: string): Promise<World> {
  const server = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent', clock: START } as Partial<Config> as never });
  t.teardown(() => server.close());
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const root = createSandboxClient({ baseUrl: server.url });
  const label = `client-kit-${name}-${process.pid}`;
  const session = await root.createSession({ label, seed: `client-kit-${name}`, webhookUrl: receiver.url, clock: START });
  return { server, receiver, root, session, client: root.forSession(session), label };
}

t.test('a journey through the typed client, in a labelled session', async (t) => {
  const { receiver, root, session, client, label } = await world(t, 'journey');

  t.match(session.baseUrl, /\/_sessions\/ses_[0-9a-f]{16}$/, 'the session answers under its prefix');
  t.same(session.startedFrom.seed, 'client-kit-journey');
  t.same((await root.listSessions(label)).map((listed) => listed.id), [session.id], 'listed by its label');
  t.equal(client.key.apiKey, session.credentials.single?.apiKey, "the session client signs with the session's SINGLE_USER key");

  // numeric paging
  const first = await client.api.GET('/v1/transactions', { params: { query: { pageIndex: 0, pageSize: 2, sortBy: 'CREATED_AT', sortDirection: 'ASC' } } });
  const second = await client.api.GET('/v1/transactions', { params: { query: { pageIndex: 1, pageSize: 2, sortBy: 'CREATED_AT', sortDirection: 'ASC' } } });
  t.equal(first.response.status, 200, JSON.stringify(first.error));
  t.equal(first.data?.pageSize, 2);
  t.equal(first.data?.pageIndex, 0);
  t.ok((first.data?.totalRecords ?? 0) > 2, 'the fixtures hold more than one page');
  t.equal(second.data?.pageIndex, 1);
  t.notSame(second.data?.data.map((row) => row.id), first.data?.data.map((row) => row.id), 'page 1 is other transactions than page 0');

  // a deposit, completed by the clock; settle answers once its webhooks reached the receiver
  const deposit = await client.api.POST('/v1/sandbox/accounts/{accountId}/deposits', {
    params: { path: { accountId: 'acct_acme_usd' } },
    body: { depositInstructionId: 'di_acme_usd_ach', amount: '60000.00', reference: 'client-kit-deposit' },
  });
  t.equal(deposit.response.status, 202, JSON.stringify(deposit.error));
  const advanced = await client.advanceClock(3_600_000);
  t.equal(advanced.now, new Date(Date.parse(START) + 3_600_000).toISOString(), "the session's clock moved");
  const settled = await client.settle();
  t.equal(settled.settled, true);
  t.same(settled.waiting.deliveries, 0, 'nothing waits');
  const depositId = deposit.response.headers.get('location')?.split('/').pop();
  t.ok(
    receiver.requests.some((request) => request.body?.transaction?.id === depositId && request.body.transaction.status === 'COMPLETED'),
    'the COMPLETED webhook of the deposit arrived before settle answered',
  );

  // a beneficiary, an intent created and committed
  const beneficiary = await client.api.POST('/v1/beneficiaries', {
    body: {
      type: 'BUSINESS',
      businessName: 'Initrode Supplies LLC',
      email: 'ap@initrode.example',
      address: { line1: '1 Main St', city: 'Springfield', postalCode: '12345', country: 'US' },
      instruments: [
        { type: 'BANK_ACCOUNT', currency: 'USD', country: 'US', accountHolderName: 'Initrode Supplies LLC', accountNumber: '987654321012', routingNumber: '021000021' },
      ],
    },
  });
  const beneficiaryId = beneficiary.data?.id ?? t.fail(`createBeneficiary: ${JSON.stringify(beneficiary.error)}`);
  t.match(beneficiaryId, /^ben_/);
  const intent = await client.api.POST('/v1/transaction-intents', {
    body: {
      idempotencyKey: 'client-kit-intent-1',
      debitAccountId: 'acct_acme_usd',
      credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur' },
      debitAmount: '100.00',
      purpose: 'PAYMENT_FOR_SERVICES',
      debitMemo: 'client kit',
    },
  });
  t.equal(intent.response.status, 201, JSON.stringify(intent.error));
  const commit = await client.api.POST('/v1/transaction-intents/{transactionIntentId}/commit', {
    params: { path: { transactionIntentId: intent.data?.id ?? '' } },
    body: { idempotencyKey: 'client-kit-intent-1' },
  });
  t.equal(commit.data?.status, 'COMMITTED', JSON.stringify(commit.error));

  // payouts: the payout variant (RFC 3339, sha256=) over the session's path, Base64 text/plain, computed by the client
  const payload = { entityId: 'acct_acme_usd', beneficiaryId: String(beneficiaryId), amount: '25.00', currency: 'USD', reference: 'client-kit-json' };
  const byJson = await client.payout('json', payload, { idempotencyKey: 'client-kit-payout-json' });
  t.equal(byJson.response.status, 202, JSON.stringify(byJson.error));
  t.equal(byJson.data?.status, 'RECEIVED');
  const replay = await client.payout('json', payload, { idempotencyKey: 'client-kit-payout-json' });
  t.equal(replay.data?.transactionId, byJson.data?.transactionId, 'the same Idempotency-Key and body replay the first 202');
  const conflict = await client.payout('json', { ...payload, amount: '26.00' }, { idempotencyKey: 'client-kit-payout-json' });
  t.equal(conflict.response.status, 409, 'the same key with another body is a 409');
  const byPacs = await client.payout('pacs008', FEDWIRE, { idempotencyKey: 'client-kit-payout-pacs008' });
  t.equal(byPacs.response.status, 202, JSON.stringify(byPacs.error));
  t.equal(byPacs.data?.messageId, '20260301SBXFW0000018', 'messageId is the GrpHdr MsgId');

  // another generator's way in: a plain fetch signed by signingFetch, the payout headers computed for it
  const signedFetch = signingFetch(client.key);
  const raw = await signedFetch(`${client.baseUrl}/v1/payout-origination/json`, {
    method: 'POST',
    headers: { 'Idempotency-Key': 'client-kit-payout-fetch' },
    body: Buffer.from(JSON.stringify({ ...payload, reference: 'client-kit-fetch' })).toString('base64'),
  });
  t.equal(raw.status, 202, await raw.clone().text());
  const rawTransaction = ((await raw.json()) as { transactionId: string }).transactionId;
  const accounts = await signedFetch(`${client.baseUrl}/v1/accounts?pageSize=1`);
  t.equal(accounts.status, 200, 'signingFetch signs HMAC mode over path?query as sent');

  // the typed operation called directly: the middleware replaces the declared signing headers' placeholders
  const typed = await client.api.POST('/v1/payout-origination/{format}', {
    params: {
      path: { format: 'json' },
      header: { 'Idempotency-Key': 'client-kit-payout-typed', 'X-Service-Timestamp': '', 'X-Service-Signature': '', 'X-Service-Program-Id': client.key.programmeId },
    },
    body: Buffer.from(JSON.stringify({ ...payload, reference: 'client-kit-typed' })).toString('base64'),
    bodySerializer: (text: string) => text,
  });
  t.equal(typed.response.status, 202, JSON.stringify(typed.error));

  // the payouts run their timeline; settle; every webhook verifies with the session's webhook secret
  await client.advanceClock(86_400_000);
  t.equal((await client.settle()).settled, true);
  const transactions = [byJson.data?.transactionId, byPacs.data?.transactionId, rawTransaction, typed.data?.transactionId];
  for (const id of transactions) {
    const final = receiver.requests.filter((request) => request.body?.transaction?.id === id).map((request) => request.body.transaction.status);
    t.equal(final.at(-1), 'COMPLETED', `${id}: its last webhook says COMPLETED (${final.join(' > ')})`);
  }
  const webhookSecret = session.credentials.webhook.secret;
  const path = new URL(receiver.url).pathname;
  const verdicts = receiver.requests.map((request) =>
    verifyWebhookSignature({
      apiKey: request.headers['x-service-api-key'] as string | undefined,
      timestamp: request.headers['x-service-timestamp'] as string | undefined,
      signature: request.headers['x-service-signature'] as string | undefined,
      secret: webhookSecret,
      path,
      rawBody: request.rawBody,
      toleranceMs: Infinity,
    }),
  );
  t.ok(verdicts.length >= 8, `webhooks arrived (${verdicts.length})`);
  t.ok(verdicts.every(Boolean), 'every webhook verifies');

  // the delivery log agrees
  const log = await client.webhookDeliveries({ status: 'DELIVERED', pageSize: 200 });
  t.equal(log.data.length, receiver.requests.length, 'one DELIVERED delivery per webhook received');

  // a statement PDF, as bytes
  const link = await client.api.GET('/v1/accounts/{accountId}/statement', {
    params: { path: { accountId: 'acct_acme_usd' }, query: { startDate: '2026-03-01', endDate: '2026-03-01', format: 'pdf' } },
  });
  const linkBody = link.data ?? t.fail(`statement: ${link.response.status} ${JSON.stringify(link.error)}`);
  const url = new URL(String((linkBody as { url: string }).url));
  t.ok(url.pathname.startsWith(new URL(client.baseUrl).pathname), "the link carries the session's prefix");
  const fileId = url.pathname.split('/').pop() ?? '';
  const file = await client.api.GET('/v1/statement-files/{fileId}', {
    params: { path: { fileId }, query: { expires: url.searchParams.get('expires') ?? '', signature: url.searchParams.get('signature') ?? '' } },
    parseAs: 'arrayBuffer',
  });
  t.equal(file.response.status, 200);
  t.equal(file.response.headers.get('content-type'), 'application/pdf');
  const bytes = Buffer.from(file.data ?? new ArrayBuffer(0));
  t.equal(bytes.subarray(0, 5).toString('latin1'), '%PDF-', 'a PDF, byte for byte');

  // the session ends by its label
  const ended = await root.endSessions(label);
  t.same(ended.ended, [session.id]);
  t.same(await root.listSessions(label), []);
  const gone = await client.api.GET('/v1/accounts');
  t.equal(gone.response.status, 404, 'an ended session answers 404');
});

t.test('the control plane as functions: clock, snapshots, faults, chaos, listen, errors', async (t) => {
  const { receiver, root, session, client } = await world(t, 'control');

  const frozen = await client.freezeClock(new Date('2026-03-02T09:00:00Z'));
  t.equal(frozen.now, '2026-03-02T09:00:00.000Z');
  t.equal(frozen.mode, 'frozen');
  t.equal((await client.clock()).now, '2026-03-02T09:00:00.000Z');

  const count = async () => (await client.api.GET('/v1/transactions', { params: { query: { pageSize: 1 } } })).data?.totalRecords;
  const before = await count();
  const saved = await client.saveSnapshot('client-kit');
  t.equal(saved.name, 'client-kit');
  const deposit = await client.api.POST('/v1/sandbox/accounts/{accountId}/deposits', {
    params: { path: { accountId: 'acct_acme_usd' } },
    body: { depositInstructionId: 'di_acme_usd_ach', amount: '10.00' },
  });
  t.equal(deposit.response.status, 202);
  t.equal(await count(), (before ?? 0) + 1);
  const restored = await client.restoreSnapshot('client-kit');
  t.equal(restored.name, 'client-kit');
  t.equal(await count(), before, 'the restore took the deposit away');
  t.equal((await client.clock()).now, '2026-03-02T09:00:00.000Z', 'and brought the clock back');

  const rule = await client.addFault({ match: { method: 'GET', path: '/v1/accounts' }, effect: { type: 'status', status: 503 }, times: 1 });
  t.match(rule.id, /^flt_/);
  t.equal((await client.api.GET('/v1/accounts')).response.status, 503, 'the fault fires once');
  t.equal((await client.api.GET('/v1/accounts')).response.status, 200, 'then the request goes through');
  await client.addFault({ match: { path: '/v1/accounts' }, effect: { type: 'status', status: 500 } });
  await client.clearFaults();
  t.equal((await client.api.GET('/v1/accounts')).response.status, 200, 'cleared');

  // chaos: every delivery sent twice, signed afresh; the duplicates share the eventId. (What arrived before the restore
  // is forgotten: the restore rewound the session's ids too, so the next event takes the same eventId again.)
  receiver.requests.length = 0;
  const chaos = await client.setWebhookChaos({ seed: 'client-kit', duplicate: { probability: 1 } });
  t.match(chaos, { duplicate: { probability: 1 } });
  const chaosDeposit = await client.api.POST('/v1/sandbox/accounts/{accountId}/deposits', {
    params: { path: { accountId: 'acct_acme_usd' } },
    body: { depositInstructionId: 'di_acme_usd_ach', amount: '11.00' },
  });
  t.equal(chaosDeposit.response.status, 202);
  t.equal((await client.settle()).settled, true);
  const events = receiver.requests.map((request) => String(request.body?.metadata?.eventId));
  t.ok(events.length >= 2, `deliveries arrived (${events.length})`);
  t.equal(new Set(events).size * 2, events.length, `each event arrived twice (${events.join(', ')})`);
  await client.clearWebhookChaos();

  const listen = await client.listenStatus();
  t.same({ forwardTo: listen.forwardTo, connected: listen.connected }, { forwardTo: null, connected: false }, 'no listen relay');

  await client.reset();
  t.equal(await count(), before, 'reset goes back to the start');

  const unknown = await root.endSession('ses_0000000000000000').catch((error: unknown) => error);
  t.ok(unknown instanceof SandboxApiError, 'a refusal throws a SandboxApiError');
  t.equal((unknown as SandboxApiError).status, 404);
  t.match((unknown as SandboxApiError).body, { errorCode: 'NOT_FOUND' });

  await root.endSession(session.id);
  t.same(await root.listSessions(`client-kit-control-${process.pid}`), []);
  t.equal(createSandboxClient({ baseUrl: root.baseUrl }).key, DEFAULT_SINGLE_KEY, "the root client signs with the default fixtures' key");
});

t.test("docs/clients.md's first test runs as written, against a server", async (t) => {
  const server = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent', clock: START } as Partial<Config> as never });
  t.teardown(() => server.close());
  const page = readFileSync(new URL('../../docs/clients.md', import.meta.url), 'utf8');
  const section = page.slice(page.indexOf('### Install and first test'));
  const snippet = /```ts\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  t.ok(snippet.split('\n').length <= 10, 'under ten lines');
  // the package's name (@service-sandbox/client, built from src/client) resolves to a build; the test runs the sources
  const source = snippet.replace(/'(@service-sandbox\/client|service-sandbox\/client)'/, JSON.stringify(new URL('../../src/client/index.ts', import.meta.url).pathname));
  mkdirSync(path.join(ROOT, '.tap'), { recursive: true });
  const dir = mkdtempSync(path.join(ROOT, '.tap', 'clients-doc-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'first.test.ts');
  writeFileSync(file, source);
  // a child process, not spawnSync: the server answers from this process's event loop
  const run = await promisify(execFile)(...plainNode(['--import=./scripts/ts-loader.mjs', '--test', file]), {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, SANDBOX_URL: server.url },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
  t.equal(run.code, 0, run.code === 0 ? 'node --test passes it' : run.stdout + run.stderr);
  t.match(run.stdout, /# pass 1/);
});
