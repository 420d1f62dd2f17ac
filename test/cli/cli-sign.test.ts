import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { signRequest } from '../../src/lib/hmac.js';
import { CLI, ensureBuilt, startServerProcess } from '../helpers/server-process.js';
import { plainNode } from '../helpers/node-child.js';

// `service-sandbox sign` from the built CLI (docs/payouts.md#sending-a-pacs008-with-curl): the payout variant for
// /v1/payout-origination/* targets, checked by sending the signed request to the built server; refusals of
// --user with a SINGLE_USER key and of an unknown --format, one line and exit code 2.

function sign(args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync(...plainNode([CLI, 'sign', ...args]), { encoding: 'utf8', env: { PATH: process.env.PATH, ...env }, timeout: 20_000 });
}

/** `-H Name:value` pairs of the curl format, as curl reads them. */
function curlHeaders(stdout: string): Record<string, string> {
  return Object.fromEntries([...stdout.matchAll(/-H ([\w-]+):(\S+)/g)].map((match) => [match[1]!, match[2]!]));
}

t.test('sign: refusals are one line with exit code 2', async (t) => {
  await ensureBuilt();
  const cases: Array<[string[], RegExp, NodeJS.ProcessEnv?]> = [
    [['POST', '/v1/payout-origination/pacs008', '--user', 'usr_acme'], /--user usr_acme: key pk_sandbox_single is a SINGLE_USER key/],
    [['GET', '/v1/accounts'], /SANDBOX_USER_ID usr_acme: key pk_sandbox_single is a SINGLE_USER key/, { SANDBOX_USER_ID: 'usr_acme' }],
    [['GET', '/v1/accounts', '--format', 'xml'], /--format "xml": accepts curl or json/],
    [['GET', '/v1/accounts', '--formats', 'json'], /unknown option --formats/],
    [['POST', '/v1/payout-origination/json', '--body', 'x', '--body-file', '/dev/null'], /--body and --body-file are exclusive/],
    [['POST', '/v1/payout-origination/json', '--body-file', '/nonexistent/payload.b64'], /--body-file \/nonexistent\/payload\.b64: ENOENT/],
    [['GET', '/v1/accounts', '--user'], /--user needs a value/],
    // a missing value does not swallow the next flag
    [['GET', '/v1/accounts', '--user', '--format', 'json'], /^service-sandbox sign: --user needs a value$/m],
    // docs/robustness.md#files-a-user-names: a device is refused, not read without end
    [['POST', '/v1/x', '--body-file', '/dev/zero'], /--body-file \/dev\/zero: it is a character device, not a regular file/],
    [['GET', '/v1/accounts', '--fixtures', '/dev/zero'], /--fixtures \/dev\/zero: cannot read it: it is a character device/],
    [['GET', '/v1/accounts'], /FIXTURES \/nonexistent\.json: cannot read it: ENOENT/, { FIXTURES: '/nonexistent.json' }],
    [['FOO', '/v1/x'], /method "FOO": accepts GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS/],
    [['GET', '/v1/x\r\nInjected: 1'], /target "\/v1\/x\\r\\nInjected: 1": a request target holds no spaces or control characters/],
    [['GET', '/v1/x', '--secret', ''], /--secret is empty: give a value, or leave the flag out/],
    [['GET', '/v1/x'], /SANDBOX_API_SECRET is set but empty: give it a value, or unset it/, { SANDBOX_API_SECRET: '' }],
    [['GET'], /^service-sandbox sign: service-sandbox sign METHOD/],
  ];
  for (const [args, expected, env] of cases) {
    const result = sign(args, env);
    t.equal(result.status, 2, `exit 2: ${args.join(' ')}`);
    t.match(result.stderr, expected, args.join(' '));
    t.equal(result.stderr.trim().split('\n').length, 1, 'one line');
    t.equal(result.stdout, '', 'nothing on stdout');
  }
  // a MULTI_USER key takes --user; the plain HMAC mode keeps its millisecond timestamp and bare hex
  const multi = sign(['GET', '/v1/accounts', '--key', 'pk_sandbox_multi', '--user', 'usr_acme', '--format', 'json']);
  t.equal(multi.status, 0, multi.stderr);
  const headers = JSON.parse(multi.stdout);
  t.match(headers, { 'X-Service-User-Id': 'usr_acme', 'X-Service-Timestamp': /^\d{13}$/, 'X-Service-Signature': /^[0-9a-f]{64}$/ });
  t.equal(headers['X-Service-Signature'], signRequest({ apiKey: 'pk_sandbox_multi', secret: 'sk_sandbox_multi_secret', timestamp: headers['X-Service-Timestamp'], method: 'GET', target: '/v1/accounts' }));
});

