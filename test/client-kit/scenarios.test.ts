import { readFileSync } from 'node:fs';
import t, { type Test } from 'tap';
import {
  createSandboxClient,
  startWebhookReceiver,
  type SandboxClient,
  type Schemas,
  type Session,
  type WebhookReceiver,
} from '../../src/client/index.js';
import { START } from '../helper.js';
import { ensureBuilt, startServerProcess } from '../helpers/server-process.js';

// The scenarios every kit runs in its own language (docs/clients.md: the same in each; clients/python/tests/
// test_scenarios.py, clients/go/scenarios/, clients/java/src/test/java/dev/servicesandbox/scenarios/), here through
// `service-sandbox/client`: onboarding to ACTIVE, a deposit settled, payouts by JSON and by pacs.008, an ambiguous
// commit retried with its key, webhooks under chaos, a session from a snapshot. ONE built server; each scenario a
// subtest with its own labelled session and its own verifying, deduplicating receiver (startWebhookReceiver, the
// session's webhookUrl), run in parallel (t.jobs). No sleep for webhooks: the session's clock moves and settle
// answers once every delivery due was answered; chaos's retries by settleUntilIdle (docs/control-plane.md#settle).

t.setTimeout(180_000);
t.jobs = 4;

await ensureBuilt();
const server = await startServerProcess({ db: ':memory:' });
const root = createSandboxClient({ baseUrl: server.url });
const LABEL = `ts-kit-${process.pid}`;
t.teardown(async () => {
  await root.endSessions(LABEL).catch(() => undefined);
  await server.stop();
});

const FEDWIRE = readFileSync(new URL('../fixtures/pacs008/fedwire.xml', import.meta.url), 'utf8');
// A one-page PDF (docs/onboarding.md#walkthrough-with-curl-a-person-user), as the other kits send it.
const PDF_BASE64 =
  'JVBERi0xLjQKMSAwIG9iago8PCAvVHlwZSAvQ2F0YWxvZyAvUGFnZXMgMiAwIFIgPj4KZW5kb2JqCjIgMCBvYmoKPDwgL1R5cGUgL1BhZ2VzIC9LaWRzIFszIDAgUl0gL0NvdW50IDEgPj4KZW5kb2JqCjMgMCBvYmoKPDwgL1R5cGUgL1BhZ2UgL1BhcmVudCAyIDAgUiAvTWVkaWFCb3ggWzAgMCA2MTIgNzkyXSAvQ29udGVudHMgNCAwIFIgL1Jlc291cmNlcyA8PCAvRm9udCA8PCAvRjEgNSAwIFIgPj4gPj4gPj4KZW5kb2JqCjQgMCBvYmoKPDwgL0xlbmd0aCA1MiA+PgpzdHJlYW0KQlQgL0YxIDE4IFRmIDcyIDcyMCBUZCAoU2FuZGJveCB0ZXN0IGRvY3VtZW50KSBUaiBFVAplbmRzdHJlYW0KZW5kb2JqCjUgMCBvYmoKPDwgL1R5cGUgL0ZvbnQgL1N1YnR5cGUgL1R5cGUxIC9CYXNlRm9udCAvSGVsdmV0aWNhID4+CmVuZG9iagp4cmVmCjAgNgowMDAwMDAwMDAwIDY1NTM1IGYgCjAwMDAwMDAwMDkgMDAwMDAgbiAKMDAwMDAwMDA1OCAwMDAwMCBuIAowMDAwMDAwMTE1IDAwMDAwIG4gCjAwMDAwMDAyNDEgMDAwMDAgbiAKMDAwMDAwMDM0MyAwMDAwMCBuIAp0cmFpbGVyCjw8IC9TaXplIDYgL1Jvb3QgMSAwIFIgPj4Kc3RhcnR4cmVmCjQxMwolJUVPRgo=';
