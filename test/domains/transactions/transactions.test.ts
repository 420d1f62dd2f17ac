import t from 'tap';
import { advance, AS_JANE, AS_OTHER, buildTestApp, json, type TestApp } from '../../helper.js';
import { balances, createWithdrawal, defaultFixtures, eventsOf, expectStatus, getJson, listAll } from '../../helpers/money-in.js';
import { simulateDeposit } from '../../../src/domains/sandbox/sandbox.service.js';

// Interface 4.5 / 4.6 and docs/money-in.md#transactions: the list, its parameters, the change-sync procedure, the rail
// timeline with its magic amounts, and the control-plane route that forces a status.

/** Acme's transactions according to the fixtures file (an independent source): history entries and sweeps. */
function acmeHistoryIds(): string[] {
  const fixtures = defaultFixtures();
  const programme = fixtures.programmes.find((p: any) => p.id === 'prg_sandbox');
  const acmeAccounts = new Set(programme.accounts.filter((a: any) => a.userId === 'usr_acme').map((a: any) => a.id));
  const entries = programme.history.filter((entry: any) => acmeAccounts.has(entry.accountId));
  return [...entries.map((entry: any) => entry.id), ...entries.filter((entry: any) => entry.sweep).map((entry: any) => entry.sweep.id)];
}

const SORT_KEY: Record<string, string> = { CREATED_AT: 'createdAt', UPDATED_AT: 'updatedAt', STATUS: 'status', TYPE: 'type' };

function expectedOrder(items: any[], sortBy: string, direction: 'ASC' | 'DESC'): string[] {
  const key = SORT_KEY[sortBy]!;
  const sign = direction === 'ASC' ? 1 : -1;
  return [...items]
    .sort((a, b) => (a[key] < b[key] ? -sign : a[key] > b[key] ? sign : a.id < b.id ? -sign : a.id > b.id ? sign : 0))
    .map((item) => item.id);
}

async function seedLiveTransactions(sandbox: TestApp): Promise<void> {
  // A completed deposit, a pending one, a withdrawal in PROCESSING and one that failed, on top of history.
  expectStatus(await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '40.00' }), 202);
  createWithdrawal(sandbox.ctx, { accountId: 'acct_acme_usd', userId: 'usr_acme', amountMinor: 1091n, feeMinor: 50n });
  await advance(sandbox, 1000);
  createWithdrawal(sandbox.ctx, { accountId: 'acct_acme_usd', userId: 'usr_acme', amountMinor: 2000n });
  await advance(sandbox, 3000);
  expectStatus(await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_eur/deposits', { depositInstructionId: 'di_acme_eur_sepa', amount: '7.00' }), 202);
}

