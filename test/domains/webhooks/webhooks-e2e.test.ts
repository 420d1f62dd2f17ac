import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startServer, verifyWebhookSignature } from '../../../src/index.js';
import { signRequest } from '../../../src/lib/hmac.js';
import { webhookDispatcherOf } from '../../../src/domains/webhooks/webhooks.dispatcher.js';
import { CREDENTIALS, START } from '../../helper.js';
import { startReceiver } from '../../helpers/receiver.js';

// Webhooks end to end (docs/webhooks.md#pointing-it-at-your-app): a user points --webhook-url at their app, simulates a
// deposit, and receives two signed events that their own verification code accepts; the delivery log shows them. Over
// real HTTP, with the dispatcher started by the server as a background service.

async function call(base: string, method: string, target: string, body?: unknown) {
  const payload = body === undefined ? '' : JSON.stringify(body);
  const headers: Record<string, string> = {};
  if (target.startsWith('/v1/')) {
    const timestamp = String(Date.now());
    Object.assign(headers, {
      'x-service-api-key': CREDENTIALS.single.apiKey,
      'x-service-timestamp': timestamp,
      'x-service-program-id': CREDENTIALS.programmeId,
      'x-service-signature': signRequest({ apiKey: CREDENTIALS.single.apiKey, secret: CREDENTIALS.single.secret, timestamp, method, target, body: payload }),
    });
  }
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${base}${target}`, { method, headers, body: body === undefined ? undefined : payload });
  return { status: response.status, body: await response.json() };
}

t.test('--webhook-url, a simulated deposit, two verified events, and the delivery log', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sandbox-webhooks-e2e-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const db = path.join(dir, 'sandbox.db');
  const oldReceiver = await startReceiver({ path: '/old' });
  const receiver = await startReceiver({ path: '/hooks' });
  t.teardown(() => oldReceiver.close());
  t.teardown(() => receiver.close());

  // a first run seeds the database file with another URL; the flag of the next run wins
  const first = await startServer({ config: { port: 0, db, clock: START, logLevel: 'silent', webhookUrl: oldReceiver.url } });
  await first.close();

  const server = await startServer({ config: { port: 0, db, clock: START, logLevel: 'silent', webhookUrl: receiver.url } });
  t.teardown(() => server.close());
  const dispatcher = webhookDispatcherOf(server.ctx);
  t.ok(dispatcher, 'the server started the dispatcher');

  const deposit = await call(server.url, 'POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', {
    depositInstructionId: 'di_acme_usd_ach',
    amount: '125.00',
    reference: 'INV-42',
    counterpartyName: 'Globex Corp',
  });
  t.equal(deposit.status, 202, JSON.stringify(deposit.body));
  const clock = await call(server.url, 'POST', '/_emulator/clock', { advanceMs: 1000 });
  t.equal(clock.status, 200);
  await dispatcher!.drain();

  t.equal(oldReceiver.requests.length, 0, 'nothing went to the URL of the previous run');
  t.same(
    receiver.requests.map((r) => r.headers['x-service-event-type']),
    ['transaction_created', 'transaction_status_updated'],
  );
  for (const request of receiver.requests) {
    // what a user's receiver does: verify with the raw body and the webhook secret
    const ok = verifyWebhookSignature({
      apiKey: String(request.headers['x-service-api-key']),
      secret: 'whsec_sandbox_secret',
      timestamp: String(request.headers['x-service-timestamp']),
      signature: String(request.headers['x-service-signature']),
      path: request.url,
      rawBody: request.rawBody,
    });
    t.ok(ok, `${request.headers['x-service-event-type']} verifies`);
    t.match(request.body.transaction, { type: 'DEPOSIT', creditAmount: '125.00', creditCurrency: 'USD', debitReference: 'INV-42' });
  }
  t.equal(receiver.requests[1]!.body.transaction.status, 'COMPLETED');
  const transactionId = receiver.requests[0]!.body.transaction.id;
  t.equal(receiver.requests[1]!.body.transaction.id, transactionId);

  const log = await call(server.url, 'GET', `/_emulator/webhooks/deliveries?transactionId=${transactionId}&sortDirection=ASC`);
  t.equal(log.status, 200);
  t.same(
    log.body.data.map((d: { eventType: string; status: string; attempts: unknown[] }) => [d.eventType, d.status, d.attempts.length]),
    [
      ['transaction_created', 'DELIVERED', 1],
      ['transaction_status_updated', 'DELIVERED', 1],
    ],
  );
  const endpoint = await call(server.url, 'GET', '/_emulator/webhooks/endpoint?programId=prg_sandbox');
  t.equal(endpoint.body.endpoints[0].url, receiver.url);
});
