import t from 'tap';
import { startServer } from '../../src/server.js';
import { signedFetcher } from '../../src/testkit/kit-parts.js';
import { CREDENTIALS, START } from '../helper.js';
import { artifactPath, launchChromium } from '../helpers/browser.js';

// The dashboard of a session in a real browser (docs/sessions.md#the-dashboard): the page talks to its own session,
// and the top bar's picker lists the root and every live session and opens the chosen one.

async function createSession(base: string): Promise<{ id: string; baseUrl: string }> {
  const response = await fetch(`${base}/_emulator/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  if (response.status !== 201) throw new Error(`session not created: ${response.status}`);
  return (await response.json()) as { id: string; baseUrl: string };
}

async function deposit(baseUrl: string, amount: string): Promise<void> {
  const response = await signedFetcher(baseUrl, CREDENTIALS)('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', {
    depositInstructionId: 'di_acme_usd_ach',
    amount,
    reference: `DASH-${amount}`,
  });
  if (response.status !== 202) throw new Error(`deposit answered ${response.status}: ${await response.text()}`);
}

async function clockOf(baseUrl: string): Promise<string> {
  return ((await (await fetch(`${baseUrl}/_emulator/clock`)).json()) as { now: string }).now;
}

t.test('a session\'s dashboard shows that session only, and the picker moves between sandboxes', async (t) => {
  const server = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent', clock: START } as never });
  t.teardown(() => server.close());
  const a = await createSession(server.url);
  const b = await createSession(server.url);
  await deposit(a.baseUrl, '31.00');

  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });

  const response = await page.goto(`${a.baseUrl}/_emulator/ui`);
  t.equal(response?.status(), 200, 'the session\'s dashboard is served');
  const amountOfA = page.locator('#transactions li', { hasText: '31.00' });
  await amountOfA.first().waitFor();
  t.ok(await amountOfA.first().isVisible(), 'A\'s deposit is listed on A\'s page');

  const picker = page.locator('#session-picker');
  await page.waitForFunction(() => document.querySelectorAll('#session-picker option').length === 3);
  t.same(
    await picker.locator('option').evaluateAll((options) => options.map((option) => (option as HTMLOptionElement).value)),
    ['', a.id, b.id],
    'the picker lists the root and both sessions',
  );
  t.equal(await picker.inputValue(), a.id, 'with this page\'s session chosen');
  await page.screenshot({ path: artifactPath('dashboard-session.png') });

  await Promise.all([page.waitForURL(`${b.baseUrl}/_emulator/ui`), picker.selectOption(b.id)]);
  t.pass('choosing B opens B\'s dashboard');
  await page.waitForSelector('#transactions li');
  t.equal(await page.locator('#transactions li', { hasText: '31.00' }).count(), 0, 'A\'s deposit is not on B\'s page');

  await page.click('button[data-advance-ms="60000"]');
  await page.waitForFunction(() => document.querySelector('#toolbar-result')?.textContent?.includes('now'));
  t.equal(await clockOf(b.baseUrl), new Date(Date.parse(START) + 60_000).toISOString(), 'the +1 min button moved B\'s clock');
  t.equal(await clockOf(a.baseUrl), START, 'and not A\'s');
  t.equal(await clockOf(server.url), START, 'nor the root\'s');

  await Promise.all([page.waitForURL(`${server.url}/_emulator/ui`), picker.selectOption('')]);
  t.pass('choosing the root opens the root\'s dashboard');
  await page.waitForSelector('#transactions li');
  t.equal(await page.locator('#transactions li', { hasText: '31.00' }).count(), 0, 'the root has no deposit of A');
  t.same(pageErrors, [], 'no script error on any page');
});
