import t from 'tap';
import { advance, AS_ACME_MULTI, AS_JANE, AS_OTHER, CREDENTIALS, buildTestApp, json, type Identity, type TestApp } from '../../helper.js';
import { createWithdrawal, expectStatus, getJson, listAll } from '../../helpers/money-in.js';
import { simulateDeposit } from '../../../src/domains/sandbox/sandbox.service.js';

// Programme-wide transactions (docs/money-in.md#programme-wide-transactions; interface 4.5 "Omitted: every
// transaction in the programme"): GET /v1/transactions and GET /v1/transactions/{id} with a MULTI_USER key and
// no X-Service-User-Id act for the whole programme; with a user header, a SINGLE_USER key or a bearer token
// they stay scoped to one user. Another programme's transactions never appear.

const PROGRAMME: Identity = { apiKey: CREDENTIALS.multi.apiKey, secret: CREDENTIALS.multi.secret };
const OTHER_PROGRAMME: Identity = { ...AS_OTHER, userId: undefined };
const SORT_KEY: Record<string, string> = { CREATED_AT: 'createdAt', UPDATED_AT: 'updatedAt', STATUS: 'status', TYPE: 'type' };

function expectedOrder(items: any[], sortBy: string, direction: 'ASC' | 'DESC'): string[] {
  const key = SORT_KEY[sortBy]!;
  const sign = direction === 'ASC' ? 1 : -1;
  return [...items]
    .sort((a, b) => (a[key] < b[key] ? -sign : a[key] > b[key] ? sign : a.id < b.id ? -sign : a.id > b.id ? sign : 0))
    .map((item) => item.id);
}

const ids = (items: any[]) => items.map((item) => item.id);
const sorted = (values: string[]) => [...values].sort();

/** Live transactions of both users of prg_sandbox and of prg_other, on top of the fixtures' history. */
async function seedBothUsers(sandbox: TestApp): Promise<string> {
  expectStatus(await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '40.00' }), 202);
  expectStatus(await sandbox.request('POST', '/v1/sandbox/accounts/acct_jane_usd/deposits', { depositInstructionId: 'di_jane_usd_ach', amount: '12.00' }, AS_JANE), 202);
  createWithdrawal(sandbox.ctx, { accountId: 'acct_jane_usd', userId: 'usr_jane', amountMinor: 500n, feeMinor: 50n });
  await advance(sandbox, 1000);
  createWithdrawal(sandbox.ctx, { accountId: 'acct_acme_usd', userId: 'usr_acme', amountMinor: 1091n }); // magic .91: fails
  await advance(sandbox, 4000);
  const other = expectStatus(
    await sandbox.request('POST', '/v1/sandbox/accounts/acct_other_usd/deposits', { depositInstructionId: 'di_other_usd_ach', amount: '3.00' }, AS_OTHER),
    202,
  );
  return /(txn_[a-z0-9]+)/.exec(other.message)![1]!;
}