t.test('the list: scope, totals, every sortBy and sortDirection, paging', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);

  const first = await getJson(sandbox, '/v1/transactions');
  t.equal(first.pageIndex, 0);
  t.equal(first.pageSize, 25, 'default page size');
  const historyIds = acmeHistoryIds();
  t.equal(first.totalRecords, historyIds.length, 'every transaction of the caller, sub-balance sweeps included');
  t.equal(first.data.length, 25);

  await seedLiveTransactions(sandbox);
  const all = await listAll(sandbox);
  t.equal(all.length, historyIds.length + 4);
  t.same(new Set(all.map((item) => item.id)).size, all.length, 'no duplicates');
  t.ok(historyIds.every((id) => all.some((item) => item.id === id)), 'every fixture history id is listed');
  t.same([...new Set(all.map((item) => item.status))].sort(), ['COMPLETED', 'FAILED', 'PENDING', 'PROCESSING'], 'all statuses present');
  t.notOk(all.some((item) => item.id.startsWith('txn_hist_jane')), 'another user\'s transactions are not listed');

  for (const sortBy of ['CREATED_AT', 'UPDATED_AT', 'STATUS', 'TYPE']) {
    for (const direction of ['ASC', 'DESC'] as const) {
      const listed = await listAll(sandbox, `sortBy=${sortBy}&sortDirection=${direction}`);
      t.same(listed.map((item) => item.id), expectedOrder(all, sortBy, direction), `${sortBy} ${direction}, ties by id in the same direction`);
      // Pages of 7 put together give the same order (stable paging).
      const paged: string[] = [];
      for (let pageIndex = 0; pageIndex * 7 < all.length; pageIndex += 1) {
        const page = await getJson(sandbox, `/v1/transactions?sortBy=${sortBy}&sortDirection=${direction}&pageSize=7&pageIndex=${pageIndex}`);
        t.equal(page.totalRecords, all.length);
        paged.push(...page.data.map((item: any) => item.id));
      }
      t.same(paged, listed.map((item) => item.id), `${sortBy} ${direction} paged`);
    }
  }
  t.same((await listAll(sandbox, '')).map((item) => item.id), expectedOrder(all, 'CREATED_AT', 'DESC'), 'default: CREATED_AT DESC');

  // Page bounds.
  const max = await getJson(sandbox, '/v1/transactions?pageSize=200');
  t.equal(max.pageSize, 200);
  t.equal(max.data.length, Math.min(200, all.length));
  const beyond = await getJson(sandbox, '/v1/transactions?pageSize=10&pageIndex=1000');
  t.same(beyond.data, []);
  t.equal(beyond.totalRecords, all.length, 'the total is exact past the last page too');
  const lastPageIndex = Math.floor((all.length - 1) / 10);
  const last = await getJson(sandbox, `/v1/transactions?pageSize=10&pageIndex=${lastPageIndex}`);
  t.equal(last.data.length, all.length - lastPageIndex * 10, 'the last page is short');
});