/** The payout's rail timeline (docs/money-out.md): created PENDING, PROCESSING after 1 s, COMPLETED 3 s later. */
const PAYOUT_EVENTS = ['transaction_created:PENDING', 'transaction_status_updated:PROCESSING', 'transaction_status_updated:COMPLETED'];
const DEPOSIT_EVENTS = ['transaction_created:PENDING', 'transaction_status_updated:COMPLETED'];

interface Scenario {
  session: Session;
  sandbox: SandboxClient;
  webhooks: WebhookReceiver;
}

/**
 * A labelled session frozen at START (or started from `snapshot`), whose webhooks go to a receiver of its own that
 * verifies them with the session's webhook key; both ended when the subtest ends.
 */
async function scenario(t: Test, seed: string, options: { snapshot?: string } = {}): Promise<Scenario> {
  const webhooks = await startWebhookReceiver();
  t.teardown(() => webhooks.close());
  const session = await root.createSession({
    label: LABEL,
    seed: `ts-kit-${seed}`,
    webhookUrl: webhooks.url,
    ...(options.snapshot === undefined ? { clock: START } : { snapshot: options.snapshot }),
  });
  t.teardown(() => root.endSession(session.id));
  webhooks.expect(session.credentials.webhook);
  return { session, sandbox: root.forSession(session), webhooks };
}

/** `eventType:status` of each event the receiver kept for one transaction, in arrival order. */
const statuses = (webhooks: WebhookReceiver, id: string) =>
  webhooks.forTransaction(id).map((event) => `${event.metadata.eventType}:${event.transaction.status}`);

async function balance(sandbox: SandboxClient, accountId = 'acct_acme_usd'): Promise<string> {
  const answer = await sandbox.api.GET('/v1/accounts/{accountId}', { params: { path: { accountId } } });
  if (!answer.data) throw new Error(`GET /v1/accounts/${accountId}: ${answer.response.status} ${JSON.stringify(answer.error)}`);
  return answer.data.balances.current;
}

async function transaction(sandbox: SandboxClient, id: string): Promise<Schemas['Transaction']> {
  const answer = await sandbox.api.GET('/v1/transactions/{transactionId}', { params: { path: { transactionId: id } } });
  if (!answer.data) throw new Error(`GET /v1/transactions/${id}: ${answer.response.status} ${JSON.stringify(answer.error)}`);
  return answer.data;
}

/** A simulated deposit (docs/money-in.md#simulated-deposits): the new transaction's id, from the 202's Location. */
async function deposit(sandbox: SandboxClient, body: Schemas['MockDepositRequest']): Promise<string> {
  const answer = await sandbox.api.POST('/v1/sandbox/accounts/{accountId}/deposits', { params: { path: { accountId: 'acct_acme_usd' } }, body });
  if (answer.response.status !== 202) throw new Error(`deposit: ${answer.response.status} ${JSON.stringify(answer.error)}`);
  const id = answer.response.headers.get('location')?.split('/').pop();
  if (!id) throw new Error('deposit: no Location');
  return id;
}

/** Every WITHDRAWAL of acct_acme_usd, newest first. */
async function withdrawals(sandbox: SandboxClient): Promise<string[]> {
  const page = await sandbox.api.GET('/v1/transactions', { params: { query: { accountId: 'acct_acme_usd', pageSize: 100 } } });
  return (page.data?.data ?? []).filter((row) => row.type === 'WITHDRAWAL').map((row) => row.id);
}

