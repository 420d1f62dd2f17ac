import t from 'tap';
import { startServer } from '../../src/server.js';
import { DEMO_STEPS } from '../../src/emulator/demo.script.js';
import { START } from '../helper.js';
import { artifactPath, launchChromium } from '../helpers/browser.js';

// "Run a demo" in a real browser (docs/dashboard.md#run-a-demo): the button creates a fresh session and opens its
// dashboard, which runs every step with its caption to the end with no script error; the page then shows the
// deposit, the pacs.008 payout, the failed payout and the refund, the business's journey and the last story; the
// session holds those transactions over HTTP and the root sandbox is untouched.

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
  await page.waitForFunction(() => Number(document.querySelector('#balance-chart')?.getAttribute('data-points')) >= 5, undefined, { timeout: 10_000 });
  t.equal(await page.locator('#detail-heading').textContent(), `Transaction ${demo.steps[DEMO_STEPS.length - 1].transactionId}`, 'the story of the last step\'s transaction (the refund)');
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
