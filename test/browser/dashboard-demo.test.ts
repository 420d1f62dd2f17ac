import t from 'tap';
import { startServer } from '../../src/server.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { START } from '../helper.js';
import { artifactPath, launchChromium } from '../helpers/browser.js';

// "Run a demo" in a real browser (docs/dashboard.md#run-a-demo): the button creates a fresh session and opens its
// dashboard, which runs every step with its caption to the end with no script error; the page then shows the
// deposit, the pacs.008 payout, the failed payout and the refund, the business's journey and the last story; the
// session holds those transactions over HTTP and the root sandbox is untouched. Then a scenario of the user's own, from
// a --scenarios folder, chosen in the top bar and played to its end (docs/sessions.md#playing-a-scenario).

const PACE_MS = 400;

async function getJson(url: string): Promise<any> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return response.json();
}

t.test('Run a demo: a fresh session, every caption, to the end, the expected transactions', async (t) => {
  const server = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent', clock: START } as never });
  t.teardown(() => server.close());
  const rootTransactions = (await getJson(`${server.url}/_emulator/transactions?limit=500`)).data.length;
  const DEMO_STEPS = (await getJson(`${server.url}/_emulator/demo`)).steps as Array<{ caption: string }>;
  t.equal(DEMO_STEPS.length, 17, 'the demo has its 17 steps');

  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(`console: ${message.text()}`);
  });
  // every caption the page shows, in order, recorded as it changes (the page's own text, not the server's)
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { captions: string[] }).captions = seen;
    new MutationObserver(() => {
      const text = document.querySelector('#demo-caption')?.textContent ?? '';
      if (text && seen[seen.length - 1] !== text) seen.push(text);
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });

  // pace from the root page's hash is carried to the demo (docs/dashboard.md#run-a-demo)
  await page.goto(`${server.url}/_emulator/ui#pace=${PACE_MS}`);
  await page.locator('#transactions li').first().waitFor();
  t.equal(await page.locator('#demo-start').textContent(), 'Run a demo', 'the button is in the top bar');
  await page.waitForFunction(() => document.querySelector('#demo-scenario option[value="demo"]') !== null);
  t.equal(await page.locator('#demo-scenario').inputValue(), 'demo', 'the guided demo is chosen');
  t.equal(await page.locator('#demo-panel').isHidden(), true, 'no demo panel before');
  await page.locator('#demo-start').click();
  await page.waitForURL(/\/_sessions\/ses_[0-9a-f]+\/_emulator\/ui#demo&pace=400$/, { timeout: 15_000 });
  const sessionBase = page.url().replace(/\/_emulator\/ui#.*$/, '');
  t.match(sessionBase, `${server.url}/_sessions/ses_`, 'the demo runs in a new session');
  t.equal(await page.locator('#demo-caption').getAttribute('aria-live'), 'polite', 'the caption is announced');
  t.equal(await page.locator('#session-picker').inputValue(), sessionBase.split('/').pop(), 'the picker shows the session');

  await page.waitForFunction(() => document.querySelector('#demo-panel')?.getAttribute('data-finished') === 'true', undefined, { timeout: 120_000 });
  const captions = (await page.evaluate(() => (window as unknown as { captions: string[] }).captions)) as string[];
  const stepCaptions = captions.filter((text) => text.startsWith('Step '));
  t.same(
    stepCaptions,
    DEMO_STEPS.map((step, index) => `Step ${index + 1} of ${DEMO_STEPS.length}: ${step.caption}`),
    'each step\'s caption appeared, in order',
  );
  t.match(await page.locator('#demo-caption').textContent(), /^Done: /, 'the last caption says it is done');
  t.equal(await page.locator('#demo-steps li[data-done="true"]').count(), DEMO_STEPS.length, 'every step is marked done');
  t.match(await page.locator('#demo-progress').textContent(), `all ${DEMO_STEPS.length} steps`);

  // the transactions, read from the page
  await page.waitForFunction(() => document.querySelectorAll('#transactions li[data-status="COMPLETED"] .txn-type').length > 0);
  await page.waitForFunction(() => [...document.querySelectorAll('#transactions li')].some((li) => li.querySelector('.txn-type')?.textContent === 'REFUND' && li.getAttribute('data-status') === 'COMPLETED'), undefined, { timeout: 10_000 });
  const rows = await page.locator('#transactions li').evaluateAll((items) =>
    items.map((item) => [item.querySelector('.txn-type')?.textContent, item.getAttribute('data-status'), item.querySelector('.txn-amount')?.textContent, item.querySelector('.txn-who')?.textContent ?? '']),
  );
  const demoRows = rows.filter((row) => row[3]!.startsWith('Northwind Traders Inc')).map((row) => row.slice(0, 3)).reverse();
  t.same(
    demoRows,
    [
      ['DEPOSIT', 'COMPLETED', '5,000.00 USD'],
      ['WITHDRAWAL', 'COMPLETED', '1,250.50 USD'],
      ['WITHDRAWAL', 'FAILED', '301.41 USD'],
      ['DEPOSIT', 'COMPLETED', '250.00 USD'],
      ['REFUND', 'COMPLETED', '250.00 USD'],
    ],
    'the page lists the deposit, the pacs.008 payout, the failed payout, the second deposit and its refund',
  );

  // the views followed the demo: the business's journey, its account's balance chart, the last transaction's story
  const demo = await getJson(`${sessionBase}/_emulator/demo`);
  await page.waitForFunction((id) => document.querySelector('#journey')?.getAttribute('data-user') === id && document.querySelectorAll('#journey li[data-kind="MONEY_OUT"][data-status="COMPLETED"]').length === 2, demo.userId, { timeout: 10_000 });
  const journey = await page.locator('#journey li').evaluateAll((items) => items.map((item) => `${(item as HTMLElement).dataset.kind} ${(item as HTMLElement).dataset.status}`));
  t.ok(journey.indexOf('ENROLLMENT ACTIVE') > journey.indexOf('INFORMATION_REQUEST PENDING_REVIEW') && journey.indexOf('INFORMATION_REQUEST PENDING_REVIEW') > 0, 'the journey shows the onboarding in order');
  t.ok(journey.includes('MONEY_OUT FAILED'), 'and the failed payout');
  t.equal(await page.locator('#balance-account').inputValue(), demo.accountId, 'the balance chart shows the business\'s USD account');
  t.equal(await page.locator('#balance-period').inputValue(), 'scenario', 'over the scenario\'s window');
  await page.waitForFunction(() => Number(document.querySelector('#balance-chart')?.getAttribute('data-points')) >= 5, undefined, { timeout: 10_000 });
  const lastTransaction = demo.steps.map((step: { transactionId: string | null }) => step.transactionId).filter(Boolean).pop();
  t.equal(await page.locator('#detail-heading').textContent(), `Transaction ${lastTransaction}`, 'the story of the last step\'s transaction (the refund)');
  await page.waitForFunction(() => document.querySelectorAll('#story .story-item[data-kind="status"]').length === 3, undefined, { timeout: 10_000 });
  t.same(await page.locator('#story .story-item[data-kind="status"]').evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.status)), ['PENDING', 'PROCESSING', 'COMPLETED']);
  await page.screenshot({ path: artifactPath('dashboard-demo-end.png'), fullPage: false });

  // over HTTP: the session holds the transactions; the root sandbox is untouched
  const transactions = (await getJson(`${sessionBase}/_emulator/transactions?limit=20&userId=${demo.userId}`)).data as Array<{ type: string; status: string; statusCode: string | null; debitRail: string | null; relatedTransactionId: string | null; id: string }>;
  t.same(
    transactions.map((txn) => [txn.type, txn.status, txn.statusCode]).reverse(),
    [
      ['DEPOSIT', 'COMPLETED', null],
      ['WITHDRAWAL', 'COMPLETED', null],
      ['WITHDRAWAL', 'FAILED', 'RAIL_REJECTED'],
      ['DEPOSIT', 'COMPLETED', null],
      ['REFUND', 'COMPLETED', null],
    ],
    'the session holds them',
  );
  const journal = (await getJson(`${sessionBase}/_emulator/requests?limit=100`)).data as Array<{ method: string; path: string }>;
  t.ok(journal.some((entry) => entry.path === '/v1/payout-origination/pacs008'), 'the pacs.008 went through the public API (journaled)');
  t.equal((await getJson(`${server.url}/_emulator/transactions?limit=500`)).data.length, rootTransactions, 'the root sandbox has no new transaction');
  t.match(await getJson(`${server.url}/_emulator/demo`), { completed: 0 }, 'and no demo progress');
  t.same(pageErrors, [], 'no script error, no console error');
});

