import { connect } from 'node:net';
import t from 'tap';
import { signWebhook, startWebhookReceiver, type WebhookReceiver } from '../../src/client/index.js';

// The client's webhook receiver (src/client/receiver.ts, docs/clients.md#typescript) fed by hand: what it keeps,
// sets aside and refuses, and why (docs/webhooks.md). test/client-kit/scenarios.test.ts shows it with the emulator.

const KEY = { apiKey: 'wk_sandbox', secret: 'whsec_sandbox_secret' };
const event = (eventId: string) =>
  JSON.stringify({ transaction: { id: 'txn_1', status: 'COMPLETED' }, metadata: { eventId, eventType: 'transaction_status_updated', programId: 'prg_sandbox' } });

/** POST a delivery to the receiver, signed with `secret` at `timestamp` (default: now) unless `signature` is given. */
async function deliver(url: string, body: string, options: { apiKey?: string; secret?: string; timestamp?: number; signature?: string; method?: string } = {}) {
  const apiKey = options.apiKey ?? KEY.apiKey;
  const timestamp = String(options.timestamp ?? Date.now());
  const signature = options.signature ?? signWebhook({ apiKey, secret: options.secret ?? KEY.secret, timestamp, path: new URL(url).pathname, rawBody: body });
  const method = options.method ?? 'POST';
  const answer = await fetch(url, {
    method,
    headers: { 'X-Service-Api-Key': apiKey, 'X-Service-Timestamp': timestamp, 'X-Service-Signature': signature, 'Content-Type': 'application/json' },
    ...(method === 'POST' ? { body } : {}),
  });
  return answer.status;
}

t.test('keeps each event once, acknowledges duplicates, refuses what is not genuine', async (t) => {
  const receiver = await startWebhookReceiver({ path: '/hooks' });
  t.teardown(() => receiver.close());
  t.match(receiver.url, /^http:\/\/127\.0\.0\.1:\d+\/hooks$/);

  t.equal(await deliver(receiver.url, event('evt_0')), 401, 'no key given yet: refused');
  receiver.expect(KEY);
  t.equal(await deliver(receiver.url, event('evt_1')), 200, 'genuine');
  t.equal(await deliver(receiver.url, event('evt_1')), 200, 'the same event again: acknowledged (200, as every kit)');
  t.equal(await deliver(receiver.url, event('evt_2'), { secret: 'not-the-secret' }), 401, 'signed with another secret');
  t.equal(await deliver(receiver.url, event('evt_2'), { timestamp: Date.now() - 600_000 }), 401, 'ten minutes old');
  t.equal(await deliver(receiver.url, event('evt_2'), { apiKey: 'wk_other' }), 401, 'another key');
  t.equal(await deliver(receiver.url, 'not json'), 401, 'a body that is no event');
  t.equal(await deliver(receiver.url, event('evt_2'), { method: 'PUT' }), 401, 'not a POST');
  t.equal(await deliver(receiver.url, event('evt_2')), 200);

  t.same(
    receiver.events.map((kept) => kept.metadata.eventId),
    ['evt_1', 'evt_2'],
    'each event once, in arrival order',
  );
  t.same(receiver.duplicates.map((kept) => kept.metadata.eventId), ['evt_1']);
  t.same(
    receiver.rejected.map((rejected) => rejected.reason),
    ['UNKNOWN_KEY', 'SIGNATURE_MISMATCH', 'TIMESTAMP_OUT_OF_TOLERANCE', 'UNKNOWN_KEY', 'NOT_JSON', 'METHOD'],
  );
  t.equal(receiver.rejected[1]?.rawBody.toString('utf8'), event('evt_2'), 'the refused body as received');
  t.same(receiver.forTransaction('txn_1').length, 2);
  t.same(receiver.forTransaction('txn_2'), []);
});

t.test('a tolerance of its own', async (t) => {
  const receiver = await startWebhookReceiver({ key: KEY, toleranceMs: Infinity });
  t.teardown(() => receiver.close());
  t.match(receiver.url, /\/webhooks$/, 'the default path');
  t.equal(await deliver(receiver.url, event('evt_old'), { timestamp: Date.parse('2026-03-01T12:00:00.000Z') }), 200, 'any age accepted');
});