t.test('filters: type, status, account (sub-balances and both sides of an own transfer), time bounds', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  await seedLiveTransactions(sandbox);
  const all = await listAll(sandbox);

  for (const type of ['DEPOSIT', 'WITHDRAWAL', 'TRANSFER', 'REFUND', 'PARTIAL_REFUND']) {
    const expected = all.filter((item) => item.type === type).map((item) => item.id);
    const page = await getJson(sandbox, `/v1/transactions?type=${type}&pageSize=200`);
    t.same(page.data.map((item: any) => item.id), expected, `type=${type}`);
    t.equal(page.totalRecords, expected.length, `type=${type} total`);
  }
  for (const status of ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED']) {
    const expected = all.filter((item) => item.status === status).map((item) => item.id);
    const page = await getJson(sandbox, `/v1/transactions?status=${status}&pageSize=200`);
    t.same(page.data.map((item: any) => item.id), expected, `status=${status}`);
    t.equal(page.totalRecords, expected.length, `status=${status} total`);
  }
  const combined = await getJson(sandbox, '/v1/transactions?type=WITHDRAWAL&status=FAILED&accountId=acct_acme_usd');
  t.same(combined.data.map((item: any) => item.id), all.filter((i) => i.type === 'WITHDRAWAL' && i.status === 'FAILED').map((i) => i.id));
  t.equal(combined.totalRecords, 2, 'the fixture failed withdrawal and the .91 one');

  const eur = await listAll(sandbox, 'accountId=acct_acme_eur');
  t.ok(eur.some((item) => item.id === 'txn_hist_acme_fx_001'), 'the USD -> EUR transfer is listed under the EUR account');
  t.ok((await listAll(sandbox, 'accountId=acct_acme_usd')).some((item) => item.id === 'txn_hist_acme_fx_001'), '... and under the USD account');
  t.equal((await getJson(sandbox, '/v1/transactions?accountId=acct_acme_eur')).totalRecords, eur.length);
  const usdc = await listAll(sandbox, 'accountId=acct_acme_usdc');
  t.ok(usdc.some((item) => item.category === 'INTERNAL_SWEEP') && usdc.some((item) => item.type === 'DEPOSIT'), 'sub-balance deposits and their sweeps');
  t.equal(new Set([...eur, ...usdc, ...(await listAll(sandbox, 'accountId=acct_acme_usd'))].map((item) => item.id)).size, all.length, 'the accounts together hold every transaction');

  t.equal(expectStatus(await sandbox.request('GET', '/v1/transactions?accountId=acct_jane_usd'), 403).errorCode, 'FORBIDDEN');
  t.equal(expectStatus(await sandbox.request('GET', '/v1/transactions?accountId=acct_nope'), 404).errorCode, 'NOT_FOUND');
  t.equal(expectStatus(await sandbox.request('GET', '/v1/transactions?accountId=acct_acme_usd', undefined, AS_OTHER), 404).errorCode, 'NOT_FOUND');
  t.equal(expectStatus(await sandbox.request('GET', '/v1/transactions?accountId=acct_acme_usdc_ethereum'), 404).errorCode, 'NOT_FOUND', 'a sub-balance is not an account of the API');

  // minCreatedAt: inclusive, with Z or an offset (URL-encoded), digits below the millisecond respected.
  const bound = '2026-02-12T16:30:00.000Z'; // txn_hist_acme_usd_015 was created at exactly this instant
  const expected = all.filter((item) => item.createdAt >= bound).map((item) => item.id);
  t.ok(expected.includes('txn_hist_acme_usd_015'));
  for (const value of [bound, '2026-02-12T16:30:00Z', '2026-02-12T17:30:00.000%2B01:00', '2026-02-12T11:30:00-05:00', '2026-02-12t16:30:00z']) {
    const page = await getJson(sandbox, `/v1/transactions?minCreatedAt=${value}&pageSize=200`);
    t.same(page.data.map((item: any) => item.id), expected, `minCreatedAt=${value}`);
    t.equal(page.totalRecords, expected.length);
  }
  const afterBound = await getJson(sandbox, '/v1/transactions?minCreatedAt=2026-02-12T16:30:00.0001Z&pageSize=200');
  t.notOk(afterBound.data.some((item: any) => item.id === 'txn_hist_acme_usd_015'), 'a bound 100 µs later excludes it');
  const plus = expectStatus(await sandbox.request('GET', '/v1/transactions?minCreatedAt=2026-02-12T17:30:00+01:00'), 400);
  t.equal(plus.validationErrors[0].fieldRef, 'minCreatedAt');
  t.match(plus.validationErrors[0].message, /%2B/, 'an unencoded + gets a hint');

  // minUpdatedAt / maxUpdatedAt: both inclusive.
  const pick = all.find((item) => item.id === 'txn_hist_acme_usd_010')!;
  const pinned = await getJson(sandbox, `/v1/transactions?minUpdatedAt=${pick.updatedAt}&maxUpdatedAt=${pick.updatedAt}`);
  t.same(pinned.data.map((item: any) => item.id), all.filter((item) => item.updatedAt === pick.updatedAt).map((item) => item.id));
  t.ok(pinned.data.some((item: any) => item.id === pick.id));
  const window = await getJson(sandbox, '/v1/transactions?minUpdatedAt=2026-02-01T00:00:00Z&maxUpdatedAt=2026-02-28T23:59:59.999Z&pageSize=200');
  t.same(window.data.map((item: any) => item.id), all.filter((item) => item.updatedAt >= '2026-02-01T00:00:00.000Z' && item.updatedAt <= '2026-02-28T23:59:59.999Z').map((item) => item.id));
  t.equal(window.totalRecords, window.data.length);

  // Bounds in order but less than a millisecond apart round past each other (inwards): an empty page, for the
  // user and for the programme; out of order as sent is a 400, however close (docs/decisions.md#transactions-query).
  const at = pick.updatedAt.slice(0, -1); // ...T15:12:00.000
  const inOrder = `minUpdatedAt=${at}1Z&maxUpdatedAt=${at}9Z`;
  const own = await getJson(sandbox, `/v1/transactions?${inOrder}`);
  t.same([own.data, own.totalRecords], [[], 0], `${inOrder}: nothing, no 400`);
  const programme = await getJson(sandbox, `/v1/transactions?${inOrder}`, { apiKey: 'pk_sandbox_multi', secret: 'sk_sandbox_multi_secret' });
  t.same([programme.data, programme.totalRecords], [[], 0], `${inOrder} for the programme`);
  for (const crossedQuery of [
    `minUpdatedAt=${at}9Z&maxUpdatedAt=${at}1Z`, // 800 ns out of order
    `minUpdatedAt=${pick.updatedAt}&maxUpdatedAt=2026-01-26T15:11:59.999Z`, // one millisecond
    `minUpdatedAt=${pick.updatedAt.slice(0, -1)}001Z&maxUpdatedAt=${at}0009Z`, // 1 µs against 0.9 µs past the millisecond
  ]) {
    const crossed = expectStatus(await sandbox.request('GET', `/v1/transactions?${crossedQuery}`), 400);
    t.equal(crossed.validationErrors[0].fieldRef, 'maxUpdatedAt', `${crossedQuery}: refused`);
  }
});

