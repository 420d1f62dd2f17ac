import t from 'tap';
import { AS_JANE, AS_OTHER, buildTestApp, json } from '../../helper.js';
import { formatAmount, parseAmount } from '../../../src/lib/money.js';
import { ACCOUNT, HOLDER, PERIOD, STATEMENT_TEST_START, TRICKY_PAYER, deposit, payout, seedStatementScenario } from '../../helpers/statements.js';

// interface 2.8 / 4.3, docs/statements.md: the JSON statement, its reconciliation, and every validation rule.

const usd = (minor: bigint) => formatAmount(minor, 2);
const minor = (decimal: string) => (decimal.startsWith('-') ? -parseAmount(decimal.slice(1), 2) : parseAmount(decimal, 2));
const url = (query: string, account = ACCOUNT) => `/v1/accounts/${account}/statement${query ? `?${query}` : ''}`;
const periodQuery = `startDate=${PERIOD.startDate}&endDate=${PERIOD.endDate}`;

interface Entry {
  occurredAt: string;
  description: string;
  reference: string;
  direction: 'CREDIT' | 'DEBIT';
  amount: string;
  balanceBefore: string;
  balanceAfter: string;
  isFee: boolean;
  statusAsOfPeriodEnd: string;
}

t.test('JSON statement of a period with deposits, payouts, fees, a failed payout and an in-flight payout', async (t) => {
  const sandbox = await buildTestApp({ start: STATEMENT_TEST_START });
  t.teardown(sandbox.close);
  const scenario = seedStatementScenario(sandbox.ctx);
  const reference = (id: string) => sandbox.ctx.db.prepare('SELECT reference_number FROM transactions WHERE id = ?').pluck().get(id) as string;

  const response = await sandbox.request('GET', url(periodQuery));
  t.equal(response.statusCode, 200, response.body);
  const statement = json(response);

  t.match(statement, {
    accountId: ACCOUNT,
    accountDisplayName: 'Acme Operating (USD)',
    holderName: HOLDER,
    currency: 'USD',
    from: PERIOD.startDate,
    to: PERIOD.endDate,
    generatedAt: STATEMENT_TEST_START,
  }, 'account, holder, period and generation time');
  t.same(
    statement.depositInstructions.map((d: { rail: { type: string } }) => d.rail.type),
    ['US.USD.ACH', 'US.USD.FEDWIRE'],
    'the account deposit instructions (interface 2.2)',
  );
  t.ok(statement.depositInstructions[0].fields.some((f: { key: string }) => f.key === 'routingNumber'));

  const { expected } = scenario;
  t.equal(statement.openingBalance, usd(expected.openingMinor), 'opening counts every entry before the period');
  t.equal(statement.totalCredits, usd(expected.creditsMinor));
  t.equal(statement.totalDebits, usd(expected.debitsMinor));
  t.equal(statement.closingBalance, usd(expected.closingMinor));
  t.equal(
    minor(statement.openingBalance) + minor(statement.totalCredits) - minor(statement.totalDebits),
    minor(statement.closingBalance),
    'opening + credits - debits = closing',
  );

  // days: only days with activity, chronological, each closing is the next opening
  t.same(
    statement.days.map((d: { date: string }) => d.date),
    ['2026-03-02', '2026-03-05', '2026-03-10', '2026-03-20', '2026-03-31'],
  );
  t.equal(statement.days[0].openingBalance, statement.openingBalance);
  t.equal(statement.days.at(-1).closingBalance, statement.closingBalance);
  for (let i = 1; i < statement.days.length; i += 1) {
    t.equal(statement.days[i].openingBalance, statement.days[i - 1].closingBalance, `day ${statement.days[i].date} opens where the previous day closed`);
  }

  const entries: Entry[] = statement.days.flatMap((d: { entries: Entry[] }) => d.entries);
  t.equal(entries.length, expected.entries);
  let running = minor(statement.openingBalance);
  let credits = 0n;
  let debits = 0n;
  for (const [index, entry] of entries.entries()) {
    t.equal(minor(entry.balanceBefore), running, `entry ${index} starts from the previous balanceAfter`);
    const amount = minor(entry.amount);
    t.ok(amount >= 0n, 'amounts are positive');
    running += entry.direction === 'CREDIT' ? amount : -amount;
    if (entry.direction === 'CREDIT') credits += amount;
    else debits += amount;
    t.equal(minor(entry.balanceAfter), running, `entry ${index} balanceAfter = before +/- amount`);
    t.match(entry.occurredAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  }
  t.equal(credits, expected.creditsMinor);
  t.equal(debits, expected.debitsMinor);
  for (const day of statement.days) {
    t.equal(day.openingBalance, day.entries[0].balanceBefore);
    t.equal(day.closingBalance, day.entries.at(-1).balanceAfter);
    t.ok(day.entries.every((e: Entry) => e.occurredAt.startsWith(day.date)), 'entries sit on their UTC day');
  }

  // the failed payout: its hold (principal + fee) and the reversal of both
  const failed = entries.filter((e) => e.reference === reference(scenario.ids.failed));
  t.same(
    failed.map((e) => [e.direction, e.amount, e.isFee, e.statusAsOfPeriodEnd]),
    [
      ['DEBIT', '300.91', false, 'SETTLED'],
      ['DEBIT', '15.00', true, 'SETTLED'],
      ['CREDIT', '300.91', false, 'SETTLED'],
      ['CREDIT', '15.00', true, 'SETTLED'],
    ],
  );
  t.match(failed[2]!.description, /^Reversal: /);
  t.equal(failed[2]!.occurredAt, '2026-03-10T11:00:04.000Z', 'reversal posted when the payout failed');

  // fees are their own isFee entries
  const paid = entries.filter((e) => e.reference === reference(scenario.ids.paid));
  t.same(
    paid.map((e) => [e.direction, e.amount, e.isFee, e.description]),
    [
      ['DEBIT', '1200.00', false, 'Withdrawal to Initech, LLC'],
      ['DEBIT', '0.50', true, 'ACH processing fee'],
    ],
  );

  // status judged at the end of the period
  const status = (id: string) => [...new Set(entries.filter((e) => e.reference === reference(id)).map((e) => e.statusAsOfPeriodEnd))];
  t.same(status(scenario.ids.inFlight), ['IN_FLIGHT'], 'still processing');
  t.same(status(scenario.ids.lateSettling), ['IN_FLIGHT'], 'completed only after the period ended');
  t.same(status(scenario.ids.bigDeposit), ['SETTLED']);
  t.same(status(scenario.ids.paid), ['SETTLED']);

  // same instant: ties broken by entry id (the hold was posted before the deposit)
  const sameInstant = statement.days[3].entries;
  t.same(
    sameInstant.map((e: Entry) => [e.occurredAt, e.reference]),
    [
      ['2026-03-20T08:00:00.000Z', reference(scenario.ids.inFlight)],
      ['2026-03-20T08:00:00.000Z', reference(scenario.ids.inFlight)],
      ['2026-03-20T08:00:00.000Z', reference(scenario.ids.sameInstantDeposit)],
    ],
  );

  t.equal(entries.find((e) => e.reference === reference(scenario.ids.trickyDeposit))!.description, `Deposit from ${TRICKY_PAYER}`);
  t.notOk(entries.some((e) => e.reference === reference(scenario.ids.before) || e.reference === reference(scenario.ids.afterPeriod)), 'outside the period');

  // summary by type, fees and reversals on their own lines; totals are signed and add up
  t.same(statement.summary, [
    { label: 'Deposits', count: 3, total: '5260.00' },
    { label: 'Withdrawals', count: 4, total: '-1651.83' },
    { label: 'Fees', count: 4, total: '-16.50' },
    { label: 'Reversals of failed transactions', count: 2, total: '315.91' },
  ]);
  const summaryNet = statement.summary.reduce((sum: bigint, line: { total: string }) => sum + minor(line.total), 0n);
  t.equal(summaryNet, minor(statement.closingBalance) - minor(statement.openingBalance), 'summary totals add up to the movement');
  t.equal(
    statement.summary.reduce((sum: number, line: { count: number }) => sum + line.count, 0),
    entries.length,
  );

  // a period ending later judges the late payout settled; one ending today judges at generation time
  const longer = json(await sandbox.request('GET', url(`startDate=${PERIOD.startDate}&endDate=2026-04-01`)));
  const longerEntries: Entry[] = longer.days.flatMap((d: { entries: Entry[] }) => d.entries);
  t.same([...new Set(longerEntries.filter((e) => e.reference === reference(scenario.ids.lateSettling)).map((e) => e.statusAsOfPeriodEnd))], ['SETTLED']);
  t.same([...new Set(longerEntries.filter((e) => e.reference === reference(scenario.ids.inFlight)).map((e) => e.statusAsOfPeriodEnd))], ['IN_FLIGHT']);
  const today = json(await sandbox.request('GET', url('startDate=2026-04-01&endDate=2026-04-15')));
  t.equal(today.openingBalance, statement.closingBalance, 'the next period opens where this one closed');
  t.same(today.days.map((d: { date: string }) => d.date), ['2026-04-02']);
  t.equal(today.closingBalance, usd(expected.closingMinor + 7_700n));

  // a quiet period: no days, opening = closing, empty summary
  const quiet = json(await sandbox.request('GET', url('startDate=2026-03-11&endDate=2026-03-12')));
  t.same(quiet.days, []);
  t.same(quiet.summary, []);
  t.equal(quiet.openingBalance, quiet.closingBalance);
  t.equal(quiet.totalCredits, '0.00');

  // format is case-insensitive and defaults to json
  const upper = await sandbox.request('GET', url(`${periodQuery}&format=JSON`));
  t.equal(upper.statusCode, 200);
  t.same(json(upper), statement, 'deterministic on a frozen clock');
});

t.test('summary: money in, money out, fees, reversals; transfers split by direction', async (t) => {
  const sandbox = await buildTestApp({ start: STATEMENT_TEST_START });
  t.teardown(sandbox.close);
  const { ctx } = sandbox;
  // listed in an order unlike the summary's
  payout(ctx, '2026-04-03T09:00:00.000Z', 2_000n, 0n, { completeAt: '2026-04-03T09:00:04.000Z' }, 'Own EUR account', 'TRANSFER');
  payout(ctx, '2026-04-03T10:00:00.000Z', 1_000n, 50n, { failAt: '2026-04-03T10:00:04.000Z' });
  deposit(ctx, '2026-04-03T11:00:00.000Z', 500n, 'Globex', 0, ACCOUNT, 'REFUND');
  deposit(ctx, '2026-04-03T12:00:00.000Z', 7_000n, 'Own EUR account', 0, ACCOUNT, 'TRANSFER');
  payout(ctx, '2026-04-03T13:00:00.000Z', 3_000n, 50n, { completeAt: '2026-04-03T13:00:04.000Z' });
  deposit(ctx, '2026-04-03T14:00:00.000Z', 9_000n, 'Northwind');
  ctx.clock.freezeAt(Date.parse(STATEMENT_TEST_START));

  const statement = json(await sandbox.request('GET', url('startDate=2026-04-03&endDate=2026-04-03')));
  t.same(statement.summary, [
    { label: 'Deposits', count: 1, total: '90.00' },
    { label: 'Transfers in', count: 1, total: '70.00' },
    { label: 'Refunds', count: 1, total: '5.00' },
    { label: 'Withdrawals', count: 2, total: '-40.00' },
    { label: 'Transfers out', count: 1, total: '-20.00' },
    { label: 'Fees', count: 2, total: '-1.00' },
    { label: 'Reversals of failed transactions', count: 2, total: '10.50' },
  ]);
  t.equal(statement.totalCredits, '175.50');
  t.equal(statement.totalDebits, '61.00');
});

t.test('fixture history: every account of the default fixtures reconciles (whatever its history holds)', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const accounts = [
    ['acct_acme_usd', undefined, 2],
    ['acct_acme_eur', undefined, 2],
    ['acct_acme_usdc', undefined, 6],
    ['acct_acme_gbp', undefined, 2],
    ['acct_jane_usd', AS_JANE, 2],
  ] as const;
  for (const [account, as, precision] of accounts) {
    const response = await sandbox.request('GET', url('startDate=2026-01-01&endDate=2026-03-01', account), undefined, as);
    t.equal(response.statusCode, 200, account);
    const statement = json(response);
    const amount = (value: string) => (value.startsWith('-') ? -parseAmount(value.slice(1), precision) : parseAmount(value, precision));
    t.match(statement.openingBalance, new RegExp(`^-?\\d+\\.\\d{${precision}}$`), `${account}: ${precision} decimals`);
    let running = amount(statement.openingBalance);
    let previousDay = '';
    for (const day of statement.days) {
      t.ok(day.date > previousDay, `${account}: days ascending`);
      previousDay = day.date;
      t.equal(amount(day.openingBalance), running, `${account} ${day.date}: opens at the previous close`);
      for (const entry of day.entries as Entry[]) {
        t.equal(amount(entry.balanceBefore), running);
        running += entry.direction === 'CREDIT' ? amount(entry.amount) : -amount(entry.amount);
        t.equal(amount(entry.balanceAfter), running);
      }
      t.equal(amount(day.closingBalance), running);
    }
    t.equal(amount(statement.closingBalance), running, `${account}: closing is the running balance`);
    t.equal(amount(statement.openingBalance) + amount(statement.totalCredits) - amount(statement.totalDebits), running, `${account}: opening + credits - debits = closing`);
  }
  // the USDC account renders with its six decimals
  for (const format of ['csv', 'pdf']) {
    const link = await sandbox.request('GET', url(`startDate=2026-01-01&endDate=2026-03-01&format=${format}`, 'acct_acme_usdc'));
    t.equal(link.statusCode, 200, `USDC ${format}`);
  }
});

