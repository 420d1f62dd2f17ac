import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { buildTestApp } from '../helper.js';
import { launchChromium } from '../helpers/browser.js';

// docs/robustness.md#web-pages, in a real browser: a page of another origin that posts a form and a no-cors fetch to
// the control plane changes nothing, an image aimed at the listen relay re-points no webhook endpoint, and a page whose
// name was rebound to 127.0.0.1 gets no answer but the refusal.

t.test('a page of another origin cannot reset the sandbox or open sessions; a rebound name is refused', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  await sandbox.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (sandbox.app.server.address() as AddressInfo).port;
  const base = `http://127.0.0.1:${port}`;
  const moved = await fetch(`${base}/_emulator/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"advanceMs":60000}' });
  t.equal(moved.status, 200);
  const before = (await moved.json()) as { now: string };

  // the attacker's page: a form posted into a frame, and a fetch the browser sends without CORS
  const page = `<!doctype html><iframe name="sink"></iframe>
<img src="${base}/_emulator/webhooks/listen/stream?forwardTo=http://attacker.test/hooks" alt="">
<form id="f" method="POST" action="${base}/_emulator/reset" target="sink" enctype="text/plain"><input name="x" value="1"></form>
<script>
  fetch('${base}/_emulator/sessions', { method: 'POST', mode: 'no-cors' }).finally(() => { document.getElementById('f').submit(); });
</script>`;
  const attacker = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(page));
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => attacker.close(() => resolve())));
  const attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`;

  const browser = await launchChromium([`--host-resolver-rules=MAP rebound.attacker.test 127.0.0.1`]);
  t.teardown(() => browser.close());
  const tab = await browser.newPage();
  const seen = new Map<string, number>();
  tab.on('response', (response) => seen.set(`${response.request().method()} ${new URL(response.url()).pathname}`, response.status()));
  const reset = tab.waitForResponse((response) => response.url() === `${base}/_emulator/reset`);
  // the image's answer may never reach the page (Chromium blocks a JSON answer to an image), but its request ends
  const toRelay = (request: { url(): string }) => request.url().startsWith(`${base}/_emulator/webhooks/listen/stream`);
  const image = Promise.race([tab.waitForEvent('requestfinished', toRelay), tab.waitForEvent('requestfailed', toRelay)]);
  await tab.goto(attackerUrl);
  t.equal((await reset).status(), 403, 'the form reached the server and was refused');
  t.equal(seen.get('POST /_emulator/sessions'), 403, 'the fetch reached the server and was refused');
  const imageRequest = await image;
  const imageAnswer = await imageRequest.response();
  if (imageAnswer) t.equal(imageAnswer.status(), 403, 'the image aimed at the listen relay was refused');
  else t.pass(`the image's request ended (${imageRequest.failure()?.errorText ?? 'no answer shown to the page'})`);
  const endpoints = (await (await fetch(`${base}/_emulator/webhooks/endpoint`)).json()) as { data?: Array<{ url: string | null }> };
  t.notMatch(JSON.stringify(endpoints), /attacker\.test/, 'no webhook endpoint re-pointed');
  t.equal(((await (await fetch(`${base}/_emulator/clock`)).json()) as { now: string }).now, before.now, 'the clock was not reset');
  t.same(((await (await fetch(`${base}/_emulator/sessions`)).json()) as { data: unknown[] }).data, [], 'no session opened');

  // DNS rebinding: the attacker's name now resolves to this machine
  const rebound = await tab.goto(`http://rebound.attacker.test:${port}/_emulator/ui`);
  t.equal(rebound?.status(), 403, 'the dashboard is not served under the attacker\'s name');
  t.match(await tab.textContent('body'), /Host rebound\.attacker\.test is not a name this server answers to/);
  const api = await tab.evaluate(async () => (await fetch('/_emulator/overview')).status);
  t.equal(api, 403, 'nor is any route, read from that page as same-origin');
});
