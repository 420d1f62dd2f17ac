import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { PROJECT_ROOT } from '../helpers/server-process.js';
import { plainNode } from '../helpers/node-child.js';
import { signedHeaders } from '../../src/client/signing.js';
import { checkWebhookSignature } from '../../src/webhook-verify.js';

// clients/signing-vectors.json is what every kit's unit tests check their signer and verifier against
// (docs/clients.md#test-vectors); it is generated from the reference implementation by scripts/signing-vectors.mjs.

const SCRIPT = path.join(PROJECT_ROOT, 'scripts', 'signing-vectors.mjs');
const vectors = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'clients', 'signing-vectors.json'), 'utf8'));

t.test('clients/signing-vectors.json is what the reference implementation gives', async (t) => {
  const check = spawnSync(...plainNode([SCRIPT, '--check']), { cwd: PROJECT_ROOT, encoding: 'utf8' });
  t.equal(check.status, 0, `node scripts/signing-vectors.mjs --check: ${check.stdout}${check.stderr}`);
});

t.test('the request vectors hold for the TypeScript signer, both variants present', async (t) => {
  const variants = new Set<string>();
  for (const item of vectors.requests) {
    const body = item.bodyBase64 !== undefined ? Buffer.from(item.bodyBase64, 'base64') : item.body;
    t.same(signedHeaders({ key: item.key, method: item.method, target: item.target, body, nowMs: item.nowMs }), item.headers, item.name);
    variants.add(item.variant);
  }
  t.same([...variants].sort(), ['hmac', 'payout']);
});

t.test('the webhook vectors hold for the TypeScript verifier, every reason present', async (t) => {
  const reasons = new Set<string>();
  for (const item of vectors.webhooks) {
    const result = checkWebhookSignature({
      apiKey: item.headers['X-Service-Api-Key'],
      secret: item.secret,
      timestamp: item.headers['X-Service-Timestamp'],
      signature: item.headers['X-Service-Signature'],
      path: item.path,
      rawBody: item.body,
      nowMs: item.nowMs,
      toleranceMs: item.toleranceMs,
    });
    t.same(result, item.valid ? { valid: true } : { valid: false, reason: item.reason }, item.name);
    if (item.reason) reasons.add(item.reason);
  }
  t.same([...reasons].sort(), [...vectors.webhookReasons].sort());
});

t.test('the webhook vectors hold the shapes a parser gets wrong: long or zero-padded timestamps, a trailing line break', async (t) => {
  // docs/clients.md#receivers-one-rule-set, rule 6: a kit that parses the number, or whose `$` matches before a final
  // newline, fails these
  const byName = new Map<string, { headers: Record<string, string>; valid: boolean; reason: string | null }>(vectors.webhooks.map((item: { name: string }) => [item.name, item]));
  const padded = byName.get('timestamp-17-digits');
  t.match(padded, { valid: false, reason: 'MALFORMED_TIMESTAMP' });
  t.match(padded?.headers['X-Service-Timestamp'], /^0+[1-9][0-9]*$/, 'leading zeros');
  t.equal(padded?.headers['X-Service-Timestamp'].length, 17);
  const long = byName.get('timestamp-5000-digits');
  t.match(long, { valid: false, reason: 'MALFORMED_TIMESTAMP' });
  t.equal(long?.headers['X-Service-Timestamp'].length, 5000);
  const newline = byName.get('signature-trailing-newline');
  t.match(newline, { valid: false, reason: 'MALFORMED_SIGNATURE' });
  t.match(newline?.headers['X-Service-Signature'], /^[0-9a-f]{64}\n$/, '64 hex digits and a line feed');
});