t.test('access: own accounts only, statements:read scope for bearer tokens', async (t) => {
  const sandbox = await buildTestApp({ start: STATEMENT_TEST_START });
  t.teardown(sandbox.close);

  const otherUser = await sandbox.request('GET', url(periodQuery), undefined, AS_JANE);
  t.equal(otherUser.statusCode, 403);
  t.equal(json(otherUser).errorCode, 'FORBIDDEN');
  t.ok(json(otherUser).message);

  const otherProgramme = await sandbox.request('GET', url(periodQuery), undefined, AS_OTHER);
  t.equal(otherProgramme.statusCode, 404);
  t.equal(json(otherProgramme).errorCode, 'NOT_FOUND');

  const unknown = await sandbox.request('GET', url(periodQuery, 'acct_nope'));
  t.equal(unknown.statusCode, 404);
  const subBalance = await sandbox.request('GET', url(periodQuery, 'acct_acme_usdc_ethereum'));
  t.equal(subBalance.statusCode, 404, 'sub-balances are not statement accounts');

  const jane = await sandbox.request('GET', url(periodQuery, 'acct_jane_usd'), undefined, AS_JANE);
  t.equal(jane.statusCode, 200);
  t.equal(json(jane).holderName, 'Jane Doe');

  const unauthenticated = await sandbox.app.inject({ method: 'GET', url: url(periodQuery) });
  t.equal(unauthenticated.statusCode, 401);
  t.equal(json(unauthenticated).errorCode, 'UNAUTHORIZED');

  const narrow = json(await sandbox.request('POST', '/v1/auth/token', { scopes: ['accounts:read'] }));
  const denied = await sandbox.request('GET', url(periodQuery), undefined, { bearer: narrow.accessToken });
  t.equal(denied.statusCode, 403, 'token without statements:read');
  t.equal(json(denied).errorCode, 'FORBIDDEN');
  const wide = json(await sandbox.request('POST', '/v1/auth/token', { scopes: ['statements:read'] }));
  const allowed = await sandbox.request('GET', url(periodQuery), undefined, { bearer: wide.accessToken });
  t.equal(allowed.statusCode, 200);
  t.equal(json(allowed).accountId, ACCOUNT);
});

