import t from 'tap';
import { advance, buildTestApp, json, START, type TestApp } from '../helper.js';
import { artifactPath, launchChromium } from '../helpers/browser.js';

// Balance over time (docs/dashboard.md#balance-over-time): GET /_emulator/accounts/{id}/balance-history over HTTP, and
// the chart (uPlot) with its table in the page, for a known history.

async function deposit(sandbox: TestApp, amount: string): Promise<void> {
  const response = await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount });
  if (response.statusCode !== 202) throw new Error(`deposit: ${response.statusCode} ${response.body}`);
}

const at = (offsetMs: number) => new Date(Date.parse(START) + offsetMs).toISOString();
const cents = (amount: string) => Math.round(Number(amount) * 100);

/** Two deposits: 100.00 settles at +1 s, 50.00 created at +1 s settles at +2 s. */
async function knownHistory(sandbox: TestApp) {
  await deposit(sandbox, '100.00');
  await advance(sandbox, 1000);
  await deposit(sandbox, '50.00');
  await advance(sandbox, 1000);
}

t.test('the history of a known period: a point at from, one per change, one at to', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const before = json(await sandbox.app.inject({ method: 'GET', url: `/_emulator/accounts/acct_acme_usd/balance-history?from=${at(-60_000)}&to=${START}` }));
  await knownHistory(sandbox);
  const response = await sandbox.app.inject({ method: 'GET', url: `/_emulator/accounts/acct_acme_usd/balance-history?from=${START}&to=${at(3_600_000)}` });
  t.equal(response.statusCode, 200);
  const history = json(response);
  t.match(history, { accountId: 'acct_acme_usd', currency: 'USD', from: START, to: at(3_600_000), truncated: false });
  t.same(history.points.map((point: { at: string }) => point.at), [START, at(1000), at(2000), at(3_600_000)], 'from, each change, to');
  const base = before.points[before.points.length - 1];
  t.same(history.points[0], { at: START, current: base.current, available: base.available }, 'the period starts where the balance was');
  t.equal(cents(history.points[1].current) - cents(base.current), 10_000, '+100.00 once the first deposit settled');
  t.equal(cents(history.points[2].current) - cents(base.current), 15_000, '+150.00 once the second settled');
  t.equal(history.points[3].current, history.points[2].current, 'unchanged to the end');
  const overview = json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/overview' }));
  const usd = overview.programmes[0].users.find((user: { id: string }) => user.id === 'usr_acme').accounts.find((account: { id: string }) => account.id === 'acct_acme_usd');
  t.same({ current: history.points[3].current, available: history.points[3].available }, usd.balances, 'the last point is the balance the overview shows');

  // default period: the 7 days up to the emulated now
  const defaults = json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/accounts/acct_acme_usd/balance-history' }));
  t.equal(defaults.to, at(2000));
  t.equal(defaults.from, new Date(Date.parse(at(2000)) - 7 * 86_400_000).toISOString());
  t.equal(defaults.points[defaults.points.length - 1].at, at(2000), 'a change at `to` is the last point (no duplicate)');
});

t.test('a hold shows as the gap: available moves at posting, current at settlement', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  // The seeded history holds a payout of acct_acme_usd on 2026-02-24 that settles the next day.
  const history = json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/accounts/acct_acme_usd/balance-history?from=2026-02-24T00:00:00Z&to=2026-02-26T00:00:00Z' }));
  const gaps = history.points.map((point: { at: string; current: string; available: string }) => ({ at: point.at, held: cents(point.current) - cents(point.available) }));
  const held = gaps.findIndex((gap: { held: number }) => gap.held > 0);
  t.ok(held > 0, `a point where available is below current (a hold): ${JSON.stringify(gaps)}`);
  const settled = gaps.findIndex((gap: { held: number }, index: number) => index > held && gap.held === 0);
  t.ok(settled > held, 'and a later point where the two meet again (the debit settled)');
  t.equal(gaps[0].held, 0, 'no hold at the start');
  t.ok(Date.parse(gaps[settled].at) > Date.parse(gaps[held].at), 'settlement after the hold');
});

t.test('refusals: unknown account 404, bad bounds 400 with the field, unknown parameters 400', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const missing = await sandbox.app.inject({ method: 'GET', url: '/_emulator/accounts/acct_nope/balance-history' });
  t.equal(missing.statusCode, 404);
  t.match(json(missing), { message: 'Account acct_nope not found', errorCode: 'NOT_FOUND' });
  const crossed = await sandbox.app.inject({ method: 'GET', url: `/_emulator/accounts/acct_acme_usd/balance-history?from=${START}&to=${at(-1000)}` });
  t.equal(crossed.statusCode, 400);
  t.match(json(crossed), { validationErrors: [{ fieldRef: 'from' }] });
  const long = await sandbox.app.inject({ method: 'GET', url: `/_emulator/accounts/acct_acme_usd/balance-history?from=2020-01-01T00:00:00Z&to=${START}` });
  t.equal(long.statusCode, 400, 'more than 400 days');
  const bad = await sandbox.app.inject({ method: 'GET', url: '/_emulator/accounts/acct_acme_usd/balance-history?from=yesterday' });
  t.equal(bad.statusCode, 400, 'not an instant');
  const unknown = await sandbox.app.inject({ method: 'GET', url: '/_emulator/accounts/acct_acme_usd/balance-history?period=day' });
  t.equal(unknown.statusCode, 400, 'unknown parameter');
});