t.test('the programme list: both users, exact totals, every sort and direction, paging bounds', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);

  const fixturesOnly = await getJson(sandbox, '/v1/transactions', PROGRAMME);
  t.equal(fixturesOnly.totalRecords, 30 + 8, 'acme\'s 30 and jane\'s 8 fixture transactions');

  const otherId = await seedBothUsers(sandbox);
  const acme = await listAll(sandbox, '', AS_ACME_MULTI);
  const jane = await listAll(sandbox, '', AS_JANE);
  const all = await listAll(sandbox, '', PROGRAMME);
  t.equal(acme.length, 32);
  t.equal(jane.length, 10);
  t.equal(all.length, acme.length + jane.length, 'every user\'s transactions, once each');
  t.same(sorted(ids(all)), sorted([...ids(acme), ...ids(jane)]), 'exactly the union of the users\' lists');
  t.notOk(ids(all).includes(otherId), 'another programme\'s transaction is not listed');
  t.same(all.find((item) => item.id === jane[0].id), jane[0], 'the same item as in the user\'s own list');

  for (const sortBy of ['CREATED_AT', 'UPDATED_AT', 'STATUS', 'TYPE']) {
    for (const direction of ['ASC', 'DESC'] as const) {
      const listed = await listAll(sandbox, `sortBy=${sortBy}&sortDirection=${direction}`, PROGRAMME);
      t.same(ids(listed), expectedOrder(all, sortBy, direction), `${sortBy} ${direction}, ties by id in the same direction`);
      const paged: string[] = [];
      for (let pageIndex = 0; pageIndex * 9 < all.length; pageIndex += 1) {
        const page = await getJson(sandbox, `/v1/transactions?sortBy=${sortBy}&sortDirection=${direction}&pageSize=9&pageIndex=${pageIndex}`, PROGRAMME);
        t.equal(page.totalRecords, all.length);
        paged.push(...ids(page.data));
      }
      t.same(paged, ids(listed), `${sortBy} ${direction} in pages of 9`);
    }
  }
  t.same(ids(await listAll(sandbox, '', PROGRAMME)), expectedOrder(all, 'CREATED_AT', 'DESC'), 'default: CREATED_AT DESC');

  const lastIndex = Math.floor((all.length - 1) / 10);
  const last = await getJson(sandbox, `/v1/transactions?pageSize=10&pageIndex=${lastIndex}`, PROGRAMME);
  t.equal(last.data.length, all.length - lastIndex * 10, 'a short last page');
  const beyond = await getJson(sandbox, `/v1/transactions?pageSize=10&pageIndex=${lastIndex + 1}`, PROGRAMME);
  t.same(beyond, { data: [], pageIndex: lastIndex + 1, pageSize: 10, totalRecords: all.length }, 'past the end: empty, exact total');
  const max = await getJson(sandbox, '/v1/transactions?pageSize=200', PROGRAMME);
  t.equal(max.data.length, all.length);
  for (const bad of ['pageSize=0', 'pageSize=201', 'pageIndex=-1', 'sortBy=AMOUNT', 'sortDirection=UP', 'minUpdatedAt=yesterday']) {
    const response = await sandbox.request('GET', `/v1/transactions?${bad}`, undefined, PROGRAMME);
    t.equal(response.statusCode, 400, `${bad}: 400`);
    t.ok(json(response).validationErrors?.length, `${bad}: names the parameter`);
  }

  // The other programme's MULTI_USER key without a header sees its own programme only.
  const other = await getJson(sandbox, '/v1/transactions', OTHER_PROGRAMME);
  t.equal(other.totalRecords, 1);
  t.same(ids(other.data), [otherId]);
});

