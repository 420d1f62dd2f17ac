import t from 'tap';
import http from 'node:http';
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

t.test('an Expect header other than 100-continue is a 417 with the error body, and the request is not handled', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  await sandbox.app.listen({ port: 0, host: '127.0.0.1' });
  const address = sandbox.app.server.address() as { port: number };
  const payload = '{"advanceMs":60000}';
  const answer = await new Promise<{ status: number; type: string | undefined; body: string }>((resolve, reject) => {
    const request = http.request(
      { port: address.port, host: '127.0.0.1', method: 'POST', path: '/_emulator/clock', headers: { expect: '200-ok', 'content-type': 'application/json', 'content-length': payload.length } },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, type: response.headers['content-type'], body }));
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
  t.equal(answer.status, 417);
  t.match(answer.type, /^application\/json/);
  t.same(JSON.parse(answer.body), { message: 'The Expect header asks for "200-ok"; this server meets only 100-continue', errorCode: 'INVALID_REQUEST' });
  const clock = await sandbox.app.inject({ method: 'GET', url: '/_emulator/clock' });
  t.equal(clock.json().now, '2026-03-01T12:00:00.000Z', 'the clock did not move');
});