t.test('bad query values are 400s naming the parameter; nothing falls back', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const cases: Array<[string, string]> = [
    ['sortBy=created_at', 'sortBy'],
    ['sortBy=AMOUNT', 'sortBy'],
    ['sortBy=', 'sortBy'],
    ['sortDirection=asc', 'sortDirection'],
    ['sortDirection=UP', 'sortDirection'],
    ['pageSize=0', 'pageSize'],
    ['pageSize=201', 'pageSize'],
    ['pageSize=abc', 'pageSize'],
    ['pageSize=2.5', 'pageSize'],
    ['pageIndex=-1', 'pageIndex'],
    ['minCreatedAt=yesterday', 'minCreatedAt'],
    ['minCreatedAt=2026-02-30T00:00:00Z', 'minCreatedAt'],
    ['minCreatedAt=2026-03-01', 'minCreatedAt'],
    ['minCreatedAt=2026-03-01T12:00:00', 'minCreatedAt'],
    ['minUpdatedAt=2026-13-01T00:00:00Z', 'minUpdatedAt'],
    ['maxUpdatedAt=now', 'maxUpdatedAt'],
    ['minUpdatedAt=2026-03-01T00:00:00Z&maxUpdatedAt=2026-02-01T00:00:00Z', 'maxUpdatedAt'],
    ['type=PAYOUT', 'type'],
    ['status=DONE', 'status'],
    ['sortBy=CREATED_AT&sortBy=STATUS', 'sortBy'],
    ['sortby=CREATED_AT', 'sortby'],
    ['limit=10', 'limit'],
  ];
  for (const [query, parameter] of cases) {
    const response = await sandbox.request('GET', `/v1/transactions?${query}`);
    t.equal(response.statusCode, 400, query);
    const body = json(response);
    t.notOk('errorCode' in body, `${query}: no errorCode (interface 7.1)`);
    t.ok(body.validationErrors?.some((item: any) => item.fieldRef === parameter), `${query}: names ${parameter} (${response.body})`);
  }
});