t.test('the programme list: every filter, with exact totals', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  await seedBothUsers(sandbox);
  const all = await listAll(sandbox, '', PROGRAMME);
  const total = async (query: string) => (await getJson(sandbox, `/v1/transactions?pageSize=1&${query}`, PROGRAMME)).totalRecords;
  const listed = async (query: string) => sorted(ids(await listAll(sandbox, query, PROGRAMME)));
  const expect = (keep: (item: any) => boolean) => sorted(ids(all.filter(keep)));

  for (const type of [...new Set(all.map((item) => item.type))]) {
    t.same(await listed(`type=${type}`), expect((item) => item.type === type), `type=${type}`);
    t.equal(await total(`type=${type}`), all.filter((item) => item.type === type).length);
  }
  for (const status of ['COMPLETED', 'FAILED', 'PENDING', 'PROCESSING']) {
    t.same(await listed(`status=${status}`), expect((item) => item.status === status), `status=${status}`);
    t.equal(await total(`status=${status}`), all.filter((item) => item.status === status).length);
  }
  t.same(await listed('type=WITHDRAWAL&status=FAILED'), expect((item) => item.type === 'WITHDRAWAL' && item.status === 'FAILED'), 'type and status');

  const instants = ['2025-12-31T23:59:59.999Z', '2026-01-15T00:00:00.000Z', '2026-02-20T12:00:00.000Z', '2026-03-01T12:00:00.000Z', '2026-03-01T12:00:01.000Z', '2027-01-01T00:00:00.000Z'];
  const ms = (iso: string) => Date.parse(iso);
  for (const at of instants) {
    t.same(await listed(`minCreatedAt=${at}`), expect((item) => ms(item.createdAt) >= ms(at)), `minCreatedAt=${at}`);
    t.equal(await total(`minCreatedAt=${at}`), all.filter((item) => ms(item.createdAt) >= ms(at)).length);
    t.equal(await total(`minUpdatedAt=${at}`), all.filter((item) => ms(item.updatedAt) >= ms(at)).length, `minUpdatedAt=${at}`);
    t.equal(await total(`maxUpdatedAt=${at}`), all.filter((item) => ms(item.updatedAt) <= ms(at)).length, `maxUpdatedAt=${at}`);
  }
  t.same(
    await listed('minUpdatedAt=2026-01-15T00:00:00Z&maxUpdatedAt=2026-03-01T12:00:01Z&type=DEPOSIT'),
    expect((item) => item.updatedAt >= '2026-01-15T00:00:00.000Z' && item.updatedAt <= '2026-03-01T12:00:01.000Z' && item.type === 'DEPOSIT'),
    'time bounds and a type',
  );

  // accountId may name any account of the programme; sub-balances roll up as for the owner.
  for (const [accountId, owner] of [['acct_jane_usd', AS_JANE], ['acct_acme_usd', AS_ACME_MULTI], ['acct_acme_usdc', AS_ACME_MULTI]] as const) {
    const asOwner = await listAll(sandbox, `accountId=${accountId}`, owner);
    t.ok(asOwner.length > 0, `${accountId} has transactions`);
    t.same(await listAll(sandbox, `accountId=${accountId}`, PROGRAMME), asOwner, `accountId=${accountId}: the owner's list of that account`);
    t.equal(await total(`accountId=${accountId}&status=COMPLETED`), asOwner.filter((item) => item.status === 'COMPLETED').length);
  }
  // Another programme's account, a sub-balance and an unknown id: 404, as for a user's unknown account.
  for (const accountId of ['acct_other_usd', 'acct_nope']) {
    const response = await sandbox.request('GET', `/v1/transactions?accountId=${accountId}`, undefined, PROGRAMME);
    t.equal(expectStatus(response, 404).errorCode, 'NOT_FOUND', `${accountId}: 404`);
    t.equal(expectStatus(await sandbox.request('GET', `/v1/transactions?accountId=${accountId}`, undefined, AS_JANE), 404).errorCode, 'NOT_FOUND', `${accountId}: 404 for a user too`);
  }
  // The per-user rule is unchanged: another user's account is 403 when acting for one user.
  t.equal(expectStatus(await sandbox.request('GET', '/v1/transactions?accountId=acct_acme_usd', undefined, AS_JANE), 403).errorCode, 'FORBIDDEN');
});

t.test('GET /v1/transactions/{id} at programme scope; user scopes unchanged; other programme 404', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const otherId = await seedBothUsers(sandbox);

  const janeItem = (await getJson(sandbox, '/v1/transactions?pageSize=1', AS_JANE)).data[0];
  const acmeItem = (await getJson(sandbox, '/v1/transactions?pageSize=1')).data[0];
  t.same(await getJson(sandbox, `/v1/transactions/${janeItem.id}`, PROGRAMME), janeItem, 'jane\'s transaction without a user header');
  t.same(await getJson(sandbox, `/v1/transactions/${acmeItem.id}`, PROGRAMME), acmeItem, 'acme\'s transaction without a user header');
  t.same(await getJson(sandbox, '/v1/transactions/txn_hist_jane_007', PROGRAMME), await getJson(sandbox, '/v1/transactions/txn_hist_jane_007', AS_JANE));

  // With a user header naming another user, or the SINGLE_USER key of acme: today's rule, 403.
  t.equal(expectStatus(await sandbox.request('GET', `/v1/transactions/${janeItem.id}`, undefined, AS_ACME_MULTI), 403).errorCode, 'FORBIDDEN');
  t.equal(expectStatus(await sandbox.request('GET', `/v1/transactions/${janeItem.id}`), 403).errorCode, 'FORBIDDEN');
  // Another programme's transaction, or none: 404 either way.
  t.equal(expectStatus(await sandbox.request('GET', `/v1/transactions/${otherId}`, undefined, PROGRAMME), 404).errorCode, 'NOT_FOUND');
  t.equal(expectStatus(await sandbox.request('GET', '/v1/transactions/txn_nope', undefined, PROGRAMME), 404).errorCode, 'NOT_FOUND');
  t.equal(expectStatus(await sandbox.request('GET', `/v1/transactions/${janeItem.id}`, undefined, OTHER_PROGRAMME), 404).errorCode, 'NOT_FOUND');
  t.equal((await getJson(sandbox, `/v1/transactions/${otherId}`, OTHER_PROGRAMME)).id, otherId, 'the other programme sees its own');
});

