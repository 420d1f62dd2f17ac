import t from 'tap';
import { buildTestApp, json } from '../helper.js';
import { launchChromium, artifactPath } from '../helpers/browser.js';

// The dashboard's Faults panel in a real browser (docs/dashboard.md#faults): add a rule with the form, see it
// listed with the top bar's indicator, watch it fire and get spent, find the fault in the journal panel, remove
// one rule and clear them all; a refused rule shows the error body.

t.test('dashboard: fault rules and webhook chaos added, shown, fired, removed and cleared', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const base = await sandbox.app.listen({ port: 0, host: '127.0.0.1' });
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) pageErrors.push(message.text());
  });
  await page.goto(`${base}/_emulator/ui`);
  await page.locator('#connection', { hasText: 'Live' }).waitFor();
  t.ok(await page.locator('#faults-indicator').isHidden(), 'no indicator without rules');

  await page.locator('#faults-link').click();
  t.ok(await page.locator('#faults-panel').evaluate((panel) => (panel as HTMLDetailsElement).open), 'the nav link opens the panel');
  t.ok(await page.locator('#faults-empty').isVisible(), 'says there are none');
  t.ok(await page.locator('#fault-latency-row').isHidden(), 'the latency field only for latency');

  // a 503 on GET /v1/accounts, once
  await page.locator('#fault-method').selectOption('GET');
  await page.locator('#fault-path').fill('/v1/accounts');
  await page.locator('#fault-effect').selectOption('status-503');
  await page.locator('#fault-times').fill('1');
  await page.locator('#fault-form button[type="submit"]').click();
  await page.locator('#fault-form [data-result]', { hasText: 'Added flt_1' }).waitFor();
  const item = page.locator('#fault-rules li[data-rule-id="flt_1"]');
  await item.waitFor();
  t.match(await item.textContent(), /GET \/v1\/accounts → answer 503/);
  t.match(await item.textContent(), /matched 0, fired 0, 1 left/);
  await page.locator('#faults-indicator', { hasText: '1 fault rule active' }).waitFor();
  t.same(json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/faults' })).data.map((rule: any) => [rule.id, rule.match, rule.effect, rule.times]), [
    ['flt_1', { method: 'GET', path: '/v1/accounts' }, { type: 'status', status: 503 }, 1],
  ], 'the form sent the rule it showed');

  // it fires on the next request, then is spent
  t.equal((await sandbox.request('GET', '/v1/accounts')).statusCode, 503);
  await page.locator('#fault-rules li[data-rule-id="flt_1"]', { hasText: 'spent' }).waitFor();
  t.match(await item.textContent(), /matched 1, fired 1, 0 left/);
  await page.locator('#faults-indicator').waitFor({ state: 'hidden' });

  // the journal panel marks the faulted request
  await page.locator('#journal-panel > summary').click();
  const faulted = page.locator('#journal li', { hasText: 'fault flt_1' });
  await faulted.waitFor();
  t.match(await faulted.textContent(), /\/v1\/accounts/);
  t.match(await faulted.textContent(), /503/);
  await page.locator('#journal-panel > summary').click();

  // a latency rule: the latency field appears and is sent
  await page.locator('#fault-effect').selectOption('latency');
  t.ok(await page.locator('#fault-latency-row').isVisible(), 'the latency field shows for latency');
  await page.locator('#fault-method').selectOption('');
  await page.locator('#fault-path').fill('/v1/transactions');
  await page.locator('#fault-latency').fill('25');
  await page.locator('#fault-times').fill('');
  await page.locator('#fault-form button[type="submit"]').click();
  await page.locator('#fault-rules li[data-rule-id="flt_2"]').waitFor();
  t.match(await page.locator('#fault-rules li[data-rule-id="flt_2"]').textContent(), /any method \/v1\/transactions → \+25 ms/);

  // a refused rule: the error body in the form's result
  await page.locator('#fault-effect').selectOption('ambiguous-502');
  await page.locator('#fault-probability').fill('2');
  await page.locator('#fault-form button[type="submit"]').click();
  const refused = page.locator('#fault-form [data-result]');
  await refused.locator('text=probability').first().waitFor();
  t.match(await refused.textContent(), /400/);
  t.match(await refused.textContent(), /probability must be at most 1/);
  await page.locator('#fault-probability').fill('');
  await page.locator('#fault-form button[type="submit"]').click();
  await page.locator('#fault-rules li[data-rule-id="flt_3"]').waitFor();
  t.match(await page.locator('#fault-rules li[data-rule-id="flt_3"]').textContent(), /commit, then answer 502/);
  await page.locator('#faults-indicator', { hasText: '2 fault rules active' }).waitFor();

  // remove one, then clear the rest
  await page.locator('button[aria-label="Remove fault rule flt_2"]').click();
  await page.locator('#fault-rules li[data-rule-id="flt_2"]').waitFor({ state: 'detached' });
  t.same(json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/faults' })).data.map((rule: any) => rule.id), ['flt_1', 'flt_3']);
  await page.screenshot({ path: artifactPath('dashboard-faults.png'), fullPage: true });
  await page.locator('#faults-clear').click();
  await page.locator('#faults-empty').waitFor({ state: 'visible' });
  t.equal(await page.locator('#fault-rules li').count(), 0);
  t.same(json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/faults' })).data, []);
  await page.locator('#faults-indicator').waitFor({ state: 'hidden' });

  // webhook chaos: turn kinds on, one off, then clear
  const chaosView = async () => json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/webhooks/chaos' }));
  t.ok(await page.locator('#chaos-empty').isVisible(), 'no chaos at first');
  t.ok(await page.locator('#chaos-delay-row').isHidden(), 'the delay field only for delay');
  await page.locator('#chaos-kind').selectOption('duplicate');
  await page.locator('#chaos-times').fill('2');
  await page.locator('#chaos-form button[type="submit"]').click();
  await page.locator('#chaos-kinds li[data-chaos-kind="duplicate"]').waitFor();
  t.match(await page.locator('#chaos-kinds li[data-chaos-kind="duplicate"]').textContent(), /Duplicate deliveries: next 2/);
  await page.locator('#faults-indicator', { hasText: 'webhook chaos on' }).waitFor();
  t.match((await chaosView()).duplicate, { times: 2, probability: null, fired: 0 });

  await page.locator('#chaos-kind').selectOption('delay');
  t.ok(await page.locator('#chaos-delay-row').isVisible());
  await page.locator('#chaos-delay').fill('40');
  await page.locator('#chaos-times').fill('');
  await page.locator('#chaos-probability').fill('0.5');
  await page.locator('#chaos-form button[type="submit"]').click();
  await page.locator('#chaos-kinds li[data-chaos-kind="delay"]').waitFor();
  const both = await chaosView();
  t.match(both, { duplicate: { times: 2 }, delay: { ms: 40, probability: 0.5 } }, 'turning a kind on keeps the others');

  await page.locator('#chaos-probability').fill('3');
  await page.locator('#chaos-kind').selectOption('badSignature');
  await page.locator('#chaos-form button[type="submit"]').click();
  await page.locator('#chaos-form [data-result]', { hasText: '400' }).waitFor();
  t.match(await page.locator('#chaos-form [data-result]').textContent(), /badSignature\.probability/);
  await page.locator('#chaos-probability').fill('');

  await page.locator('button[aria-label="Turn off Duplicate deliveries"]').click();
  await page.locator('#chaos-kinds li[data-chaos-kind="duplicate"]').waitFor({ state: 'detached' });
  const after = await chaosView();
  t.equal(after.duplicate, null, 'turned off');
  t.match(after.delay, { ms: 40, probability: 0.5 }, 'the other kind kept its setting');
  t.equal(after.seed, both.seed, 'and the seed');
  await page.locator('#chaos-clear').click();
  await page.locator('#chaos-empty').waitFor({ state: 'visible' });
  t.equal((await chaosView()).delay, null, 'cleared');

  // keyboard: the panel's controls are reachable and labelled
  for (const id of ['fault-method', 'fault-path', 'fault-effect', 'fault-times', 'fault-probability', 'chaos-kind', 'chaos-delay', 'chaos-times', 'chaos-probability']) {
    t.equal(await page.locator(`label[for="${id}"]`).count(), 1, `#${id} has a label`);
  }
  t.same(pageErrors, [], 'no script errors');
});