t.test('a business is onboarded to ACTIVE and receives its accounts (docs/onboarding.md)', async (t) => {
  const { session, sandbox } = await scenario(t, 'onboarding');
  const { programmeId, multi: pair } = session.credentials;
  if (!pair) throw new Error('the fixtures have a MULTI_USER key');
  const multi = sandbox.withKey({ apiKey: pair.apiKey, secret: pair.secret, programmeId });

  // a programme-level call: the MULTI_USER key, no user
  const created = await multi.api.POST('/v1/auth/users', { body: { externalId: 'northwind-1', type: 'BUSINESS', name: 'Northwind Traders Inc' } });
  t.equal(created.response.status, 201, JSON.stringify(created.error));
  const userId = created.data?.userId ?? '';
  t.equal(created.data?.enrollmentStatus, 'INACTIVE');
  const as = { params: { header: { 'X-Service-User-Id': userId } } };

  const enrollment = await multi.api.GET('/v1/enrollment', as);
  t.equal(enrollment.data?.status, 'INACTIVE', JSON.stringify(enrollment.error));
  t.equal(enrollment.data?.informationRequest?.status, 'DRAFT');
  const informationRequestId = enrollment.data?.informationRequest?.id ?? '';
  const written = await multi.api.POST('/v1/information-requests/{informationRequestId}/entries', {
    params: { path: { informationRequestId }, header: { 'X-Service-User-Id': userId } },
    body: {
      entries: [
        { key: 'businessName', value: 'Northwind Traders Inc' },
        { key: 'registrationNumber', value: 'C-4581234' },
        { key: 'incorporationCountry', value: 'US' },
        { key: 'address', value: { line1: '1 Harbor Road', city: 'Wilmington', region: 'DE', postalCode: '19801', country: 'US' } },
        {
          key: 'beneficialOwners',
          value: [
            { name: 'Ada Founder', dateOfBirth: '1985-02-03', ownershipPercent: 60 },
            { name: 'Ben Partner', dateOfBirth: '1979-11-30', ownershipPercent: 40 },
          ],
        },
        { key: 'formationDocument', value: { fileName: 'certificate.pdf', contentType: 'application/pdf', contentBase64: PDF_BASE64 } },
      ],
    },
  });
  t.equal(written.response.status, 200, JSON.stringify(written.error));
  t.equal(written.data?.validationStatus, 'VALID');
  const submitted = await multi.api.POST('/v1/information-requests/{informationRequestId}/submit', {
    params: { path: { informationRequestId }, header: { 'X-Service-User-Id': userId } },
  });
  t.equal(submitted.data?.status, 'PROCESSING_SUBMISSION', JSON.stringify(submitted.error));
  t.same((await multi.api.GET('/v1/accounts', as)).data?.data, [], 'no account before the review');

  await sandbox.advanceClock(5000); // the review (fixtures timeline.reviewMs) approves it
  const active = await multi.api.GET('/v1/enrollment', as);
  t.equal(active.data?.status, 'ACTIVE');
  t.equal(active.data?.informationRequest?.decision, 'APPROVED');
  const users = await multi.api.GET('/v1/users');
  t.equal(users.data?.data.find((user) => user.userId === userId)?.enrollmentStatus, 'ACTIVE', 'GET /v1/users lists it ACTIVE');

  // docs/onboarding.md#accounts-of-onboarded-users: a USD and a USDC account at once, deposit instructions 2 s later
  const accounts = (await multi.api.GET('/v1/accounts', as)).data?.data ?? [];
  t.same(accounts.map((account) => account.currency).sort(), ['USD', 'USDC']);
  const accountId = accounts.find((account) => account.currency === 'USD')?.id ?? '';
  const usd = { params: { path: { accountId }, header: { 'X-Service-User-Id': userId } } };
  const fresh = (await multi.api.GET('/v1/accounts/{accountId}', usd)).data;
  t.same(fresh?.depositInstructions, [], 'no deposit instruction until the provider is ready');
  t.equal(fresh?.balances.current, '0.00');

  await sandbox.advanceClock(2000); // timeline.providerReadyMs
  const ready = (await multi.api.GET('/v1/accounts/{accountId}', usd)).data;
  t.same(ready?.depositInstructions.map((instruction) => instruction.rail.type).sort(), ['US.USD.ACH', 'US.USD.FEDWIRE']);
  t.ok(ready?.depositInstructions.every((instruction) => instruction.status === 'ACTIVE'), 'both ACTIVE');
});