t.test('user context is unchanged elsewhere: bearer, SINGLE_USER, headers, other endpoints', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  await seedBothUsers(sandbox);
  const jane = await listAll(sandbox, '', AS_JANE);

  const token = expectStatus(await sandbox.request('POST', '/v1/auth/token', {}, AS_JANE), 200).accessToken;
  t.same(await listAll(sandbox, '', { bearer: token }), jane, 'a bearer token: its user only');
  const acmeItem = (await getJson(sandbox, '/v1/transactions?pageSize=1')).data[0];
  t.equal(expectStatus(await sandbox.request('GET', `/v1/transactions/${acmeItem.id}`, undefined, { bearer: token }), 403).errorCode, 'FORBIDDEN');
  const single = await getJson(sandbox, '/v1/transactions');
  t.equal(single.totalRecords, 32, 'the SINGLE_USER key: acme only');
  t.notOk(single.data.some((item: any) => item.id.startsWith('txn_hist_jane')));

  // A header naming a user outside the programme, or an empty one, is refused as before.
  t.equal(expectStatus(await sandbox.request('GET', '/v1/transactions', undefined, { ...PROGRAMME, userId: 'usr_other' }), 403).errorCode, 'FORBIDDEN');
  const empty = await sandbox.app.inject({ method: 'GET', url: '/v1/transactions', headers: { ...sandbox.sign('GET', '/v1/transactions', '', PROGRAMME), 'x-service-user-id': '' } });
  t.equal(expectStatus(empty, 400).errorCode, 'USER_ID_HEADER_REQUIRED');
  t.match(json(empty).message, /empty/);

  // Every other user-scoped endpoint still needs the header with a MULTI_USER key.
  for (const url of ['/v1/accounts', '/v1/accounts/acct_acme_usd', '/v1/beneficiaries', '/v1/enrollment', '/v1/transaction-intents']) {
    const response = await sandbox.request('GET', url, undefined, PROGRAMME);
    t.equal(expectStatus(response, 400).errorCode, 'USER_ID_HEADER_REQUIRED', `${url}: header required`);
  }
  const deposit = await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '1.00' }, PROGRAMME);
  t.equal(expectStatus(deposit, 400).errorCode, 'USER_ID_HEADER_REQUIRED', 'writes too');
});