t.test('GET /v1/transactions/{id}: the list item; 403 another user\'s; 404 unknown or another programme\'s', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const listed = (await getJson(sandbox, '/v1/transactions?pageSize=1')).data[0];
  const single = await sandbox.request('GET', `/v1/transactions/${listed.id}`);
  t.equal(single.statusCode, 200);
  t.same(json(single), listed);
  t.match(single.headers['content-type'], /^application\/json/);

  t.equal(expectStatus(await sandbox.request('GET', `/v1/transactions/${listed.id}`, undefined, AS_JANE), 403).errorCode, 'FORBIDDEN');
  t.equal(expectStatus(await sandbox.request('GET', `/v1/transactions/${listed.id}`, undefined, AS_OTHER), 404).errorCode, 'NOT_FOUND');
  t.equal(expectStatus(await sandbox.request('GET', '/v1/transactions/txn_nope'), 404).errorCode, 'NOT_FOUND');

  const jane = await getJson(sandbox, '/v1/transactions/txn_hist_jane_007', AS_JANE);
  t.match(jane, {
    type: 'WITHDRAWAL',
    debitAmount: '1200.50',
    netDebitAmount: '1200.00',
    creditAmount: '1200.00',
    fees: [{ type: 'PROCESSING', label: 'ACH processing fee', amount: '0.50', currency: 'USD' }],
    creditParty: { partyType: 'BENEFICIARY', beneficiary: { beneficiaryType: 'PERSON', person: { id: 'ben_john', name: 'John Smith' } } },
    creditInstrument: { instrumentType: 'BANK_ACCOUNT', bankAccount: { id: 'bi_john_usd', mask: '6789', currency: 'USD' } },
    purpose: 'FAMILY_MAINTENANCE',
  });
  const fx = await getJson(sandbox, '/v1/transactions/txn_hist_acme_fx_001');
  t.match(fx, { type: 'TRANSFER', debitAmount: '5000.00', debitCurrency: 'USD', creditAmount: '4577.00', creditCurrency: 'EUR', exchangeRate: '0.9154', baseExchangeRate: '0.92', fxSpread: '0.005' });
  t.notOk('netDebitAmount' in fx, 'no fees, no net figure: absent');
  const failed = await getJson(sandbox, '/v1/transactions/txn_hist_acme_usd_007');
  t.match(failed, { status: 'FAILED', statusCode: 'RAIL_REJECTED' });
  t.notOk('completedAt' in failed);
  t.equal((await getJson(sandbox, '/v1/transactions/txn_hist_acme_usd_009')).type, 'REFUND');
});

t.test('change sync (interface 4.5) with 120 transactions sharing one updatedAt: every change seen exactly once', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  for (let i = 0; i < 120; i += 1) {
    expectStatus(await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: `${i + 1}.00` }), 202);
  }

  const seen = new Map<string, string>(); // id -> updatedAt last recorded
  const recorded: string[] = [];
  let cursor: string | null = null;
  let requests = 0;
  const get = async (query: string) => {
    requests += 1;
    return getJson(sandbox, `/v1/transactions?sortBy=UPDATED_AT&sortDirection=ASC&pageSize=25&${query}`);
  };
  const take = (items: any[]) => {
    for (const item of items) {
      if (seen.get(item.id) === item.updatedAt) continue; // the bound is inclusive: skip what was already seen
      seen.set(item.id, item.updatedAt);
      recorded.push(`${item.id}@${item.updatedAt}`);
    }
  };
  const sync = async () => {
    for (;;) {
      const page = await get(`pageIndex=0${cursor ? `&minUpdatedAt=${cursor}` : ''}`);
      take(page.data);
      if (page.data.length < 25) return;
      const firstAt = page.data[0].updatedAt;
      const lastAt = page.data.at(-1).updatedAt;
      if (firstAt === lastAt) {
        // A full page shares one updatedAt: pin both bounds to it and page through, then move past it.
        for (let pageIndex = 1; ; pageIndex += 1) {
          const pinned = await get(`pageIndex=${pageIndex}&minUpdatedAt=${firstAt}&maxUpdatedAt=${firstAt}`);
          take(pinned.data);
          if (pinned.data.length < 25) break;
        }
        cursor = new Date(Date.parse(firstAt) + 1).toISOString();
      } else {
        cursor = lastAt;
      }
      if (requests > 200) throw new Error('sync does not terminate');
    }
  };

  await sync();
  const everything = await listAll(sandbox);
  t.equal(everything.length, acmeHistoryIds().length + 120);
  t.equal(recorded.length, everything.length, 'each transaction recorded exactly once');
  t.same(new Set(recorded).size, recorded.length, 'no repeats');
  t.same([...seen.keys()].sort(), everything.map((item) => item.id).sort(), 'every id seen');

  // The 120 deposits complete at one instant: the next sync records each update exactly once.
  await advance(sandbox, 1000);
  const before = recorded.length;
  await sync();
  t.equal(recorded.length - before, 120, 'each completed deposit recorded once more');
  t.ok(recorded.slice(before).every((entry) => entry.endsWith('@2026-03-01T12:00:01.000Z')));
  await sync();
  t.equal(recorded.length - before, 120, 'a sync with no changes records nothing');
});