t.test('a deposit completes and settle delivers its verified webhooks (docs/money-in.md#simulated-deposits)', async (t) => {
  const { sandbox, webhooks } = await scenario(t, 'deposit');
  t.equal((await sandbox.clock()).now, START);
  t.equal(await balance(sandbox), '88062.80');
  const id = await deposit(sandbox, { depositInstructionId: 'di_acme_usd_ach', amount: '1250.00', reference: 'INV-42', counterpartyName: 'Northwind Traders' });
  t.equal((await transaction(sandbox, id)).status, 'PENDING');

  await sandbox.advanceClock(1000); // the frozen clock moves; the deposit completes before this answers
  const done = await transaction(sandbox, id);
  t.same([done.type, done.status, done.completedAt], ['DEPOSIT', 'COMPLETED', '2026-03-01T12:00:01.000Z']);
  t.equal(await balance(sandbox), '89312.80', '88062.80 + 1250.00');

  const report = await sandbox.settle();
  t.equal(report.waiting.deliveries, 0, 'every webhook due was answered: no sleep');
  t.same(statuses(webhooks, id), DEPOSIT_EVENTS);
  const completed = webhooks.forTransaction(id)[1];
  t.equal(completed?.metadata.userId, 'usr_acme');
  t.equal(completed?.metadata.programId, 'prg_sandbox');
  t.equal(completed?.transaction.debitReference, 'INV-42');
  t.same(webhooks.rejected, [], 'nothing refused');
  t.same(webhooks.duplicates, [], 'nothing twice');
});

for (const format of ['json', 'pacs008'] as const) {
  t.test(`a payout by ${format} completes with verified webhooks (docs/payouts.md)`, async (t) => {
    const { sandbox, webhooks } = await scenario(t, `payout-${format}`);
    const key = `ts-kit-${format}-0001`;
    // the payout variant (RFC 3339 timestamp, sha256=<hex>) computed by the client over the session's path
    const send = () =>
      format === 'json'
        ? sandbox.payout('json', { entityId: 'acct_acme_usd', beneficiaryId: 'ben_globex', amount: '250.00', currency: 'USD', reference: 'INV-1001' }, { idempotencyKey: key })
        : sandbox.payout('pacs008', FEDWIRE, { idempotencyKey: key });
    const accepted = await send();
    t.equal(accepted.response.status, 202, JSON.stringify(accepted.error));
    t.equal(accepted.data?.status, 'RECEIVED');
    const again = await send();
    t.equal(again.response.status, 202);
    t.same(again.data, accepted.data, 'the same key and body replay the first 202');
    const id = accepted.data?.transactionId ?? '';
    t.equal((await transaction(sandbox, id)).status, 'PENDING');

    await sandbox.advanceClock(4000); // 1 s to PROCESSING, 3 s more to COMPLETED
    const done = await transaction(sandbox, id);
    t.same([done.type, done.status], ['WITHDRAWAL', 'COMPLETED']);
    if (format === 'json') {
      t.equal(done.creditAmount, '250.00');
      t.equal(done.debitMemo, 'INV-1001');
    } else {
      // Fedwire-style, Acme's USD account by account number, to Globex (docs/payouts.md#the-pacs008-payload-iso-20022)
      t.equal(accepted.data?.messageId, '20260301SBXFW0000018', 'messageId is the GrpHdr MsgId');
      t.same([done.creditAmount, done.creditRail, done.externalId, done.debitMemo], ['25000.00', 'US.USD.FEDWIRE', 'ACME-WIRE-0018', 'Q1 licence true-up']);
      t.equal(done.fees?.[0]?.amount, '15.00');
    }
    t.equal((await sandbox.settle()).waiting.deliveries, 0);
    t.same(statuses(webhooks, id), PAYOUT_EVENTS);
    t.ok(
      webhooks.events.every((event) => event.metadata.programId === 'prg_sandbox'),
      'every event verified with the session key and of its programme',
    );
    t.same(webhooks.rejected, []);
  });
}