t.test('uPlot is served from node_modules as published, with the page\'s headers', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const { readFileSync } = await import('node:fs');
  for (const [url, file, type] of [
    ['/_emulator/ui/vendor/uPlot.esm.js', 'node_modules/uplot/dist/uPlot.esm.js', /^text\/javascript/],
    ['/_emulator/ui/vendor/uPlot.min.css', 'node_modules/uplot/dist/uPlot.min.css', /^text\/css/],
  ] as const) {
    const response = await sandbox.app.inject({ method: 'GET', url });
    t.equal(response.statusCode, 200, url);
    t.match(response.headers['content-type'], type);
    t.match(response.headers['content-security-policy'], /script-src 'self'/);
    t.equal(response.headers['x-content-type-options'], 'nosniff');
    t.equal(response.body, readFileSync(file, 'utf8'), 'the file as published');
  }
  t.equal((await sandbox.app.inject({ method: 'GET', url: '/_emulator/ui/vendor/uPlot.iife.js' })).statusCode, 404, 'nothing else of the package');
});

t.test('in the page: the chart and its table have one point per change, and follow the clock live', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  await knownHistory(sandbox);
  await sandbox.app.listen({ port: 0, host: '127.0.0.1' });
  const address = sandbox.app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) pageErrors.push(message.text());
  });
  const cspViolations: string[] = [];
  await page.exposeFunction('noteViolation', (text: string) => cspViolations.push(text));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => (window as unknown as { noteViolation(text: string): void }).noteViolation(`${event.violatedDirective} ${event.blockedURI}`));
  });
  await page.goto(`${base}/_emulator/ui`);
  await page.selectOption('#balance-account', 'acct_acme_usd');
  await page.selectOption('#balance-period', 'day');
  // the last day up to now (+2 s): the start of the day, +1 s and +2 s (now); the seeded history is older
  await page.waitForFunction(() => document.querySelector('#balance-chart')?.getAttribute('data-points') === '3', undefined, { timeout: 15_000 });
  t.equal(await page.locator('#balance-chart canvas').count(), 1, 'uPlot drew a canvas (under the page\'s Content Security Policy)');
  t.equal(await page.locator('#balance-table tbody tr').count(), 3, 'the table under it has the same 3 points');
  t.equal(await page.locator('#balance-chart .u-legend').count(), 1, 'with its legend');
  const rows = await page.locator('#balance-table tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
  t.match(rows[1]![0], /12:00:01Z/, 'the first deposit settling');
  t.match(rows[2]![0], /12:00:02Z/, 'the second');
  t.match(await page.locator('#balance-chart').getAttribute('aria-label'), /3 points/, 'the chart has a text alternative');

  // live: a clock move adds the point at the new `to`, without a reload
  await fetch(`${base}/_emulator/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advanceMs: 60_000 }) });
  await page.waitForFunction(() => document.querySelector('#balance-chart')?.getAttribute('data-points') === '4', undefined, { timeout: 10_000 });
  t.equal(await page.locator('#balance-table tbody tr').count(), 4, 'a clock move adds the end point');

  // the week shows the seeded history too: more points
  await page.selectOption('#balance-period', 'week');
  await page.waitForFunction(() => Number(document.querySelector('#balance-chart')?.getAttribute('data-points')) > 4, undefined, { timeout: 10_000 });
  const weekPoints = Number(await page.locator('#balance-chart').getAttribute('data-points'));
  t.equal(await page.locator('#balance-table tbody tr').count(), weekPoints, `the week: ${weekPoints} points in the chart and the table`);

  await page.locator('#balance-heading').scrollIntoViewIfNeeded();
  await page.locator('#balance-heading').locator('..').screenshot({ path: artifactPath('dashboard-balances.png') });
  await page.setViewportSize({ width: 390, height: 844 });
  // the chart redraws for the new width when the page gets to it: wait for that (generous bound), not a fixed time
  await page
    .waitForFunction(() => (document.querySelector('#balance-chart canvas')?.getBoundingClientRect().right ?? Infinity) <= 390, undefined, { timeout: 15_000 })
    .catch(() => undefined);
  const chartWidth = await page.locator('#balance-chart canvas').evaluate((canvas) => canvas.getBoundingClientRect().right);
  t.ok(chartWidth <= 390, `the chart fits a phone-sized screen (right edge ${chartWidth})`);
  await page.locator('#balance-heading').locator('..').screenshot({ path: artifactPath('dashboard-balances-phone.png') });
  t.same(cspViolations, [], 'no Content Security Policy violation');
  t.same(pageErrors, [], 'no script errors');
});