t.test('change sync over the programme: 300 rows of two users share one updatedAt (frozen clock), each seen exactly once', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  for (let i = 0; i < 300; i += 1) {
    const jane = i % 3 === 0;
    simulateDeposit(
      sandbox.ctx,
      { programmeId: 'prg_sandbox', userId: jane ? 'usr_jane' : 'usr_acme' },
      jane ? 'acct_jane_usd' : i % 3 === 1 ? 'acct_acme_usd' : 'acct_acme_eur',
      { depositInstructionId: jane ? 'di_jane_usd_ach' : i % 3 === 1 ? 'di_acme_usd_ach' : 'di_acme_eur_sepa', amount: `${i + 1}.00` },
    );
  }
  // prg_other's deposits share the instant too, and must never be seen.
  for (let i = 0; i < 30; i += 1) {
    simulateDeposit(sandbox.ctx, { programmeId: 'prg_other', userId: 'usr_other' }, 'acct_other_usd', { depositInstructionId: 'di_other_usd_ach', amount: '2.00' });
  }

  const PAGE = 25;
  const seen = new Map<string, string>();
  const recorded: string[] = [];
  let cursor: string | null = null;
  let requests = 0;
  const get = async (query: string) => {
    requests += 1;
    if (requests > 400) throw new Error('sync does not terminate');
    return getJson(sandbox, `/v1/transactions?sortBy=UPDATED_AT&sortDirection=ASC&pageSize=${PAGE}&${query}`, PROGRAMME);
  };
  const take = (items: any[]) => {
    for (const item of items) {
      if (seen.get(item.id) === item.updatedAt) continue;
      seen.set(item.id, item.updatedAt);
      recorded.push(`${item.id}@${item.updatedAt}`);
    }
  };
  // Interface 4.5's procedure: advance minUpdatedAt; when a full page shares one updatedAt, pin both bounds
  // to it and page until a short page, then move past it.
  const sync = async () => {
    for (;;) {
      const page = await get(`pageIndex=0${cursor ? `&minUpdatedAt=${cursor}` : ''}`);
      take(page.data);
      if (page.data.length < PAGE) return;
      const firstAt = page.data[0].updatedAt;
      const lastAt = page.data.at(-1).updatedAt;
      if (firstAt === lastAt) {
        for (let pageIndex = 1; ; pageIndex += 1) {
          const pinned = await get(`pageIndex=${pageIndex}&minUpdatedAt=${firstAt}&maxUpdatedAt=${firstAt}`);
          take(pinned.data);
          if (pinned.data.length < PAGE) break;
        }
        cursor = new Date(Date.parse(firstAt) + 1).toISOString();
      } else {
        cursor = lastAt;
      }
    }
  };

  await sync();
  const everything = await listAll(sandbox, '', PROGRAMME);
  t.equal(everything.length, 38 + 300, 'fixtures of both users plus the 300 deposits');
  t.equal(recorded.length, everything.length, 'each transaction recorded exactly once');
  t.same(sorted([...seen.keys()]), sorted(ids(everything)), 'every id of the programme seen, none of another');
  const pinned = await getJson(sandbox, '/v1/transactions?minUpdatedAt=2026-03-01T12:00:00Z&maxUpdatedAt=2026-03-01T12:00:00Z&pageSize=1', PROGRAMME);
  t.equal(pinned.totalRecords, 300, 'exact total of the shared instant');

  // Every deposit completes at one instant: the next sync records each update exactly once.
  await advance(sandbox, 1000);
  const before = recorded.length;
  await sync();
  t.equal(recorded.length - before, 300, 'each completed deposit recorded once more');
  t.ok(recorded.slice(before).every((entry) => entry.endsWith('@2026-03-01T12:00:01.000Z')));
  await sync();
  t.equal(recorded.length - before, 300, 'a sync with no changes records nothing');
});

t.test('the programme counters equal the rows they summarise, through creates, status changes and reset', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  await seedBothUsers(sandbox);
  const drift = () =>
    (
      sandbox.ctx.db
        .prepare(
          `SELECT (SELECT COUNT(*) FROM (
             SELECT scope, type, status, n FROM transaction_counts WHERE scope LIKE 'programme:%' AND n <> 0
             EXCEPT SELECT 'programme:' || programme_id, type, status, COUNT(*) FROM transactions GROUP BY 1, 2, 3))
           + (SELECT COUNT(*) FROM (
             SELECT scope, field, bucket, n FROM transaction_time_counts WHERE scope LIKE 'programme:%' AND n <> 0
             EXCEPT SELECT 'programme:' || programme_id, 'c', created_at_ms / 3600000, COUNT(*) FROM transactions GROUP BY 1, 2, 3
             EXCEPT SELECT 'programme:' || programme_id, 'u', updated_at_ms / 3600000, COUNT(*) FROM transactions GROUP BY 1, 2, 3)) AS n`,
        )
        .get() as { n: number }
    ).n;
  t.equal(drift(), 0, 'after creates and timelines');
  const sum = (scope: string) => (sandbox.ctx.db.prepare('SELECT SUM(n) AS n FROM transaction_counts WHERE scope = ?').get(scope) as { n: number }).n;
  t.equal(sum('programme:prg_sandbox'), 42);
  t.equal(sum('programme:prg_other'), 1);
  const pending = expectStatus(await sandbox.request('POST', '/v1/sandbox/accounts/acct_jane_usd/deposits', { depositInstructionId: 'di_jane_usd_ach', amount: '5.00' }, AS_JANE), 202);
  const id = /(txn_[a-z0-9]+)/.exec(pending.message)![1]!;
  t.equal((await getJson(sandbox, '/v1/transactions?status=PENDING&pageSize=1', PROGRAMME)).totalRecords, 1, 'the pending deposit counted');
  expectStatus(await sandbox.app.inject({ method: 'POST', url: `/_emulator/transactions/${id}/status`, payload: { status: 'FAILED' } }), 200);
  t.equal(drift(), 0, 'after a forced status');
  t.equal((await getJson(sandbox, '/v1/transactions?status=PENDING&pageSize=1', PROGRAMME)).totalRecords, 0, 'no longer pending');
  expectStatus(await sandbox.app.inject({ method: 'POST', url: '/_emulator/reset' }), 200);
  t.equal(drift(), 0, 'after reset');
  t.equal((await getJson(sandbox, '/v1/transactions', PROGRAMME)).totalRecords, 38, 'the fixtures\' programme total again');
});