const USER_SCENARIO = `name: my-payout
description: A funded business pays its supplier
seed: my-payout
clock: 2026-06-01T10:00:00Z
given:
  users:
    - as: acme
      type: BUSINESS
      name: Acme Widgets Ltd
      accounts:
        - { as: usd, currency: USD, balance: "2000.00" }
      beneficiaries:
        - as: supplier
          body:
            type: BUSINESS
            businessName: Globex Corp
            relationshipToUser: THIRD_PARTY
            instruments:
              - { type: BANK_ACCOUNT, currency: USD, country: US, accountHolderName: Globex Corp, accountNumber: "123456789012", routingNumber: "021000021" }
steps:
  - caption: Acme pays Globex 150.00 USD
    note: A JSON payout, Base64 in a text body
    request:
      method: POST
      path: /v1/payout-origination/json
      as: acme
      idempotencyKey: acme-0001
      base64: { entityId: "\${usd.id}", beneficiaryId: "\${supplier.id}", amount: "150.00", currency: USD, reference: INV-1 }
    capture: { payout: body }
    expect: { status: 202 }
  - caption: The rail takes it and completes it
    advance: 4s
  - caption: The balance is down by the payout and its fee
    request: { method: GET, path: "/v1/accounts/\${usd.id}", as: acme }
    expect: { status: 200, body: { balances.available: { lt: "1850.00" } } }
`;