// docs/clients.md#receivers-one-rule-set, rule by rule, with requests written byte for byte on a socket (fetch would
// refuse to send most of them): each case is one a receiver that skipped the rule, or applied it out of order, gets
// wrong.

/** Write `head` (request line and header lines, no blank line) and `body` on a new connection; the status it answered (0: none). */
function raw(receiver: WebhookReceiver, head: string[], body: string | Buffer = ''): Promise<number> {
  const { port } = new URL(receiver.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(Buffer.concat(chunks).toString('latin1'));
      resolve(status ? Number(status[1]) : 0);
    });
    socket.end(Buffer.concat([Buffer.from(`${[...head, 'Host: 127.0.0.1', 'Connection: close'].join('\r\n')}\r\n\r\n`, 'latin1'), Buffer.from(body)]));
  });
}

/** The three headers of a delivery of `body` to /webhooks, signed now with KEY (or `secret`, `timestamp`). */
function signed(body: string, options: { apiKey?: string; secret?: string; timestamp?: string } = {}) {
  const apiKey = options.apiKey ?? KEY.apiKey;
  const timestamp = options.timestamp ?? String(Date.now());
  const signature = signWebhook({ apiKey, secret: options.secret ?? KEY.secret, timestamp, path: '/webhooks', rawBody: body });
  return { apiKey, timestamp, signature, lines: [`X-Service-Api-Key: ${apiKey}`, `X-Service-Timestamp: ${timestamp}`, `X-Service-Signature: ${signature}`] };
}
const POST = 'POST /webhooks HTTP/1.1';
const length = (body: string) => `Content-Length: ${Buffer.byteLength(body)}`;

