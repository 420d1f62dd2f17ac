import t from 'tap';
import { advance, buildTestApp, json, START, type TestApp } from '../helper.js';
import { businessEntries, createUser, startEnrollment, submit, writeEntries } from '../helpers/onboarding.js';

// GET /_emulator/users/{userId}/journey (docs/dashboard.md#the-journey-of-a-user): onboarding steps, accounts, money in
// and out, oldest first with the emulated time of each; read only.

interface Item {
  at: string;
  phase: string;
  kind: string;
  status: string | null;
  title: string;
  resourceId: string;
  accountId: string | null;
  transactionId: string | null;
  transactionType: string | null;
  amount: string | null;
  currency: string | null;
  statusCode: string | null;
  detail: string | null;
}

async function journey(sandbox: TestApp, userId: string, query = '') {
  const response = await sandbox.app.inject({ method: 'GET', url: `/_emulator/users/${encodeURIComponent(userId)}/journey${query}` });
  return { status: response.statusCode, body: json(response) };
}

const at = (ms: number) => new Date(Date.parse(START) + ms).toISOString();

t.test('a business onboards, receives a deposit and pays out: every step in order with its emulated time', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const { userId, as } = await createUser(sandbox, 'BUSINESS', 'Northwind Traders Inc', 'northwind');

  let read = await journey(sandbox, userId);
  t.equal(read.status, 200);
  t.match(read.body, { userId, programmeId: 'prg_sandbox', name: 'Northwind Traders Inc', type: 'BUSINESS', enrollmentStatus: 'INACTIVE', enrollmentStatusReason: null, now: START, truncated: false });
  t.same(read.body.items.map((item: Item) => [item.kind, item.status]), [['USER_CREATED', null]], 'only the creation before the enrollment starts');

  const requestId = await startEnrollment(sandbox, as);
  await advance(sandbox, 1_000);
  t.equal((await writeEntries(sandbox, as, requestId, await businessEntries('Northwind Traders Inc'))).statusCode, 200);
  await advance(sandbox, 1_000);
  t.equal((await submit(sandbox, as, requestId)).statusCode, 200);
  read = await journey(sandbox, userId);
  t.same(
    read.body.items.map((item: Item) => [item.kind, item.status, item.at]),
    [
      ['USER_CREATED', null, START],
      ['INFORMATION_REQUEST', 'DRAFT', START],
      ['INFORMATION_REQUEST', 'PROCESSING_SUBMISSION', at(2_000)],
    ],
    'submitted, not yet under review while the clock stands still',
  );

  await advance(sandbox, 5_000); // PENDING_REVIEW at once, the review 5 s after it
  await advance(sandbox, 2_000); // the deposit-instruction provider is ready 2 s after the activation
  const accounts = json(await sandbox.request('GET', '/v1/accounts', undefined, as)).data as Array<{ id: string; currency: string }>;
  const usd = accounts.find((account) => account.currency === 'USD')!;
  const detail = json(await sandbox.request('GET', `/v1/accounts/${usd.id}`, undefined, as));
  const ach = detail.depositInstructions.find((instruction: { rail: { type: string } }) => instruction.rail.type === 'US.USD.ACH');
  const deposited = await sandbox.request('POST', `/v1/sandbox/accounts/${usd.id}/deposits`, { amount: '500.00', depositInstructionId: ach.id, counterpartyName: 'Contoso Retail', reference: 'INV-7' }, as);
  t.equal(deposited.statusCode, 202, deposited.body);
  const depositId = /txn_[A-Za-z0-9]+/.exec(json(deposited).message as string)![0];
  await advance(sandbox, 1_000);

  read = await journey(sandbox, userId);
  t.equal(read.status, 200);
  const items = read.body.items as Item[];
  const onboarding = items.filter((item) => item.phase === 'ONBOARDING').map((item) => [item.kind, item.status, item.at]);
  t.same(
    onboarding,
    [
      ['USER_CREATED', null, START],
      ['INFORMATION_REQUEST', 'DRAFT', START],
      ['INFORMATION_REQUEST', 'PROCESSING_SUBMISSION', at(2_000)],
      ['INFORMATION_REQUEST', 'PENDING_REVIEW', at(2_000)],
      ['INFORMATION_REQUEST', 'COMPLETED', at(7_000)],
      ['ENROLLMENT', 'ACTIVE', at(7_000)],
    ],
    'the onboarding steps in order, each with its emulated time',
  );
  t.match(items.find((item) => item.status === 'COMPLETED' && item.kind === 'INFORMATION_REQUEST'), { resourceId: requestId, detail: 'decision APPROVED' });
  const opened = items.filter((item) => item.kind === 'ACCOUNT_OPENED');
  t.same(opened.map((item) => [item.currency, item.at]).sort(), [['USD', at(7_000)], ['USDC', at(7_000)]], 'the BUSINESS template: a USD and a USDC account at the activation');
  t.ok(items.filter((item) => item.kind === 'DEPOSIT_INSTRUCTION').every((item) => item.at === at(9_000) && item.status === 'ACTIVE'), 'instructions issued when the provider is ready');
  t.same(
    items.filter((item) => item.phase === 'MONEY').map((item) => [item.kind, item.transactionType, item.status, item.amount, item.currency, item.at, item.transactionId]),
    [
      ['MONEY_IN', 'DEPOSIT', 'PENDING', '500.00', 'USD', at(9_000), depositId],
      ['MONEY_IN', 'DEPOSIT', 'COMPLETED', '500.00', 'USD', at(10_000), depositId],
    ],
    'the deposit: one item per status, naming its transaction',
  );
  t.match(items.find((item) => item.transactionId === depositId), { accountId: usd.id, detail: 'from Contoso Retail · INV-7', title: 'Deposit 500.00 USD created (PENDING)' });
  const kinds = items.map((item) => item.kind);
  t.ok(kinds.indexOf('ENROLLMENT') < kinds.indexOf('ACCOUNT_OPENED') && kinds.indexOf('ACCOUNT_OPENED') < kinds.indexOf('MONEY_IN'), 'same instant: onboarding, then accounts, then money');
  const times = items.map((item) => Date.parse(item.at));
  t.same(times, [...times].sort((a, b) => a - b), 'oldest first');

  // a payout failed by the magic cents: PENDING, PROCESSING, FAILED with its code; the fee on the item
  const beneficiary = json(
    await sandbox.request('POST', '/v1/beneficiaries', {
      type: 'BUSINESS',
      businessName: 'Initech LLC',
      instruments: [{ type: 'BANK_ACCOUNT', currency: 'USD', country: 'US', accountHolderName: 'Initech LLC', accountNumber: '987654321012', routingNumber: '021000021' }],
    }, as),
  );
  const intent = json(await sandbox.request('POST', '/v1/transaction-intents', { idempotencyKey: 'j-fail', debitAccountId: usd.id, credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: beneficiary.id, instrumentId: beneficiary.instruments[0].id }, creditAmount: '20.91' }, as));
  const committed = json(await sandbox.request('POST', `/v1/transaction-intents/${intent.id}/commit`, { idempotencyKey: 'j-fail' }, as));
  await advance(sandbox, 4_000);
  const out = (await journey(sandbox, userId)).body.items.filter((item: Item) => item.kind === 'MONEY_OUT');
  t.same(
    out.map((item: Item) => [item.transactionType, item.status, item.statusCode, item.amount, item.at]),
    [
      ['WITHDRAWAL', 'PENDING', null, '21.41', at(10_000)],
      ['WITHDRAWAL', 'PROCESSING', null, '21.41', at(11_000)],
      ['WITHDRAWAL', 'FAILED', 'RAIL_REJECTED', '21.41', at(14_000)],
    ],
    'money out: the debit with its fee, each status, the failure code',
  );
  t.equal(out[0].transactionId, committed.relatedTransactionId);
  t.match(out[0], { fees: [{ amount: '0.50', currency: 'USD' }], detail: /^to Initech LLC/ });
});