t.test('a scenario of the user\'s own (--scenarios DIR) plays to its end in a fresh session; Previous shows an earlier step', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'dashboard-scenarios-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, 'my-payout.yaml'), USER_SCENARIO);
  writeFileSync(path.join(dir, 'broken.yaml'), 'name: broken\nsteps: []\n');
  const server = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent', clock: START, scenarios: dir } as never });
  t.teardown(() => server.close());
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(`console: ${message.text()}`);
  });
  await page.goto(`${server.url}/_emulator/ui#pace=${PACE_MS}`);
  await page.waitForFunction(() => document.querySelector('#demo-scenario option[value="my-payout"]') !== null);
  t.equal(await page.locator('#demo-scenario option[value="broken"]').isDisabled(), true, 'a broken file is listed, not playable');
  await page.locator('#demo-scenario').selectOption('my-payout');
  await page.locator('#demo-start').click();
  await page.waitForURL(/\/_sessions\/ses_[0-9a-f]+\/_emulator\/ui#demo&pace=400$/, { timeout: 15_000 });
  const sessionBase = page.url().replace(/\/_emulator\/ui#.*$/, '');
  await page.waitForFunction(() => document.querySelector('#demo-panel')?.getAttribute('data-finished') === 'true', undefined, { timeout: 60_000 });
  t.equal(await page.locator('#demo-title').textContent(), 'Scenario my-payout');
  t.equal(await page.locator('#demo-panel').getAttribute('data-failed'), 'false', 'every check passed');
  t.match(await page.locator('#demo-caption').textContent(), /^Done: all 3 steps of my-payout ran\./);
  t.equal(await page.locator('#demo-steps li[data-done="true"]').count(), 3);
  const play = await getJson(`${sessionBase}/_emulator/scenario`);
  t.match(play, { name: 'my-payout', source: 'folder', finished: true, failed: null, startedAt: '2026-06-01T10:00:00.000Z' });
  await page.waitForFunction((id) => (document.querySelector('#balance-account') as HTMLSelectElement | null)?.value === id, play.accountId, { timeout: 10_000 });
  t.equal(await page.locator('#balance-period').inputValue(), 'scenario', 'the chart shows the scenario\'s window');
  await page.waitForFunction(() => Number(document.querySelector('#balance-chart')?.getAttribute('data-points')) >= 3, undefined, { timeout: 10_000 });
  const firstPoint = await page.locator('#balance-table tbody tr').first().locator('time').getAttribute('datetime');
  t.ok(firstPoint && Date.parse(firstPoint) >= Date.parse('2026-06-01T10:00:00.000Z'), `from the scenario's start instant, not the fixtures' history (${firstPoint})`);

  const endedAt = (await getJson(`${sessionBase}/_emulator/clock`)).now;
  await page.locator('#demo-previous').click();
  t.match(await page.locator('#demo-caption').textContent(), /^Step 2 of 3 \(earlier\): The rail takes it and completes it/, 'Previous shows the earlier step');
  await page.locator('#demo-previous').click();
  t.match(await page.locator('#demo-caption').textContent(), /^Step 1 of 3 \(earlier\): Acme pays Globex/);
  t.equal(await page.locator('#demo-note').textContent(), 'A JSON payout, Base64 in a text body', 'with its note');
  t.equal(await page.locator('#demo-previous').isDisabled(), true, 'nothing before step 1');
  t.equal(await page.locator('#detail-heading').textContent(), `Transaction ${play.steps[0].transactionId}`, 'and its transaction\'s story');
  await page.locator('#demo-next').click();
  await page.locator('#demo-next').click();
  t.match(await page.locator('#demo-caption').textContent(), /^Done: /, 'Next comes forward again, to the end');
  t.equal((await getJson(`${sessionBase}/_emulator/clock`)).now, endedAt, 'looking back moved no time');
  await page.screenshot({ path: artifactPath('dashboard-scenario-end.png'), fullPage: false });
  t.same(pageErrors, [], 'no script error, no console error');
});