t.test('rail timeline and magic amounts on outgoing transactions', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const { ctx } = sandbox;
  const opening = await balances(sandbox, 'acct_acme_usd');
  const cents = (value: string) => Math.round(Number(value) * 100);

  // Normal: PENDING -> PROCESSING after 1 s -> COMPLETED 3 s later.
  const normal = createWithdrawal(ctx, { accountId: 'acct_acme_usd', userId: 'usr_acme', amountMinor: 10_000n, feeMinor: 50n });
  t.equal(normal.rail_behaviour, 'NORMAL');
  // .91: fails at processing, hold released. .92: stays PROCESSING.
  const rejected = createWithdrawal(ctx, { accountId: 'acct_acme_usd', userId: 'usr_acme', amountMinor: 1091n, feeMinor: 50n });
  const held = createWithdrawal(ctx, { accountId: 'acct_acme_usd', userId: 'usr_acme', amountMinor: 2092n, feeMinor: 50n });
  t.equal(rejected.rail_behaviour, 'REJECT', 'cents .91 of the amount sent');
  t.equal(held.rail_behaviour, 'HOLD', 'cents .92 of the amount sent');

  let now = await balances(sandbox, 'acct_acme_usd');
  t.equal(cents(now.available), cents(opening.available) - (10_050 + 1141 + 2142), 'every debit and fee is held at creation');
  t.equal(now.current, opening.current, 'current moves only on completion');

  await advance(sandbox, 1000);
  for (const id of [normal.id, rejected.id, held.id]) t.equal((await getJson(sandbox, `/v1/transactions/${id}`)).status, 'PROCESSING');
  await advance(sandbox, 3000);
  const normalDone = await getJson(sandbox, `/v1/transactions/${normal.id}`);
  t.equal(normalDone.status, 'COMPLETED');
  t.equal(normalDone.completedAt, '2026-03-01T12:00:04.000Z');
  t.equal(normalDone.netDebitAmount, '100.00', 'debit net of fees');
  const rejectedDone = await getJson(sandbox, `/v1/transactions/${rejected.id}`);
  t.match(rejectedDone, { status: 'FAILED', statusCode: 'RAIL_REJECTED', statusReason: /rail/ });
  t.notOk('completedAt' in rejectedDone);
  await advance(sandbox, 3_600_000);
  t.equal((await getJson(sandbox, `/v1/transactions/${held.id}`)).status, 'PROCESSING', '.92 stays PROCESSING an hour later');

  now = await balances(sandbox, 'acct_acme_usd');
  t.equal(cents(now.available), cents(opening.available) - 10_050 - 2142, 'the .91 hold was released');
  t.equal(cents(now.current), cents(opening.current) - 10_050, 'only the completed withdrawal left current');

  const forced = expectStatus(await sandbox.app.inject({ method: 'POST', url: `/_emulator/transactions/${held.id}/status`, payload: { status: 'COMPLETED' } }), 200);
  t.equal(forced.status, 'COMPLETED');
  now = await balances(sandbox, 'acct_acme_usd');
  t.equal(cents(now.current), cents(opening.current) - 10_050 - 2142);
  t.equal(now.available, now.current);

  t.same(eventsOf(ctx, normal.id).map((e) => `${e.event_type}:${e.status}`), [
    'transaction_created:PENDING',
    'transaction_status_updated:PROCESSING',
    'transaction_status_updated:COMPLETED',
  ]);
  t.same(eventsOf(ctx, rejected.id).map((e) => e.status), ['PENDING', 'PROCESSING', 'FAILED']);
  t.same(eventsOf(ctx, held.id).map((e) => e.status), ['PENDING', 'PROCESSING', 'COMPLETED']);
  const entries = ctx.db.prepare('SELECT kind, amount_minor FROM ledger_entries WHERE transaction_id = ? ORDER BY id').all(rejected.id);
  t.same(entries, [
    { kind: 'PRINCIPAL', amount_minor: -1091 },
    { kind: 'FEE', amount_minor: -50 },
    { kind: 'REVERSAL', amount_minor: 1091 },
    { kind: 'REVERSAL', amount_minor: 50 },
  ], 'amount and fee held as separate entries, each reversed');
});

