import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { build } from 'esbuild';
import { signRequest } from '../../src/lib/hmac.js';
import { startPrism } from '../helpers/prism.js';
import { ensureBuilt, PROJECT_ROOT, startServerProcess } from '../helpers/server-process.js';
import { plainNode } from '../helpers/node-child.js';

// Contract testing with a third-party tool (docs/openapi.md#gates): Prism (@stoplight/prism-cli) in proxy
// mode with --errors sits between a client and the built server, loaded with the document that server
// serves. It validates every request and every answer against the document and reports each violation
// (with --errors a violating request is refused with 422 and a violating answer replaced by an error).
// Through it run the typed client journey of test/client/journey.ts (transpiled here; it is type-checked
// by test/http/openapi-client.test.ts) and the main errors: zero violations.

const exec = promisify(execFile);
t.test('Prism proxy (validation, --errors) between the journey and the server: zero violations', async (t) => {
  await ensureBuilt();
  const server = await startServerProcess({ db: ':memory:' });
  t.teardown(() => server.stop());
  const work = mkdtempSync(path.join(tmpdir(), 'openapi-contract-'));
  const documentFile = path.join(work, 'openapi.json');
  writeFileSync(documentFile, await (await fetch(`${server.url}/openapi.json`)).text());

  const prism = await startPrism(t, ['proxy', documentFile, server.url, '--errors'], 'Prism proxies the server');
  const proxied = prism.url;
  const listening = prism.output().length;

  const journeyFile = path.join(work, 'journey.mjs');
  await build({ entryPoints: [path.join(PROJECT_ROOT, 'test', 'client', 'journey.ts')], outfile: journeyFile, bundle: true, platform: 'node', format: 'esm', logLevel: 'silent' });
  const journeyStarted = Date.now();
  const journey = await exec(...plainNode([journeyFile]), { cwd: PROJECT_ROOT, env: { ...process.env, SANDBOX_URL: proxied } }).catch(
    (error: { stdout: string; stderr: string; code: number }) => error,
  );
  t.equal(journey.stderr, '', `the journey through Prism ran without a surprise (${Date.now() - journeyStarted} ms)`);
  t.match(JSON.parse(journey.stdout.trim() || '{}'), { intent: 'COMMITTED', payout: { status: 'RECEIVED' } });

  // the main errors: valid requests the server refuses, each answer validated against its documented status
  const signed = (method: string, target: string, body = '', secret = 'sk_sandbox_single_secret') => {
    const timestamp = String(Date.now());
    const headers: Record<string, string> = {
      'x-service-api-key': 'pk_sandbox_single',
      'x-service-timestamp': timestamp,
      'x-service-program-id': 'prg_sandbox',
      'x-service-signature': signRequest({ apiKey: 'pk_sandbox_single', secret, timestamp, method, target, body }),
    };
    if (body) headers['content-type'] = 'application/json';
    return fetch(`${proxied}${target}`, { method, headers, body: body || undefined });
  };
  const errors: Array<[string, Promise<Response>, number]> = [
    ['unknown transaction', signed('GET', '/v1/transactions/txn_unknown'), 404],
    ['statement before 2026', signed('GET', '/v1/accounts/acct_acme_usd/statement?startDate=2025-12-01&endDate=2026-01-31'), 400],
    ['commit of an unknown intent', signed('POST', '/v1/transaction-intents/ti_unknown/commit', JSON.stringify({ idempotencyKey: 'contract-key-0001' })), 404],
    ['bad signature', signed('GET', '/v1/accounts', '', 'not-the-secret'), 401],
    ['unknown beneficiary', signed('GET', '/v1/beneficiaries/ben_unknown'), 404],
  ];
  for (const [label, pending, status] of errors) {
    const answer = await pending;
    t.equal(answer.status, status, `${label}: ${status} from the server, through Prism`);
    t.equal(answer.headers.get('sl-violations'), null, `${label}: no violation reported`);
    await answer.arrayBuffer();
  }

  const log = prism.output().slice(listening);
  const violations = log.split('\n').filter((line) => /✖|⚠|[Vv]iolation/.test(line));
  t.same(violations, [], 'Prism reported no request or response violation over the journey and the errors');
  t.ok((log.match(/Forwarding/g) ?? []).length >= 20, 'every call went through the proxy');

  // and the check has teeth: a request outside the document is stopped by Prism itself
  const invalid = await signed('GET', '/v1/transactions?pageSize=0');
  t.equal(invalid.status, 422, 'pageSize=0 violates the document: Prism refuses it (422) without forwarding');
  t.match(await invalid.text(), /pagesize must be >= 1/i, 'and names the parameter');
});