t.test('a rejected review, a revocation, a canceled request and a fixture user; reading writes nothing', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);

  const rejected = await createUser(sandbox, 'BUSINESS', 'Reject Holdings Ltd', 'reject');
  const rejectedRequest = await startEnrollment(sandbox, rejected.as);
  await writeEntries(sandbox, rejected.as, rejectedRequest, await businessEntries('Reject Holdings Ltd'));
  await submit(sandbox, rejected.as, rejectedRequest);
  await advance(sandbox, 5_000);
  let items = (await journey(sandbox, rejected.userId)).body.items as Item[];
  t.same(items.slice(-2).map((item) => [item.kind, item.status, item.at]), [['INFORMATION_REQUEST', 'COMPLETED', at(5_000)], ['ENROLLMENT', 'ACTIVATION_REJECTED', at(5_000)]]);
  t.match(items[items.length - 1]!.detail, /REJECT/);
  t.notOk(items.some((item) => item.kind === 'ACCOUNT_OPENED'), 'no account for a rejected business');

  const canceled = await createUser(sandbox, 'BUSINESS', 'Cancel Corp', 'cancel');
  const canceledRequest = await startEnrollment(sandbox, canceled.as);
  await advance(sandbox, 500);
  t.equal((await sandbox.app.inject({ method: 'POST', url: `/_emulator/information-requests/${canceledRequest}/cancel` })).statusCode, 200);
  items = (await journey(sandbox, canceled.userId)).body.items;
  t.same(items.map((item) => [item.kind, item.status, item.at]), [['USER_CREATED', null, at(5_000)], ['INFORMATION_REQUEST', 'DRAFT', at(5_000)], ['INFORMATION_REQUEST', 'CANCELED', at(5_500)]]);

  // a fixture user onboarded before the records begin: no enrollment rows yet, and reading the journey writes none
  const count = () => (sandbox.ctx.db.prepare("SELECT COUNT(*) AS n FROM enrollments WHERE user_id = 'usr_jane'").get() as { n: number }).n;
  t.equal(count(), 0);
  const jane = await journey(sandbox, 'usr_jane');
  t.equal(jane.status, 200);
  t.equal(count(), 0, 'a read only: the lazily written enrollment rows stay unwritten');
  const janeItems = jane.body.items as Item[];
  t.same(janeItems.slice(0, 2).map((item) => [item.kind, item.status]), [['USER_CREATED', null], ['ENROLLMENT', 'ACTIVE']]);
  t.ok(janeItems.some((item) => item.kind === 'ACCOUNT_OPENED' && item.accountId === 'acct_jane_usd'));
  t.ok(janeItems.filter((item) => item.phase === 'MONEY').every((item) => /fixtures' history/.test(item.title) && item.transactionId), 'seeded history: one item per transaction');

  // revoking the fixture user writes its enrollment (ACTIVE from the fixtures) and the revocation
  await advance(sandbox, 1_000);
  t.equal((await sandbox.app.inject({ method: 'POST', url: '/_emulator/enrollment/usr_jane/revoke', payload: { reasonDetail: 'Compliance hold' } })).statusCode, 200);
  const revoked = (await journey(sandbox, 'usr_jane')).body;
  t.match(revoked, { enrollmentStatus: 'INACTIVE', enrollmentStatusReason: 'REVOKED' });
  const last = (revoked.items as Item[]).filter((item) => item.kind === 'ENROLLMENT');
  t.same(last.map((item) => item.status), ['ACTIVE', 'REVOKED']);
  t.match(last[1], { at: at(6_500), detail: 'Compliance hold' });
});

