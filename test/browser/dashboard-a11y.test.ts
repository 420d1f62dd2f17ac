import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import t from 'tap';
import type { Page } from 'playwright-core';
import { advance, buildTestApp, json } from '../helper.js';
import { artifactPath, launchChromium } from '../helpers/browser.js';

// Accessibility (docs/dashboard.md#accessibility): axe-core, injected into the page by the test (never served), finds
// no serious or critical violation on the dashboard with every view showing (accounts, balance chart and its table,
// a transaction's story, a user's journey, the journal and faults panels), at laptop and phone widths; screenshots of both.

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  // evaluated through the DevTools protocol, so the page's Content Security Policy does not apply to the injection
  await page.evaluate(AXE_SOURCE);
  const violations = (await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((violation) => ({ id: violation.id, impact: violation.impact, help: violation.help, nodes: violation.nodes.slice(0, 5).map((node) => ({ target: node.target })) }));
  })) as AxeViolation[];
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
}

t.test('the dashboard has no serious accessibility violation, with every view open, at laptop and phone widths', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const deposit = await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '12.00' });
  const id = /txn_[A-Za-z0-9]+/.exec(json(deposit).message as string)![0];
  await advance(sandbox, 1000);
  await sandbox.app.listen({ port: 0, host: '127.0.0.1' });
  const address = sandbox.app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

  const browser = await launchChromium();
  t.teardown(() => browser.close());
  for (const [name, viewport] of [
    ['laptop', { width: 1366, height: 900 }],
    ['phone', { width: 390, height: 844 }],
  ] as const) {
    const page = await browser.newPage({ viewport });
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${base}/_emulator/ui`);
    await page.locator(`#transactions li[data-id="${id}"]`).waitFor();
    await page.waitForFunction(() => Number(document.querySelector('#balance-chart')?.getAttribute('data-points')) > 0, undefined, { timeout: 15_000 });
    // the journey of a user (docs/dashboard.md#the-journey-of-a-user): the fixture business's steps
    await page.locator('#journey li').first().waitFor();
    await page.locator(`#transactions li[data-id="${id}"] button`).click();
    await page.locator('#story .story-item').first().waitFor();
    await page.locator('#journal-panel > summary').click();
    await page.locator('#faults-panel > summary').click();
    await page.locator('#payout-details > summary').click();

    // keyboard: Tab reaches a control and its focus is visible (an outline or a box shadow)
    await page.locator('body').focus();
    await page.keyboard.press('Tab');
    const focus = await page.evaluate(() => {
      const element = document.activeElement as HTMLElement | null;
      if (!element || element === document.body) return null;
      const style = getComputedStyle(element);
      return { tag: element.tagName, outline: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0, shadow: style.boxShadow !== 'none' };
    });
    t.ok(focus && (focus.outline || focus.shadow), `${name}: Tab moves the focus to a control with a visible focus ring (${JSON.stringify(focus)})`);

    const violations = await seriousViolations(page);
    t.same(violations, [], `${name}: no serious or critical axe-core violation`);
    await page.screenshot({ path: artifactPath(`dashboard-a11y-${name}.png`), fullPage: true });
    t.same(pageErrors, [], `${name}: no script errors`);
    await page.close();
  }
});

t.test('the guided demo in progress has no serious accessibility violation, at laptop and phone widths', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  await sandbox.app.listen({ port: 0, host: '127.0.0.1' });
  const address = sandbox.app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

  // the demo plays in a session started from it (docs/dashboard.md#run-a-demo), as the page's Run button starts one
  const session = await sandbox.app.inject({ method: 'POST', url: '/_emulator/sessions', payload: { scenario: 'demo', label: 'demo' } });
  t.equal(session.statusCode, 201, session.body.slice(0, 300));
  const sessionBase = `${base}/_sessions/${JSON.parse(session.body).id}`;

  const browser = await launchChromium();
  t.teardown(() => browser.close());
  let completed = 0;
  for (const [name, viewport] of [
    ['laptop', { width: 1366, height: 900 }],
    ['phone', { width: 390, height: 844 }],
  ] as const) {
    const page = await browser.newPage({ viewport });
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    // one step per page, then a long pause
    await page.goto(`${sessionBase}/_emulator/ui#demo&pace=600000`);
    completed += 1;
    await page.waitForFunction((count) => document.querySelector('#demo-panel')?.getAttribute('data-completed') === String(count), completed, { timeout: 15_000 });
    await page.locator('#journey li').first().waitFor();
    await page.locator('#demo-panel details > summary').click();
    t.match(await page.locator('#demo-caption').textContent(), `Step ${completed} of `, `${name}: the caption of the step in progress`);
    const violations = await seriousViolations(page);
    t.same(violations, [], `${name}: no serious or critical axe-core violation with the demo running`);
    await page.screenshot({ path: artifactPath(`dashboard-demo-${name}.png`), fullPage: false });
    t.same(pageErrors, [], `${name}: no script errors`);
    await page.close();
  }
});
