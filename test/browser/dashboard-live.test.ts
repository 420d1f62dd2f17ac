import t from 'tap';
import { advance, buildTestApp, json } from '../helper.js';
import { backgroundServices } from '../../src/modules.js';
import { artifactPath, launchChromium } from '../helpers/browser.js';
import { startReceiver } from '../helpers/receiver.js';

// The dashboard follows changes as they happen (docs/dashboard.md#live-updates): the server pushes a notice over
// GET /_emulator/ui/events and the page refetches its feed; without EventSource it polls once a second. A clock move
// made outside the page (another client) shows without a reload, and the story of a transaction
// (docs/dashboard.md#the-story-of-a-transaction) grows as the clock moves: each status, the ledger entry and every
// webhook delivery attempt.

t.test('a clock move made elsewhere shows at once, pushed, without a reload; without EventSource the page polls', async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const sandbox = await buildTestApp({ config: { webhookUrl: receiver.url } });
  const stoppers = backgroundServices.map((service) => service(sandbox.ctx));
  t.teardown(async () => {
    for (const stop of stoppers) await stop();
    await sandbox.close();
  });
  await sandbox.app.listen({ port: 0, host: '127.0.0.1' });
  const address = sandbox.app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

  const browser = await launchChromium();
  t.teardown(() => browser.close());

  // --- pushed
  const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  let navigations = 0;
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) navigations += 1;
  });
  const loadStarted = performance.now();
  await page.goto(`${base}/_emulator/ui`);
  await page.locator('#connection', { hasText: 'Live (push)' }).waitFor();
  const loadMs = performance.now() - loadStarted;
  t.comment(`page load to a live, pushed feed: ${loadMs.toFixed(0)} ms`);
  const before = await page.locator('#clock-now').getAttribute('datetime');
  await page.evaluate(() => ((window as unknown as { stayed: boolean }).stayed = true));

  const feedRequests: number[] = [];
  page.on('request', (request) => {
    if (request.url().includes('/_emulator/ui/state')) feedRequests.push(performance.now());
  });
  const sent = performance.now();
  const { now } = await advance(sandbox, 15 * 60_000);
  t.not(now, before);
  // PUSHED_POLL_MS (src/emulator/dashboard/feed.js) is 15 s: a bound under it, generous for a loaded machine
  await page.waitForFunction((expected) => document.querySelector('#clock-now')?.getAttribute('datetime') === expected, now, { timeout: 12_000 });
  const shownMs = performance.now() - sent;
  t.comment(`clock move (POST /_emulator/clock from another client) to the page showing it: ${shownMs.toFixed(0)} ms`);
  // The poll is every 15 s while the stream is open: a redraw within 12 s came from the push.
  t.ok(shownMs < 12_000, `shown in ${shownMs.toFixed(0)} ms`);
  t.ok(feedRequests.length >= 1, 'the page refetched its feed on the notice');
  t.equal(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed), true, 'the page was not reloaded');
  t.equal(navigations, 1, 'one navigation only: the first load');

  // quiet while nothing changes: no polling once a second
  const quietFrom = feedRequests.length;
  await page.waitForTimeout(2500);
  t.ok(feedRequests.length - quietFrom <= 1, `at most one feed request in 2.5 quiet seconds (${feedRequests.length - quietFrom})`);

  // --- the story of a transaction, drawn live as the clock moves
  const deposit = await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '64.00', reference: 'STORY-1' });
  t.equal(deposit.statusCode, 202);
  const id = /txn_[A-Za-z0-9]+/.exec(json(deposit).message as string)![0];
  const row = page.locator(`#transactions li[data-id="${id}"]`);
  await row.waitFor();
  await row.locator('button').click();
  await page.locator('#story .story-item[data-kind="status"]').first().waitFor();
  t.same(await page.locator('#story .story-item[data-kind="status"]').evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.status)), ['PENDING'], 'the story starts PENDING');
  await advance(sandbox, 1000);
  await page.waitForFunction(() => document.querySelectorAll('#story .story-item[data-kind="status"]').length === 2, undefined, { timeout: 5000 });
  // the dispatcher sends both events; wait for their attempts to be drawn
  await page.waitForFunction(() => document.querySelectorAll('#story .story-item[data-kind="attempt"]').length >= 2, undefined, { timeout: 10_000 });
  const statuses = await page.locator('#story .story-item[data-kind="status"]').evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.status));
  t.same(statuses, ['PENDING', 'COMPLETED'], 'each status, in order, without a reload');
  t.match(await page.locator('#story .story-item[data-kind="status"]').last().textContent(), /\+1 s.*COMPLETED.*final/s, 'the completion 1 s after creation, final');
  t.equal(await page.locator('#story .story-item[data-kind="ledger"]').count(), 1, 'the credit entry');
  t.match(await page.locator('#story .story-item[data-kind="ledger"]').textContent(), /64\.00 USD/);
  const story = json(await sandbox.app.inject({ method: 'GET', url: `/_emulator/transactions/${id}/story` }));
  const serverAttempts = story.deliveries.reduce((sum: number, delivery: { attempts: unknown[] }) => sum + delivery.attempts.length, 0);
  t.equal(await page.locator('#story .story-item[data-kind="attempt"]').count(), serverAttempts, `every delivery attempt (${serverAttempts})`);
  t.match(await page.locator('#story .story-item[data-kind="attempt"]').first().textContent(), /Webhook #1.*transaction_created.*200.*ms/s, 'an attempt with its status and latency');
  // a replay is one more attempt on the same axis
  await page.locator('#deliveries .delivery').first().getByRole('button', { name: /Replay/ }).click();
  await page.waitForFunction((count) => document.querySelectorAll('#story .story-item[data-kind="attempt"]').length === count + 1, serverAttempts, { timeout: 10_000 });
  t.equal(await page.locator('#story .story-item[data-kind="attempt"]', { hasText: 'replay' }).count(), 1, 'the replay is marked');
  await page.locator('#detail').screenshot({ path: artifactPath('dashboard-story.png') });
  t.equal(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed), true, 'still the same page');

  // --- polling fallback: a browser without EventSource
  const polling = await browser.newPage({ viewport: { width: 1366, height: 900 } });
  polling.on('pageerror', (error) => pageErrors.push(error.message));
  await polling.addInitScript(() => {
    delete (window as unknown as { EventSource?: unknown }).EventSource;
  });
  await polling.goto(`${base}/_emulator/ui`);
  await polling.locator('#connection', { hasText: 'Live (polling)' }).waitFor();
  const { now: later } = await advance(sandbox, 60_000);
  await polling.waitForFunction((expected) => document.querySelector('#clock-now')?.getAttribute('datetime') === expected, later, { timeout: 5000 });
  t.pass('without EventSource the page polls and still follows the clock');

  t.same(pageErrors, [], 'no script errors');
});