t.test('an ambiguous commit retried with the same key is one transaction (docs/faults.md)', async (t) => {
  const { sandbox } = await scenario(t, 'ambiguous-commit');
  const before = await withdrawals(sandbox);
  const key = 'ts-kit-order-4711';
  const intent = await sandbox.api.POST('/v1/transaction-intents', {
    body: {
      idempotencyKey: key,
      debitAccountId: 'acct_acme_usd',
      creditAmount: '100.00',
      credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' },
    },
  });
  t.equal(intent.response.status, 201, JSON.stringify(intent.error));
  t.equal(intent.data?.status, 'CREATED');
  const transactionIntentId = intent.data?.id ?? '';

  // the server commits, then the answer is lost: a 502 instead of the 200 (docs/faults.md#fault-rules)
  const rule = await sandbox.addFault({ match: { method: 'POST', path: '/v1/transaction-intents/*/commit' }, effect: { type: 'ambiguous', status: 502 }, times: 1 });
  const commit = () => sandbox.api.POST('/v1/transaction-intents/{transactionIntentId}/commit', { params: { path: { transactionIntentId } }, body: { idempotencyKey: key } });
  const lost = await commit();
  t.equal(lost.response.status, 502, 'committed, but the client cannot know');
  t.type((lost.error as { message?: unknown } | undefined)?.message, 'string', 'the error body');
  const retried = await commit();
  t.equal(retried.response.status, 200, JSON.stringify(retried.error));
  t.equal(retried.data?.status, 'COMMITTED');
  const related = retried.data?.relatedTransactionId;
  t.type(related, 'string');
  t.equal((await commit()).data?.relatedTransactionId, related, 'a third commit: still the stored result');

  const after = await withdrawals(sandbox);
  t.same(after.filter((id) => !before.includes(id)), [related], 'one transaction, however often retried');
  const fired = await sandbox.api.GET('/_emulator/faults/{id}', { params: { path: { id: rule.id } } });
  t.same([fired.data?.fired, fired.data?.active], [1, false], 'the rule fired once and is spent');
  const journal = await sandbox.api.GET('/_emulator/requests', { params: { query: { pathPrefix: `/v1/transaction-intents/${transactionIntentId}/commit` } } });
  t.same(journal.data?.data.map((entry) => entry.status).sort(), [200, 200, 502], 'the request journal saw the lost answer');
});

t.test('an ambiguous payout retried with the same key is one transaction (docs/faults.md)', async (t) => {
  const { sandbox } = await scenario(t, 'ambiguous-payout');
  const before = await withdrawals(sandbox);
  await sandbox.addFault({ match: { method: 'POST', path: '/v1/payout-origination/*' }, effect: { type: 'ambiguous', status: 504 }, times: 1 });
  const payload = { entityId: 'acct_acme_usd', beneficiaryId: 'ben_globex', amount: '75.00', currency: 'USD', reference: 'INV-2002' };
  const send = () => sandbox.payout('json', payload, { idempotencyKey: 'ts-kit-json-2002' });
  t.equal((await send()).response.status, 504, 'the lost answer');
  const first = await send();
  t.equal(first.response.status, 202, JSON.stringify(first.error));
  const second = await send();
  t.same(second.data, first.data, 'the retries replay one 202');
  t.same((await withdrawals(sandbox)).filter((id) => !before.includes(id)), [first.data?.transactionId], 'one transaction');
});