t.test('exact totals for a time bound with a type or status filter, counted from the index range (2,400 rows share one instant); the counters equal COUNT(*)', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const deposit = (i: number) =>
    simulateDeposit(
      sandbox.ctx,
      { programmeId: 'prg_sandbox', userId: i % 4 === 0 ? 'usr_jane' : 'usr_acme' },
      i % 4 === 0 ? 'acct_jane_usd' : 'acct_acme_usd',
      { depositInstructionId: i % 4 === 0 ? 'di_jane_usd_ach' : 'di_acme_usd_ach', amount: '1.00' },
    );
  for (let i = 0; i < 2400; i += 1) deposit(i);
  await advance(sandbox, 1000); // all complete at 12:00:01.000
  for (let i = 0; i < 40; i += 1) deposit(i); // PENDING, created and updated at 12:00:01.000
  createWithdrawal(sandbox.ctx, { accountId: 'acct_jane_usd', userId: 'usr_jane', amountMinor: 100n });
  const ms = (iso: string) => Date.parse(iso);
  const instants = [
    '2025-12-31T23:59:59.999Z', '2026-01-15T00:00:00.000Z', '2026-03-01T11:59:59.999Z', '2026-03-01T12:00:00.000Z',
    '2026-03-01T12:00:00.001Z', '2026-03-01T12:00:01.000Z', '2026-03-01T12:00:01.001Z', '2026-03-01T13:00:00.000Z',
  ];
  for (const [label, as] of [['programme', PROGRAMME], ['acme', AS_ACME_MULTI], ['jane', AS_JANE]] as const) {
    const items = await listAll(sandbox, '', as);
    const total = async (query: string) => (await getJson(sandbox, `/v1/transactions?pageSize=1&${query}`, as)).totalRecords;
    for (const filter of ['type=DEPOSIT', 'type=WITHDRAWAL', 'status=COMPLETED', 'status=PENDING']) {
      const [column, value] = filter.split('=') as ['type' | 'status', string];
      const kept = items.filter((item) => item[column] === value);
      for (const at of instants) {
        t.equal(await total(`${filter}&minCreatedAt=${at}`), kept.filter((i) => ms(i.createdAt) >= ms(at)).length, `${label} ${filter} minCreatedAt=${at}`);
        t.equal(await total(`${filter}&minUpdatedAt=${at}`), kept.filter((i) => ms(i.updatedAt) >= ms(at)).length, `${label} ${filter} minUpdatedAt=${at}`);
        t.equal(await total(`${filter}&maxUpdatedAt=${at}`), kept.filter((i) => ms(i.updatedAt) <= ms(at)).length, `${label} ${filter} maxUpdatedAt=${at}`);
        t.equal(await total(`${filter}&minUpdatedAt=${at}&maxUpdatedAt=${at}`), kept.filter((i) => ms(i.updatedAt) === ms(at)).length, `${label} ${filter} pinned ${at}`);
      }
    }
    t.equal(await total('type=DEPOSIT&status=COMPLETED&minUpdatedAt=2026-03-01T12:00:01Z'), items.filter((i) => i.type === 'DEPOSIT' && i.status === 'COMPLETED' && i.updatedAt >= '2026-03-01T12:00:01.000Z').length, `${label}: both filters and a bound`);
  }
  // The counters that stay (migration 013 dropped the split ones) equal a count of their rows, in every scope.
  const db = sandbox.ctx.db;
  const counted = (sql: string) => db.prepare(sql).all();
  t.same(
    counted(`SELECT scope, type, status, n FROM transaction_counts WHERE n <> 0 ORDER BY 1, 2, 3`),
    counted(`SELECT scope, type, status, n FROM (
       SELECT 'user:' || user_id AS scope, type, status, COUNT(*) AS n FROM transactions GROUP BY 1, 2, 3
       UNION ALL SELECT 'programme:' || programme_id, type, status, COUNT(*) FROM transactions GROUP BY 1, 2, 3
       UNION ALL SELECT 'account:' || account_id, type, status, COUNT(*) FROM transaction_accounts GROUP BY 1, 2, 3) ORDER BY 1, 2, 3`),
    'transaction_counts equals COUNT(*) per scope, type and status',
  );
  t.same(
    counted(`SELECT scope, field, bucket, n FROM transaction_time_counts WHERE n <> 0 ORDER BY 1, 2, 3`),
    counted(`SELECT scope, field, bucket, n FROM (
       SELECT 'user:' || user_id AS scope, 'c' AS field, created_at_ms / 3600000 AS bucket, COUNT(*) AS n FROM transactions GROUP BY 1, 2, 3
       UNION ALL SELECT 'user:' || user_id, 'u', updated_at_ms / 3600000, COUNT(*) FROM transactions GROUP BY 1, 2, 3
       UNION ALL SELECT 'programme:' || programme_id, 'c', created_at_ms / 3600000, COUNT(*) FROM transactions GROUP BY 1, 2, 3
       UNION ALL SELECT 'programme:' || programme_id, 'u', updated_at_ms / 3600000, COUNT(*) FROM transactions GROUP BY 1, 2, 3
       UNION ALL SELECT 'account:' || account_id, 'c', created_at_ms / 3600000, COUNT(*) FROM transaction_accounts GROUP BY 1, 2, 3
       UNION ALL SELECT 'account:' || account_id, 'u', updated_at_ms / 3600000, COUNT(*) FROM transaction_accounts GROUP BY 1, 2, 3) ORDER BY 1, 2, 3`),
    'transaction_time_counts equals COUNT(*) per scope, field and hour',
  );
  t.equal(db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'transaction_kind_time_counts'").get(), undefined, 'the split hourly counters are gone (migration 013)');
});