t.test('limit keeps the newest items; errors', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const full = (await journey(sandbox, 'usr_acme')).body;
  t.ok(full.items.length > 3, `acme has ${full.items.length} items`);
  t.equal(full.truncated, false);
  const cut = await journey(sandbox, 'usr_acme', '?limit=3');
  t.equal(cut.status, 200);
  t.equal(cut.body.truncated, true);
  t.same(cut.body.items, full.items.slice(-3), 'the newest three, still oldest first');
  t.equal((await journey(sandbox, 'usr_acme', `?limit=${full.items.length}`)).body.truncated, false, 'exactly the count: not truncated');

  const missing = await journey(sandbox, 'usr_nobody');
  t.equal(missing.status, 404);
  t.match(missing.body, { message: 'User usr_nobody not found', errorCode: 'NOT_FOUND' });
  for (const query of ['?limit=0', '?limit=2001', '?limit=abc', '?limit=1.5', '?extra=1']) {
    const bad = await journey(sandbox, 'usr_acme', query);
    t.equal(bad.status, 400, `${query}: 400`);
    t.ok(typeof bad.body.message === 'string' && !/stack/i.test(JSON.stringify(bad.body)), `${query}: the error body`);
  }
  t.equal((await journey(sandbox, 'x'.repeat(129))).status, 400, 'an id over 128 characters');

  const guarded = await buildTestApp({ config: { adminToken: 'let-me-in' } });
  t.teardown(guarded.close);
  t.equal((await guarded.app.inject({ method: 'GET', url: '/_emulator/users/usr_acme/journey' })).statusCode, 401);
  t.equal((await guarded.app.inject({ method: 'GET', url: '/_emulator/users/usr_acme/journey', headers: { 'x-admin-token': 'let-me-in' } })).statusCode, 200);
});