t.test('POST /_emulator/transactions/{id}/status: legal, illegal 409, unknown 404, bad body 400', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const force = (id: string, payload: unknown) => sandbox.app.inject({ method: 'POST', url: `/_emulator/transactions/${id}/status`, payload: payload as object });

  expectStatus(await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '12.00' }), 202);
  const deposit = (await getJson(sandbox, '/v1/transactions?pageSize=1')).data[0];
  const opening = await balances(sandbox, 'acct_acme_usd');

  const processing = expectStatus(await force(deposit.id, { status: 'PROCESSING' }), 200);
  t.equal(processing.status, 'PROCESSING', 'no credentials needed');
  const failed = expectStatus(await force(deposit.id, { status: 'FAILED', statusCode: 'COMPLIANCE_HOLD', statusReason: 'Held for review' }), 200);
  t.match(failed, { status: 'FAILED', statusCode: 'COMPLIANCE_HOLD', statusReason: 'Held for review' });
  await advance(sandbox, 5000);
  t.equal((await getJson(sandbox, `/v1/transactions/${deposit.id}`)).status, 'FAILED', 'the scheduled rail step no longer applies');
  t.same(await balances(sandbox, 'acct_acme_usd'), opening, 'a failed deposit credits nothing');
  t.same(eventsOf(sandbox.ctx, deposit.id).map((e) => e.status), ['PENDING', 'PROCESSING', 'FAILED']);

  const illegal = expectStatus(await force(deposit.id, { status: 'COMPLETED' }), 409);
  t.equal(illegal.errorCode, 'INVALID_REQUEST');
  t.match(illegal.message, /cannot move from FAILED to COMPLETED/);
  const settled = expectStatus(await force('txn_hist_acme_usd_001', { status: 'PENDING' }), 409);
  t.match(settled.message, /final state/);
  t.equal(eventsOf(sandbox.ctx, deposit.id).length, 3, 'a refused transition writes no event');

  t.equal(expectStatus(await force('txn_nope', { status: 'COMPLETED' }), 404).errorCode, 'NOT_FOUND');
  const bad = expectStatus(await force(deposit.id, { status: 'DONE' }), 400);
  t.equal(bad.validationErrors[0].fieldRef, 'status');
  const badCode = expectStatus(await force(deposit.id, { status: 'FAILED', statusCode: 'lower case' }), 400);
  t.equal(badCode.validationErrors[0].fieldRef, 'statusCode');
});