t.test('a database made before programme counters existed is backfilled by the migration', async (t) => {
  const { default: Database } = await import('better-sqlite3');
  const { migrations } = await import('../../../src/db/migrations/index.js');
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const path = await import('node:path');
  const dir = mkdtempSync(path.join(tmpdir(), 'programme-migration-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'old.db');
  // A database at the migration before 007, with fixtures and live transactions written by that schema.
  const first = await buildTestApp({ db: file });
  await seedBothUsers(first);
  const expected = await listAll(first, '', AS_JANE);
  await first.close();
  const old = new Database(file);
  const programmeMigration = migrations.find((migration) => migration.name === 'programme-transactions')!;
  const added = old.prepare("SELECT type, name FROM sqlite_master WHERE type IN ('index', 'trigger') AND (name LIKE 'transactions_programme_%' OR name LIKE 'transactions_user_%_updated')").all() as Array<{ type: string; name: string }>;
  t.equal(added.length, 14, 'migration 007 made eight programme indexes, two user indexes and four triggers');
    for (const { type, name } of added) old.exec(`DROP ${type.toUpperCase()} ${name}`);
  old.exec("DELETE FROM transaction_counts WHERE scope LIKE 'programme:%'; DELETE FROM transaction_time_counts WHERE scope LIKE 'programme:%'");
  old.pragma(`user_version = ${programmeMigration.version - 1}`);
  old.close();

  const reopened = await buildTestApp({ db: file });
  t.teardown(reopened.close);
  const all = await listAll(reopened, '', PROGRAMME);
  t.equal((await getJson(reopened, '/v1/transactions?pageSize=1', PROGRAMME)).totalRecords, all.length, 'exact total from the backfilled counters');
  t.equal(all.length, 42);
  t.same(all.filter((item) => expected.some((mine: any) => mine.id === item.id)).length, expected.length, 'jane\'s rows among them');
  t.equal((await getJson(reopened, '/v1/transactions?pageSize=1&minUpdatedAt=2026-03-01T00:00:00Z', PROGRAMME)).totalRecords, all.filter((item) => item.updatedAt >= '2026-03-01T00:00:00.000Z').length);
  const counters = reopened.ctx.db
    .prepare("SELECT SUM(n) AS n FROM transaction_time_counts WHERE scope = 'programme:prg_sandbox' AND field = 'u'")
    .get() as { n: number };
  t.equal(counters.n, all.length, 'the programme hourly counters backfilled: one per row');
});