t.test('sign: a pacs.008 payout signed by the CLI is accepted by the built server, end to end', async (t) => {
  await ensureBuilt();
  const server = await startServerProcess({ db: ':memory:', clock: '2026-03-01T12:00:00.000Z' });
  t.teardown(() => server.stop());
  const directory = mkdtempSync(path.join(tmpdir(), 'sandbox-sign-'));
  t.teardown(() => rmSync(directory, { recursive: true, force: true }));

  // as the docs do it: base64 the XML (wrapped at 76 characters like `base64` writes it), sign the file
  const xml = readFileSync(new URL('../fixtures/pacs008/fedwire.xml', import.meta.url));
  const payloadFile = path.join(directory, 'payout.b64');
  writeFileSync(payloadFile, `${xml.toString('base64').replace(/(.{76})/g, '$1\n')}\n`);
  const target = '/v1/payout-origination/pacs008';
  const signed = sign(['POST', target, '--body-file', payloadFile]);
  t.equal(signed.status, 0, signed.stderr);
  const headers = curlHeaders(signed.stdout);
  t.match(headers, {
    'X-Service-Api-Key': 'pk_sandbox_single',
    'X-Service-Program-Id': 'prg_sandbox',
    'X-Service-Timestamp': /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/,
    'X-Service-Signature': /^sha256=[0-9a-f]{64}$/,
  }, 'the payout variant: RFC 3339 timestamp, sha256= prefix');
  t.notOk('X-Service-User-Id' in headers, 'no user header with a SINGLE_USER key');
  const body = readFileSync(payloadFile);
  t.equal(
    headers['X-Service-Signature'],
    `sha256=${signRequest({ apiKey: 'pk_sandbox_single', secret: 'sk_sandbox_single_secret', timestamp: headers['X-Service-Timestamp']!, method: 'POST', target, body })}`,
    'apiKey + timestamp + POST + target + the file bytes; the programme id is not signed',
  );

  const send = (extra: Record<string, string> = {}) =>
    fetch(`${server.url}${target}`, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'text/plain', 'Idempotency-Key': 'cli-sign-wire-0001', ...extra },
      body,
    });
  const response = await send();
  const accepted = (await response.json()) as { messageId: string; transactionId: string; status: string };
  t.equal(response.status, 202, JSON.stringify(accepted));
  t.match(accepted, { messageId: '20260301SBXFW0000018', transactionId: /^txn_/, status: 'RECEIVED' });

  // watch the transaction with a plain HMAC signature from the same CLI
  const read = sign(['GET', `/v1/transactions/${accepted.transactionId}`, '--format', 'json']);
  t.equal(read.status, 0, read.stderr);
  const fetched = await fetch(`${server.url}/v1/transactions/${accepted.transactionId}`, { headers: JSON.parse(read.stdout) });
  t.equal(fetched.status, 200);
  t.match(await fetched.json(), {
    id: accepted.transactionId,
    type: 'WITHDRAWAL',
    creditAmount: '25000.00',
    debitAmount: '25015.00',
    creditRail: 'US.USD.FEDWIRE',
    externalId: 'ACME-WIRE-0018',
    debitMemo: 'Q1 licence true-up',
  });

  // the signature covers the bytes: another programme header still verifies (not signed), a changed body does not
  t.equal((await send({ 'Idempotency-Key': 'cli-sign-wire-0002', 'X-Service-Program-Id': 'prg_unknown_programme' })).status, 403, 'programme header checked after the signature');
  const tampered = await fetch(`${server.url}${target}`, {
    method: 'POST',
    headers: { ...headers, 'Content-Type': 'text/plain', 'Idempotency-Key': 'cli-sign-wire-0003' },
    body: Buffer.concat([body, Buffer.from('\n')]),
  });
  t.equal(tampered.status, 401, 'one more byte breaks the signature');
});

// docs/sessions.md#addresses-and-signing: a session's payout target gets the payout variant too, signed over the path as sent.
t.test('sign: a payout target under a session prefix gets the payout variant', async (t) => {
  await ensureBuilt();
  const target = '/_sessions/ses_0123456789abcdef/v1/payout-origination/json';
  const result = sign(['POST', target, '--body', 'eyJhIjoxfQ==', '--format', 'json']);
  t.equal(result.status, 0, result.stderr);
  const headers = JSON.parse(result.stdout) as Record<string, string>;
  t.match(headers['X-Service-Timestamp'], /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/, 'an RFC 3339 timestamp');
  t.equal(
    headers['X-Service-Signature'],
    `sha256=${signRequest({ apiKey: 'pk_sandbox_single', secret: 'sk_sandbox_single_secret', timestamp: headers['X-Service-Timestamp']!, method: 'POST', target, body: 'eyJhIjoxfQ==' })}`,
    'sha256= over the prefixed target',
  );
});
