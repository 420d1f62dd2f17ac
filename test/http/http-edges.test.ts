import t from 'tap';
import { buildTestApp, json } from '../helper.js';

// Answers produced before or around routing still carry the error body (docs/decisions.md#error-body-everywhere).
t.test('oversized request line gets the error body (431)', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  await sandbox.app.listen({ port: 0, host: '127.0.0.1' });
  const address = sandbox.app.server.address() as { port: number };
  const response = await fetch(`http://127.0.0.1:${address.port}/v1/accounts/${'x'.repeat(100_000)}`);
  t.equal(response.status, 431);
  const body = (await response.json()) as { message: string; errorCode: string };
  t.equal(body.errorCode, 'INVALID_REQUEST');
  t.match(body.message, /16 KiB/);
});

t.test('text/plain body on a JSON endpoint is 415, on the payout endpoint it is the payload', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const url = '/v1/accounts/acct_acme_usd/deposit-instructions';
  const payload = '{"name":"x","idempotencyKey":"ct-1"}';
  const response = await sandbox.app.inject({
    method: 'POST',
    url,
    payload,
    headers: { ...sandbox.sign('POST', url, payload), 'content-type': 'text/plain' },
  });
  t.equal(response.statusCode, 415);
  t.equal(json(response).errorCode, 'INVALID_REQUEST');
  t.match(json(response).message, /text\/plain/);

  const emptyText = await sandbox.app.inject({
    method: 'POST',
    url: '/v1/auth/token',
    headers: { ...sandbox.sign('POST', '/v1/auth/token', ''), 'content-type': 'text/plain' },
  });
  t.equal(emptyText.statusCode, 200, 'an empty text body is no body');
});