t.test('validation rules (docs/decisions.md#statement-query), each naming its parameter', async (t) => {
  const sandbox = await buildTestApp({ start: STATEMENT_TEST_START });
  t.teardown(sandbox.close);

  async function rejects(query: string, expected: Array<[string, string]>, why: string) {
    const response = await sandbox.request('GET', url(query));
    t.equal(response.statusCode, 400, `${why}: 400`);
    const body = json(response);
    t.notOk('errorCode' in body, `${why}: no errorCode (interface 7.1)`);
    t.type(body.message, 'string');
    t.same(
      body.validationErrors.map((e: { type: string; fieldRef: string }) => [e.type, e.fieldRef]),
      expected,
      why,
    );
    for (const error of body.validationErrors) t.ok(error.message.length > 0);
  }

  await rejects('endDate=2026-03-31', [['MissingQueryParameter', 'startDate']], 'missing startDate');
  await rejects('startDate=2026-03-01', [['MissingQueryParameter', 'endDate']], 'missing endDate');
  await rejects('', [['MissingQueryParameter', 'startDate'], ['MissingQueryParameter', 'endDate']], 'both missing');
  await rejects('startDate=2026-3-1&endDate=2026-03-31', [['InvalidFormat', 'startDate']], 'startDate not YYYY-MM-DD');
  await rejects('startDate=2026-03-01&endDate=31.03.2026', [['InvalidFormat', 'endDate']], 'endDate not YYYY-MM-DD');
  await rejects('startDate=2026-02-30&endDate=2026-03-31', [['InvalidFormat', 'startDate']], 'no such day');
  await rejects('startDate=2026-03-01&endDate=2026-13-01', [['InvalidFormat', 'endDate']], 'no such month');
  await rejects('startDate=2026-03-01T00:00:00Z&endDate=2026-03-31', [['InvalidFormat', 'startDate']], 'an instant is not a date');
  await rejects('startDate=2025-12-31&endDate=2026-01-31', [['InvalidValue', 'startDate']], 'before 2026-01-01');
  await rejects('startDate=2026-03-10&endDate=2026-03-09', [['InvalidValue', 'endDate']], 'endDate before startDate');
  await rejects('startDate=2026-04-01&endDate=2026-04-16', [['InvalidValue', 'endDate']], 'endDate after today (emulated)');
  await rejects(`${periodQuery}&format=xml`, [['InvalidValue', 'format']], 'unknown format');
  await rejects(`${periodQuery}&format=`, [['InvalidValue', 'format']], 'empty format');
  await rejects(
    'startDate=2025-06-01&endDate=2026-03-31&format=docx',
    [
      ['InvalidValue', 'format'],
      ['InvalidValue', 'startDate'],
    ],
    'several problems are reported together',
  );
  await rejects('startDate=2026-03-01&startDate=2026-03-02&endDate=2026-03-31', [['InvalidFormat', 'startDate']], 'repeated parameter');

  const startOfHistory = await sandbox.request('GET', url('startDate=2026-01-01&endDate=2026-01-31'));
  t.equal(startOfHistory.statusCode, 200, 'the first day of history is accepted');
  const today = await sandbox.request('GET', url('startDate=2026-04-15&endDate=2026-04-15'));
  t.equal(today.statusCode, 200, 'endDate today is accepted');
  const futureBeyondToday = await sandbox.request('GET', url('startDate=2026-04-16&endDate=2026-04-17'));
  t.equal(futureBeyondToday.statusCode, 400, 'a period entirely in the future');

  // the error answer comes before any account lookup, and never as a 500
  const weird = await sandbox.request('GET', url('startDate=%E2%98%83&endDate=%00'));
  t.equal(weird.statusCode, 400);
});

t.test('span: at most 366 days', async (t) => {
  const sandbox = await buildTestApp({ start: '2027-06-01T00:00:00.000Z' });
  t.teardown(sandbox.close);
  const ok = await sandbox.request('GET', url('startDate=2026-01-01&endDate=2027-01-01'));
  t.equal(ok.statusCode, 200, '366 days (both ends included)');
  const tooLong = await sandbox.request('GET', url('startDate=2026-01-01&endDate=2027-01-02'));
  t.equal(tooLong.statusCode, 400, '367 days');
  t.same(json(tooLong).validationErrors.map((e: { type: string; fieldRef: string }) => [e.type, e.fieldRef]), [['InvalidValue', 'endDate']]);
  t.match(json(tooLong).message, /367 days/);
});
