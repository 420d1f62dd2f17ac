import t from 'tap';
import { buildTestApp, CREDENTIALS, json } from '../helper.js';
import { backgroundServices } from '../../src/modules.js';
import { startReceiver } from '../helpers/receiver.js';
import { artifactPath, launchChromium } from '../helpers/browser.js';

// The dashboard in a real browser (docs/dashboard.md#browser-tests): a deposit simulated through the form appears,
// turns COMPLETED after the clock is advanced with the UI button, and shows its webhook deliveries; user input renders
// as text, never as markup.

const HOSTILE_NAME = '<script>alert(1)</script><img src=x onerror=alert(2)>';

t.test('dashboard: deposit flow, live status, deliveries, escaping', async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const sandbox = await buildTestApp({ config: { webhookUrl: receiver.url } });
  // buildTestApp starts no background services; the webhook dispatcher is one, as in `npm start`.
  const stoppers = backgroundServices.map((service) => service(sandbox.ctx));
  t.teardown(async () => {
    for (const stop of stoppers) await stop();
    await sandbox.close();
  });
  await sandbox.app.listen({ port: 0, host: '127.0.0.1' });
  const address = sandbox.app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

  // A user whose name is markup, enrolled so it is a listed user of the programme.
  const multi = { apiKey: CREDENTIALS.multi.apiKey, secret: CREDENTIALS.multi.secret };
  const created = await sandbox.request('POST', '/v1/auth/users', { externalId: 'hostile-1', type: 'PERSON', name: HOSTILE_NAME }, multi);
  t.equal(created.statusCode, 201, 'hostile user created');
  const hostileId = json(created).userId as string;
  const enrollment = await sandbox.request('GET', '/v1/enrollment', undefined, { ...multi, userId: hostileId });
  t.equal(enrollment.statusCode, 200, 'its enrollment started');

  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
  const dialogs: string[] = [];
  const pageErrors: string[] = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    // the browser logs every non-2xx fetch; those are expected here (a 400 and a 409 are provoked on purpose)
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) pageErrors.push(message.text());
  });

  const response = await page.goto(`${base}/_emulator/ui`);
  t.equal(response?.status(), 200, 'dashboard served');
  t.match(response?.headers()['content-security-policy'] ?? '', /script-src 'self'/, 'with a strict content security policy');

  // --- escaping: the hostile name is text
  const hostile = page.locator(`[data-user-id="${hostileId}"] .user-name`);
  await hostile.waitFor();
  t.equal(await hostile.textContent(), HOSTILE_NAME, 'the name renders verbatim as text');
  t.ok(await hostile.isVisible(), 'and is visible');
  t.equal(await page.locator('#programmes img, #programmes script').count(), 0, 'no element was created from it');
  t.equal(await page.locator('#transactions-filter option', { hasText: '<script>' }).count(), 1, 'the user filter lists it as text too');

  // --- a failing action shows the error body's message and validation errors
  await page.selectOption('#deposit-account', 'acct_acme_usd');
  await page.selectOption('#deposit-instruction', 'di_acme_usd_ach');
  await page.fill('#deposit-amount', '1.001');
  await page.click('#deposit-form button[type="submit"]');
  const depositResult = page.locator('#deposit-form [data-result]');
  await page.waitForSelector('#deposit-form .result-error');
  t.match(await depositResult.textContent(), /400/, 'the inner status is shown');
  t.match(await depositResult.textContent(), /decimals/, 'with the error message');
  t.equal(await depositResult.getAttribute('role'), 'alert', 'announced as an alert');

  // --- simulate a deposit through the form
  const balance = page.locator('[data-account-id="acct_acme_usd"] [data-balance="current"]');
  const balanceBefore = await balance.textContent();
  await page.fill('#deposit-amount', '250.00');
  await page.fill('#deposit-counterparty', 'Globex <b>Corp</b>');
  await page.fill('#deposit-reference', 'INV-<i>42</i>');
  await page.click('#deposit-form button[type="submit"]');
  await page.waitForSelector('#deposit-form .result-ok');
  t.match(await depositResult.textContent(), /Accepted \(202\)/, 'the deposit was accepted');

  const row = page.locator('#transactions li').filter({ hasText: '250.00 USD' }).first();
  await row.waitFor();
  t.equal(await row.getAttribute('data-status'), 'PENDING', 'it appears PENDING');
  t.match(await row.textContent(), /from Globex <b>Corp<\/b>/, 'the counterparty shows as text');
  t.match(await row.textContent(), /INV-<i>42<\/i>/, 'the reference shows as text');
  const transactionId = await row.getAttribute('data-id');
  t.match(transactionId, /^txn_/);

  // --- advance the emulated clock with the UI button: the chip turns COMPLETED without a reload
  await page.click('button[data-advance-ms="1000"]');
  await page.waitForSelector(`#transactions li[data-id="${transactionId}"][data-status="COMPLETED"]`);
  t.equal(await row.locator('.chip').textContent(), 'COMPLETED', 'the status chip updated live');
  await page.waitForFunction(
    ([selector, before]) => document.querySelector(selector)?.textContent !== before,
    ['[data-account-id="acct_acme_usd"] [data-balance="current"]', balanceBefore] as const,
  );
  t.not(await balance.textContent(), balanceBefore, 'the current balance moved');

  // --- details: full JSON and the webhook deliveries with their attempts
  await row.locator('button').click();
  const detail = page.locator('#detail');
  await detail.waitFor();
  t.match(await page.locator('#detail-heading').textContent(), transactionId!, 'the detail panel shows the transaction');
  await page.waitForFunction(() => (document.querySelector('#detail-json')?.textContent ?? '').includes('"COMPLETED"'));
  const detailJson = JSON.parse((await page.locator('#detail-json').textContent()) ?? '{}');
  t.equal(detailJson.transaction.id, transactionId, 'full JSON of the transaction');
  t.equal(detailJson.transaction.debitParty.payer.displayName, 'Globex <b>Corp</b>');
  t.equal(detailJson.userId, 'usr_acme');

  await page.waitForFunction(
    () => [...document.querySelectorAll('#deliveries .delivery .chip')].filter((chip) => chip.textContent === 'DELIVERED').length >= 2,
    undefined,
    { timeout: 15_000 },
  );
  const deliveries = page.locator('#deliveries .delivery');
  t.equal(await deliveries.count(), 2, 'two deliveries: created and status updated');
  t.match(await deliveries.nth(0).textContent(), /transaction_created/);
  t.match(await deliveries.nth(1).textContent(), /transaction_status_updated/);
  t.match(await deliveries.nth(0).locator('.attempts li').first().textContent(), /#1.*200/, 'each attempt with its response status');

  // --- replay a delivery from the panel
  await deliveries.nth(0).getByRole('button', { name: /Replay/ }).click();
  await page.waitForFunction(() => (document.querySelector('#deliveries .delivery .attempts')?.children.length ?? 0) >= 2, undefined, { timeout: 10_000 });
  t.ok(receiver.requests.length >= 3, 'the receiver got the replay');

  // --- forcing an illegal status shows the 409 message
  await page.selectOption('#status-value', 'FAILED');
  await page.click('#status-form button[type="submit"]');
  await page.waitForSelector('#status-form .result-error, #status-form .result-ok');
  t.match(await page.locator('#status-form [data-result]').textContent(), /40\d/, 'a final transaction cannot be forced: the error is shown');

  // --- a payout: preview an intent to a fixture beneficiary, commit it, watch it settle
  await page.locator('#payout-details > summary').click();
  await page.selectOption('#payout-account', 'acct_acme_usd');
  const beneficiaryOption = page.locator('#payout-destination option', { hasText: 'Globex' }).first();
  await beneficiaryOption.waitFor({ state: 'attached' });
  await page.selectOption('#payout-destination', (await beneficiaryOption.getAttribute('value'))!);
  await page.fill('#payout-amount', '75.00');
  await page.fill('#payout-memo', 'Invoice <script>1001</script>');
  await page.click('#payout-form button[type="submit"]');
  const payoutResult = page.locator('#payout-form [data-result]');
  await payoutResult.getByRole('button', { name: 'Commit' }).waitFor();
  t.match(await payoutResult.textContent(), /Preview.*CREATED.*75\.00 USD/s, 'the intent preview shows its amounts');
  await payoutResult.getByRole('button', { name: 'Commit' }).click();
  await payoutResult.getByRole('button', { name: 'Show its transaction' }).waitFor();
  t.match(await payoutResult.textContent(), /Committed/, 'committed');
  await payoutResult.getByRole('button', { name: 'Show its transaction' }).click();
  await page.waitForFunction(() => (document.querySelector('#detail-json')?.textContent ?? '').includes('"WITHDRAWAL"'));
  const payoutId = JSON.parse((await page.locator('#detail-json').textContent()) ?? '{}').transaction.id as string;
  await page.locator(`#transactions li[data-id="${payoutId}"]`).waitFor();
  await page.click('button[data-advance-ms="5000"]');
  await page.waitForSelector(`#transactions li[data-id="${payoutId}"][data-status="COMPLETED"]`);
  t.pass('the payout reached COMPLETED after advancing the clock 5 s');

  // --- the request journal panel lists the calls the dashboard made through act-as
  await page.locator('#journal-panel > summary').click();
  await page.waitForSelector('#journal li, #journal-note:not(:empty)');

  await page.screenshot({ path: artifactPath('dashboard.png'), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  // the layout settles for the new width when the page gets to it: wait for that (generous bound), not a fixed time
  await page
    .waitForFunction(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth, undefined, { timeout: 15_000 })
    .catch(() => undefined);
  const overflow = await page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const wide = [...document.querySelectorAll('body *')]
      .filter((element) => element.getBoundingClientRect().right > width + 1)
      .map((element) => `${element.tagName.toLowerCase()}${element.id ? `#${element.id}` : ''}.${[...element.classList].join('.')}`);
    return { by: document.documentElement.scrollWidth - width, wide: wide.slice(0, 5) };
  });
  t.ok(overflow.by <= 0, `no horizontal scrolling on a phone-sized screen (${JSON.stringify(overflow)})`);
  await page.screenshot({ path: artifactPath('dashboard-phone.png'), fullPage: true });

  t.same(dialogs, [], 'no dialog ever opened (no script ran from data)');
  t.same(pageErrors, [], 'no script errors in the page');
});
