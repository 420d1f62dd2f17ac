import t from 'tap';
import { advance, buildTestApp, json, START } from '../helper.js';
import { artifactPath, launchChromium } from '../helpers/browser.js';
import { businessEntries, createUser, startEnrollment, submit, writeEntries } from '../helpers/onboarding.js';

// The journey view in the page (docs/dashboard.md#the-journey-of-a-user): a fixture business onboarded over HTTP, then
// its steps read back from the page in order with their emulated times; a step's story opens from the keyboard; a
// new deposit appears live without a reload; the list fits a phone.

const at = (ms: number) => new Date(Date.parse(START) + ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');

t.test('the journey of an onboarded business, in order, live, from the keyboard, at laptop and phone widths', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const { userId, as } = await createUser(sandbox, 'BUSINESS', 'Fabrikam Goods Inc', 'fabrikam');
  const requestId = await startEnrollment(sandbox, as);
  t.equal((await writeEntries(sandbox, as, requestId, await businessEntries('Fabrikam Goods Inc'))).statusCode, 200);
  await advance(sandbox, 1_000);
  t.equal((await submit(sandbox, as, requestId)).statusCode, 200);
  await advance(sandbox, 5_000);
  await advance(sandbox, 2_000);
  const usd = (json(await sandbox.request('GET', '/v1/accounts', undefined, as)).data as Array<{ id: string; currency: string }>).find((account) => account.currency === 'USD')!;
  const instruction = json(await sandbox.request('GET', `/v1/accounts/${usd.id}`, undefined, as)).depositInstructions[0];
  const deposited = await sandbox.request('POST', `/v1/sandbox/accounts/${usd.id}/deposits`, { amount: '750.00', depositInstructionId: instruction.id, counterpartyName: 'Contoso Retail' }, as);
  const depositId = /txn_[A-Za-z0-9]+/.exec(json(deposited).message as string)![0];
  await advance(sandbox, 1_000);

  await sandbox.app.listen({ port: 0, host: '127.0.0.1' });
  const address = sandbox.app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
  page.on('response', (response) => {
    if (response.status() >= 400) pageErrors.push(`${response.status()} ${response.url()}`);
  });
  await page.goto(`${base}/_emulator/ui`);
  await page.locator(`#journey-user option[value="${userId}"]`).waitFor({ state: 'attached' });
  await page.selectOption('#journey-user', userId);
  await page.waitForFunction((id) => document.querySelector('#journey')?.getAttribute('data-user') === id, userId, { timeout: 10_000 });

  const read = () =>
    page.locator('#journey li').evaluateAll((items) =>
      items.map((item) => [(item as HTMLElement).dataset.kind, (item as HTMLElement).dataset.status, item.querySelector('time')?.textContent ?? '']),
    );
  const steps = await read();
  t.same(
    steps.filter(([kind]) => kind === 'USER_CREATED' || kind === 'INFORMATION_REQUEST' || kind === 'ENROLLMENT'),
    [
      ['USER_CREATED', '', at(0)],
      ['INFORMATION_REQUEST', 'DRAFT', at(0)],
      ['INFORMATION_REQUEST', 'PROCESSING_SUBMISSION', at(1_000)],
      ['INFORMATION_REQUEST', 'PENDING_REVIEW', at(1_000)],
      ['INFORMATION_REQUEST', 'COMPLETED', at(6_000)],
      ['ENROLLMENT', 'ACTIVE', at(6_000)],
    ],
    'the onboarding steps, in order, with the emulated time of each, as the page shows them',
  );
  t.same(steps.filter(([kind]) => kind === 'ACCOUNT_OPENED').map(([, , time]) => time), [at(6_000), at(6_000)], 'two accounts opened at the activation');
  t.ok(steps.filter(([kind]) => kind === 'DEPOSIT_INSTRUCTION').length >= 1, 'deposit instructions issued');
  t.same(steps.filter(([kind]) => kind === 'MONEY_IN'), [['MONEY_IN', 'PENDING', at(8_000)], ['MONEY_IN', 'COMPLETED', at(9_000)]], 'the deposit: received, then completed');
  const kinds = steps.map(([kind]) => kind);
  t.ok(kinds.lastIndexOf('ENROLLMENT') < kinds.indexOf('ACCOUNT_OPENED') && kinds.lastIndexOf('DEPOSIT_INSTRUCTION') < kinds.indexOf('MONEY_IN'), 'onboarding, accounts, then money');
  t.match(await page.locator('#journey-note').textContent(), /Fabrikam Goods Inc \(BUSINESS\), enrollment ACTIVE/);
  t.match(await page.locator('#journey li[data-kind="MONEY_IN"]').first().textContent(), /\+750\.00 USD/, 'the amount, signed');

  // keyboard: Tab from the user picker reaches a story link; Enter opens that transaction's story
  const story = page.locator(`#journey .journey-story[data-id="${depositId}"]`).first();
  await story.focus();
  t.equal(await page.evaluate(() => document.activeElement?.classList.contains('journey-story')), true, 'the story link takes the focus');
  await page.keyboard.press('Enter');
  await page.locator('#detail:not([hidden])').waitFor();
  t.equal(await page.locator('#detail-heading').textContent(), `Transaction ${depositId}`, 'Enter opens the transaction');
  await page.locator('#story .story-item[data-kind="status"]').nth(1).waitFor();
  t.same(await page.locator('#story .story-item[data-kind="status"]').evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.status)), ['PENDING', 'COMPLETED'], 'and its story');

  // live: a second deposit appears in the journey without a reload
  await page.evaluate(() => ((window as unknown as { stayed: boolean }).stayed = true));
  const second = await sandbox.request('POST', `/v1/sandbox/accounts/${usd.id}/deposits`, { amount: '20.00', depositInstructionId: instruction.id }, as);
  t.equal(second.statusCode, 202);
  await page.waitForFunction(() => document.querySelectorAll('#journey li[data-kind="MONEY_IN"]').length === 3, undefined, { timeout: 10_000 });
  await fetch(`${base}/_emulator/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advanceMs: 1000 }) });
  await page.waitForFunction(() => document.querySelectorAll('#journey li[data-kind="MONEY_IN"][data-status="COMPLETED"]').length === 2, undefined, { timeout: 10_000 });
  t.pass('the new deposit and its completion appear live');
  t.equal(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed), true, 'no reload');

  await page.locator('#journey-heading').scrollIntoViewIfNeeded();
  await page.locator('#journey-heading').locator('..').screenshot({ path: artifactPath('dashboard-journey.png') });
  await page.setViewportSize({ width: 390, height: 844 });
  // the layout settles for the new width when the page gets to it: wait for that (generous bound), not a fixed time
  await page
    .waitForFunction(() => document.querySelector('#journey')!.getBoundingClientRect().right <= 390 && document.documentElement.scrollWidth <= 390, undefined, { timeout: 15_000 })
    .catch(() => undefined);
  const overflow = await page.evaluate(() => {
    const list = document.querySelector('#journey')!.getBoundingClientRect();
    return { right: list.right, scrollWidth: document.documentElement.scrollWidth };
  });
  t.ok(overflow.right <= 390 && overflow.scrollWidth <= 390, `the list fits a 390 px screen (${JSON.stringify(overflow)})`);
  await page.locator('#journey-heading').locator('..').screenshot({ path: artifactPath('dashboard-journey-phone.png') });
  t.same(pageErrors, [], 'no script errors');
});