t.test('rule by rule, over a raw socket: the first rule that applies gives the answer', async (t) => {
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const reasons = () => receiver.rejected.map((rejected) => rejected.reason);
  const genuine = event('evt_raw');
  const head = signed(genuine);

  // rule 4 before rule 5: no key given yet, and no headers at all, is a missing header
  t.equal(await raw(receiver, [POST, length(genuine)], genuine), 401, 'no headers, no key yet');
  // rule 5: no key given yet
  t.equal(await raw(receiver, [POST, ...head.lines, length(genuine)], genuine), 401, 'genuine, but no key given yet');
  t.same(reasons(), ['MISSING_HEADER', 'UNKNOWN_KEY']);
  receiver.expect(KEY);

  const cases: Array<[string, string[], string | Buffer, number, string | null]> = [
    // 1. a method other than POST, before anything else (even with no headers)
    ['GET, no headers', ['GET /webhooks HTTP/1.1'], '', 401, 'METHOD'],
    ['PUT, genuine headers and body', ['PUT /webhooks HTTP/1.1', ...head.lines, length(genuine)], genuine, 401, 'METHOD'],
    // 2. the body whole, whatever its framing; a Content-Length node:http cannot read is a 400
    ['Content-Length: abc', [POST, ...head.lines, 'Content-Length: abc'], genuine, 400, 'BAD_REQUEST'],
    ['Content-Length: -1', [POST, ...head.lines, 'Content-Length: -1'], genuine, 400, 'BAD_REQUEST'],
    [
      'genuine, chunked',
      [POST, ...head.lines, 'Transfer-Encoding: chunked'],
      `${Buffer.byteLength(genuine.slice(0, 10)).toString(16)}\r\n${genuine.slice(0, 10)}\r\n${Buffer.byteLength(genuine.slice(10)).toString(16)}\r\n${genuine.slice(10)}\r\n0\r\n\r\n`,
      200,
      null,
    ],
    // 3. spaces and tabs around a value are not part of it; a header sent twice is malformed
    [
      'spaces and tabs around the values',
      [POST, `X-Service-Api-Key: \t${head.apiKey}\t `, `X-Service-Timestamp:  ${head.timestamp} \t`, `X-Service-Signature:\t${head.signature}  `, length(genuine)],
      genuine,
      200,
      null,
    ],
    ['X-Service-Timestamp twice, the same value', [POST, ...head.lines, `X-Service-Timestamp: ${head.timestamp}`, length(genuine)], genuine, 401, 'MALFORMED_TIMESTAMP'],
    ['X-Service-Signature twice, the first genuine', [POST, ...head.lines, `X-Service-Signature: ${'0'.repeat(64)}`, length(genuine)], genuine, 401, 'MALFORMED_SIGNATURE'],
    ['X-Service-Api-Key twice, the same value', [POST, ...head.lines, `X-Service-Api-Key: ${KEY.apiKey}`, length(genuine)], genuine, 401, 'UNKNOWN_KEY'],
    // 4. missing or empty (after trimming)
    ['no headers at all', [POST, length(genuine)], genuine, 401, 'MISSING_HEADER'],
    ['an empty signature', [POST, head.lines[0]!, head.lines[1]!, 'X-Service-Signature: ', length(genuine)], genuine, 401, 'MISSING_HEADER'],
    ['a timestamp of spaces', [POST, head.lines[0]!, 'X-Service-Timestamp:  \t ', head.lines[2]!, length(genuine)], genuine, 401, 'MISSING_HEADER'],
    // 5. the key compared, even with a valid HMAC of another key
    ['another key, its own valid signature', [POST, ...signed(genuine, { apiKey: 'wk_other' }).lines, length(genuine)], genuine, 401, 'UNKNOWN_KEY'],
    // 6. as the test vectors: shape before number, tolerance, shape of the signature, the HMAC
    ['a 17-digit timestamp, zero-padded and signed as sent', [POST, ...signed(genuine, { timestamp: `0000${Date.now()}` }).lines, length(genuine)], genuine, 401, 'MALFORMED_TIMESTAMP'],
    ['ten minutes old', [POST, ...signed(genuine, { timestamp: String(Date.now() - 600_000) }).lines, length(genuine)], genuine, 401, 'TIMESTAMP_OUT_OF_TOLERANCE'],
    ['a sha256= prefix', [POST, head.lines[0]!, head.lines[1]!, `X-Service-Signature: sha256=${head.signature}`, length(genuine)], genuine, 401, 'MALFORMED_SIGNATURE'],
    ['another secret', [POST, ...signed(genuine, { secret: 'not-the-secret' }).lines, length(genuine)], genuine, 401, 'SIGNATURE_MISMATCH'],
    // 7. genuine, but not an event: an answer, never a dropped connection
    ...(['not json', '[1,2]', 'null', '{"metadata":null}', '{"metadata":{"eventId":42}}', '{"metadata":{"eventId":["evt_x"]}}', '{"metadata":{"eventId":""}}'].map(
      (body): [string, string[], string, number, string] => [`genuine, body ${body}`, [POST, ...signed(body).lines, length(body)], body, 401, 'NOT_JSON'],
    )),
    // 8. kept once, acknowledged again
    ['genuine', [POST, ...head.lines, length(genuine)], genuine, 200, null],
  ];
  for (const [name, lines, body, status, reason] of cases) {
    const before = receiver.rejected.length;
    t.equal(await raw(receiver, lines, body), status, `${name}: ${status}`);
    t.same(receiver.rejected.slice(before).map((rejected) => rejected.reason), reason ? [reason] : [], `${name}: ${reason ?? 'not refused'}`);
  }
  t.same(
    receiver.events.map((kept) => kept.metadata.eventId),
    ['evt_raw'],
    'the genuine delivery once (chunked first, then as it was sent with spaces around its headers)',
  );
  t.same(
    receiver.duplicates.map((kept) => kept.metadata.eventId),
    ['evt_raw', 'evt_raw'],
  );
});

t.test('rule 2: a connection that sends nothing is closed', async (t) => {
  const receiver = await startWebhookReceiver({ key: KEY, idleTimeoutMs: 100 });
  t.teardown(() => receiver.close());
  // half a request, then silence: closed by the receiver with no answer (the default is 10 s)
  const { port } = new URL(receiver.url);
  const answered = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.write(`${POST}\r\nHost: 127.0.0.1\r\n`);
  });
  t.equal(answered, '', 'closed without an answer');
  t.same(receiver.rejected, [], 'nothing to keep: no request was read');
});
