// A test runner next to the emulator in compose (docs/docker.md#compose): one session per test, webhooks to this
// container by its service name, settle instead of sleeps. Exit 0 when every check passed.
import { createServer } from 'node:http';
import { signRequest, verifyWebhookSignature } from '/app/dist/src/index.js';

const SANDBOX_URL = process.env.SANDBOX_URL ?? 'http://sandbox:4010';
const RECEIVER_URL = process.env.RECEIVER_URL ?? 'http://tests:9000/hooks';
const received = [];

// The receiver listens on every interface: the emulator reaches it as tests:9000, not as 127.0.0.1.
const receiver = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const rawBody = Buffer.concat(chunks);
    const ok = verifyWebhookSignature({
      apiKey: req.headers['x-service-api-key'],
      secret: 'whsec_sandbox_secret',
      timestamp: req.headers['x-service-timestamp'],
      signature: req.headers['x-service-signature'],
      path: new URL(req.url, 'http://x').pathname,
      rawBody,
    });
    received.push({ ok, body: JSON.parse(rawBody.toString('utf8')) });
    res.writeHead(ok ? 200 : 401).end();
  });
});
await new Promise((resolve) => receiver.listen(9000, '0.0.0.0', resolve));

// Compose's service_healthy condition starts this container once the emulator answers; a compose that ignores the
// condition (older podman-compose) gets the same gate here, for at most 30 s.
for (let tries = 0; ; tries += 1) {
  const healthy = await fetch(`${SANDBOX_URL}/_emulator/health`).then((response) => response.ok, () => false);
  if (healthy) break;
  if (tries >= 60) throw new Error(`${SANDBOX_URL} did not answer /_emulator/health within 30 s`);
  await new Promise((resolve) => setTimeout(resolve, 500));
}

async function call(url, method = 'GET', body) {
  const response = await fetch(url, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
  return { status: response.status, headers: response.headers, body: await response.json().catch(() => null) };
}

async function signed(baseUrl, method, path, body) {
  const url = new URL(baseUrl + path);
  const payload = body === undefined ? '' : JSON.stringify(body);
  const timestamp = String(Date.now());
  const headers = {
    'content-type': 'application/json',
    'x-service-api-key': 'pk_sandbox_single',
    'x-service-timestamp': timestamp,
    'x-service-program-id': 'prg_sandbox',
    'x-service-signature': signRequest({ apiKey: 'pk_sandbox_single', secret: 'sk_sandbox_single_secret', timestamp, method, target: url.pathname + url.search, body: payload }),
  };
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : payload });
  return { status: response.status, headers: response.headers, body: await response.json().catch(() => null) };
}

function check(condition, what) {
  console.log(`${condition ? 'ok' : 'not ok'} - ${what}`);
  if (!condition) process.exitCode = 1;
}

const session = (await call(`${SANDBOX_URL}/_emulator/sessions`, 'POST', { webhookUrl: RECEIVER_URL, label: 'compose' })).body;
check(session?.baseUrl?.startsWith(SANDBOX_URL), `a session at ${session?.baseUrl}`);
const deposit = await signed(session.baseUrl, 'POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '12.50' });
check(deposit.status === 202, 'a deposit accepted');
const id = deposit.headers.get('location')?.split('/').pop();
await call(`${session.baseUrl}/_emulator/clock`, 'POST', { advanceMs: 1000 });
const settled = (await call(`${session.baseUrl}/_emulator/settle`, 'POST', {})).body;
check(settled?.settled === true, 'settled: every webhook due was delivered');
check(received.length === 2 && received.every((hook) => hook.ok && hook.body.transaction.id === id), `two verified webhooks for ${id}, by service name`);
await call(`${SANDBOX_URL}/_emulator/sessions?label=compose`, 'DELETE');
receiver.close();
console.log(process.exitCode ? 'FAILED' : 'PASSED');