t.test('the newest N items are the full journey\'s last N, for every N (read in SQL, not built whole and cut)', async (t) => {
  const { injectTransaction } = await import('../../src/emulator/transactions.service.js');
  const { accountItems, enrollmentItems, informationRequestItems, moneyItems, orderJourney, userCreatedItems } = await import('../../src/emulator/journey.service.js');
  const { prepared } = await import('../../src/db/connection.js');
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const userId = 'usr_acme'; // its fixture history has no events: one item per seeded transaction
  // many at one instant (ties broken by creation, id and event order), some held at a status (several events at once),
  // some left PENDING to complete later (events of older transactions after newer ones), incoming and outgoing
  for (let round = 0; round < 6; round += 1) {
    for (let index = 0; index < 12; index += 1) {
      const amount = `${round + 1}.${String(index).padStart(2, '0')}`;
      const held = index % 3 === 0 ? { status: 'COMPLETED' } : {};
      injectTransaction(sandbox.ctx, 'acct_acme_usd', { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: amount, ...held } as never);
      if (index % 4 === 1) injectTransaction(sandbox.ctx, 'acct_acme_usd', { type: 'WITHDRAWAL', direction: 'OUTGOING', debitAmount: '0.50' } as never);
    }
    await advance(sandbox, round % 2 === 0 ? 500 : 60_000);
  }
  const user = prepared<any>(sandbox.ctx.db, 'SELECT * FROM users WHERE id = ?').get(userId);
  const full = orderJourney([
    ...userCreatedItems(user),
    ...informationRequestItems(sandbox.ctx, userId),
    ...enrollmentItems(sandbox.ctx, user),
    ...accountItems(sandbox.ctx, userId),
    ...moneyItems(sandbox.ctx, userId),
  ]);
  t.ok(full.length > 150, `${full.length} items in all`);
  const sameInstant = new Set(full.map((entry) => entry.at)).size;
  t.ok(sameInstant < full.length / 3, 'most items share their instant with others, so ties are tested');
  for (const limit of [1, 2, 3, 7, 20, 50, 99, full.length - 1, full.length, full.length + 1, 500]) {
    const read = await journey(sandbox, userId, `?limit=${limit}`);
    t.equal(read.status, 200);
    t.same(read.body.items, JSON.parse(JSON.stringify(full.slice(-limit))), `limit ${limit}: the full journey's last ${Math.min(limit, full.length)}`);
    t.equal(read.body.truncated, full.length > limit, `limit ${limit}: truncated ${full.length > limit}`);
  }
});