t.test('duplicate and badly signed webhooks under chaos leave exactly the right events (docs/faults.md#webhook-chaos)', async (t) => {
  const { sandbox, webhooks } = await scenario(t, 'chaos');
  const chaos = await sandbox.setWebhookChaos({ seed: 'ts-kit', duplicate: { times: 2 }, badSignature: { times: 1 } });
  t.equal(chaos.duplicate?.remaining, 2);
  const id = await deposit(sandbox, { depositInstructionId: 'di_acme_usd_ach', amount: '1250.00', reference: 'INV-2026-0311', counterpartyName: 'Northwind Traders' });
  // settle before the clock moves: the first attempt (the badly signed one) is answered at START whatever the
  // machine's speed, so its retry is due at START + 5 s (without it, the attempt raced advanceClock)
  const first = await sandbox.settle();
  t.equal(first.now, START, 'the first attempt went out at START');
  await sandbox.advanceClock(1000);
  // the badly signed attempt was refused (401) and is retried 5 s of emulated time later: settle, move the clock to
  // the retry, settle again, until nothing waits
  const report = await sandbox.settleUntilIdle();
  t.equal(report.waiting.deliveries, 0, JSON.stringify(report.waiting));
  t.equal(report.now, new Date(Date.parse(START) + 5000).toISOString(), 'the clock was moved to the retry, 5 s after the refusal');

  t.same(webhooks.rejected.map((rejected) => rejected.reason), ['SIGNATURE_MISMATCH'], 'the badly signed attempt refused');
  t.same(statuses(webhooks, id), DEPOSIT_EVENTS, 'each event once, in order');
  t.equal(webhooks.duplicates.length, 2, 'both duplicates acknowledged and set aside');
  const eventIds = webhooks.events.map((event) => event.metadata.eventId);
  t.equal(new Set(eventIds).size, eventIds.length);
  t.ok(webhooks.duplicates.every((event) => eventIds.includes(event.metadata.eventId)), 'duplicates of kept events');

  const log = (await sandbox.webhookDeliveries({ transactionId: id })).data;
  t.same(log.map((delivery) => delivery.eventId).sort(), [...eventIds].sort(), 'every event the emulator sent, each kept once');
  t.ok(log.every((delivery) => delivery.status === 'DELIVERED'), 'all DELIVERED');
  const kinds = log.flatMap((delivery) => delivery.attempts.map((attempt) => attempt.kind));
  t.equal(kinds.filter((kind) => kind === 'DUPLICATE').length, 2);
  const seen = await sandbox.api.GET('/_emulator/webhooks/chaos');
  t.same([seen.data?.duplicate?.fired, seen.data?.badSignature?.fired], [2, 1]);
});

t.test('a session starts from a snapshot (docs/sessions.md#what-a-session-starts-from)', async (t) => {
  const { sandbox: origin } = await scenario(t, 'snapshot');
  const id = await deposit(origin, { depositInstructionId: 'di_acme_usd_wire', amount: '500.00' });
  await origin.advanceClock(1000);
  await origin.saveSnapshot('funded');
  // a session's snapshots are its own: export it and upload it to the root, where sessions can start from it
  const file = await origin.exportSnapshot('funded');
  t.equal(Buffer.from(file.subarray(0, 15)).toString('latin1'), 'SQLite format 3', 'a SQLite file');
  const name = `${LABEL}-funded`;
  const uploaded = await root.uploadSnapshot(name, file);
  t.equal(uploaded.name, name);
  let copies: Scenario[];
  try {
    copies = await Promise.all([scenario(t, 'snapshot-copy-1', { snapshot: name }), scenario(t, 'snapshot-copy-2', { snapshot: name })]);
  } finally {
    await root.deleteSnapshot(name);
  }
  const [first, second] = copies.map((copy) => copy.sandbox) as [SandboxClient, SandboxClient];
  t.equal(copies[0]?.session.startedFrom.snapshot, name);
  for (const copy of [first, second]) {
    t.equal((await copy.clock()).now, '2026-03-01T12:00:01.000Z', "the snapshot's clock");
    t.equal((await transaction(copy, id)).status, 'COMPLETED', "the snapshot's deposit");
    t.equal(await balance(copy), '88562.80');
  }

  // from there on each is its own
  await deposit(first, { depositInstructionId: 'di_acme_usd_ach', amount: '1.00' });
  await first.advanceClock(1000);
  t.same([await balance(first), await balance(second), await balance(origin)], ['88563.80', '88562.80', '88562.80'], 'the sessions share nothing');
  t.equal((await root.api.GET('/_emulator/snapshots/{name}', { params: { path: { name } } })).response.status, 404, 'the root snapshot is deleted');
});