t.test('exact totals under time bounds: hourly counters plus the rows of the bound\'s hour (2,100 rows share one instant)', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const caller = { programmeId: 'prg_sandbox', userId: 'usr_acme' };
  for (let i = 0; i < 2100; i += 1) {
    simulateDeposit(sandbox.ctx, caller, i % 3 === 0 ? 'acct_acme_eur' : 'acct_acme_usd', {
      depositInstructionId: i % 3 === 0 ? 'di_acme_eur_sepa' : 'di_acme_usd_ach',
      amount: '1.00',
    });
  }
  await advance(sandbox, 1000); // every deposit completes at 12:00:01.000: one shared updatedAt
  const everything = await listAll(sandbox);
  const ms = (iso: string) => Date.parse(iso);
  const instants = [
    '2025-12-31T23:59:59.999Z', '2026-01-02T15:04:00.000Z', '2026-01-02T15:04:00.001Z', '2026-01-02T15:06:30.000Z',
    '2026-01-12T09:00:00.000Z', '2026-02-12T16:00:00.000Z', '2026-02-26T18:00:00.000Z', '2026-02-26T18:00:00.001Z',
    '2026-03-01T11:59:59.999Z', '2026-03-01T12:00:00.000Z', '2026-03-01T12:00:00.001Z', '2026-03-01T12:00:00.999Z',
    '2026-03-01T12:00:01.000Z', '2026-03-01T12:00:01.001Z', '2026-03-01T13:00:00.000Z', '2027-01-01T00:00:00.000Z',
  ];
  for (const [scope, items] of [
    ['', everything],
    ['accountId=acct_acme_usd&', await listAll(sandbox, 'accountId=acct_acme_usd')],
    ['accountId=acct_acme_eur&', await listAll(sandbox, 'accountId=acct_acme_eur')],
  ] as const) {
    const total = async (query: string) => (await getJson(sandbox, `/v1/transactions?${scope}${query}&pageSize=1`)).totalRecords;
    for (const at of instants) {
      t.equal(await total(`minCreatedAt=${at}`), items.filter((i) => ms(i.createdAt) >= ms(at)).length, `${scope}minCreatedAt=${at}`);
      t.equal(await total(`minUpdatedAt=${at}`), items.filter((i) => ms(i.updatedAt) >= ms(at)).length, `${scope}minUpdatedAt=${at}`);
      t.equal(await total(`maxUpdatedAt=${at}`), items.filter((i) => ms(i.updatedAt) <= ms(at)).length, `${scope}maxUpdatedAt=${at}`);
      t.equal(await total(`minUpdatedAt=${at}&maxUpdatedAt=${at}`), items.filter((i) => i.updatedAt === new Date(ms(at)).toISOString()).length, `${scope}pinned ${at}`);
    }
    t.equal(await total('minUpdatedAt=2026-01-20T00:00:00Z&maxUpdatedAt=2026-03-01T12:00:00.999Z'), items.filter((i) => i.updatedAt >= '2026-01-20T00:00:00.000Z' && i.updatedAt <= '2026-03-01T12:00:00.999Z').length);
    t.equal(await total('minCreatedAt=2026-01-20T00:00:00Z&minUpdatedAt=2026-02-01T00:00:00Z'), items.filter((i) => i.createdAt >= '2026-01-20T00:00:00.000Z' && i.updatedAt >= '2026-02-01T00:00:00.000Z').length, 'both fields bounded');
    t.equal(await total('minUpdatedAt=2026-02-01T00:00:00Z&type=DEPOSIT'), items.filter((i) => i.updatedAt >= '2026-02-01T00:00:00.000Z' && i.type === 'DEPOSIT').length, 'bound and type');
  }
  // The counters agree with the rows they summarise.
  const drift = sandbox.ctx.db
    .prepare(
      `SELECT COUNT(*) AS n FROM (
         SELECT scope, field, bucket, n FROM transaction_time_counts WHERE n <> 0
         EXCEPT
         SELECT 'programme:' || programme_id, 'u', updated_at_ms / 3600000, COUNT(*) FROM transactions GROUP BY 1, 2, 3
         EXCEPT
         SELECT 'programme:' || programme_id, 'c', created_at_ms / 3600000, COUNT(*) FROM transactions GROUP BY 1, 2, 3
         EXCEPT
         SELECT 'user:' || user_id, 'u', updated_at_ms / 3600000, COUNT(*) FROM transactions GROUP BY 1, 2, 3
         EXCEPT
         SELECT 'user:' || user_id, 'c', created_at_ms / 3600000, COUNT(*) FROM transactions GROUP BY 1, 2, 3
         EXCEPT
         SELECT 'account:' || account_id, 'u', updated_at_ms / 3600000, COUNT(*) FROM transaction_accounts GROUP BY 1, 2, 3
         EXCEPT
         SELECT 'account:' || account_id, 'c', created_at_ms / 3600000, COUNT(*) FROM transaction_accounts GROUP BY 1, 2, 3)`,
    )
    .get() as { n: number };
  t.equal(drift.n, 0, 'every hourly counter equals a count of its rows');
});
