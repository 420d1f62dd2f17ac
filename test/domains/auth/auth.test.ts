import { Writable } from 'node:stream';
import t, { type Test } from 'tap';
import type { FastifyPluginAsync, LightMyRequestResponse } from 'fastify';
import { authOf, SCOPES } from '../../../src/http/auth.js';
import { errorBodySchema } from '../../../src/core/errors.js';
import { signRequest } from '../../../src/lib/hmac.js';
import { AS_JANE, AS_OTHER, CREDENTIALS, START, advance, buildTestApp, json, type Identity } from '../../helper.js';

// Interface 5 and docs/authentication.md: HMAC headers, the payout variant, bearer tokens and the user context,
// each failure with the status and error code of docs/errors.md.

const ACME_ACCOUNTS = ['acct_acme_usd', 'acct_acme_eur', 'acct_acme_usdc', 'acct_acme_gbp'];
const MULTI: Identity = { apiKey: CREDENTIALS.multi.apiKey, secret: CREDENTIALS.multi.secret };

function expectError(t: Test, response: LightMyRequestResponse, status: number, errorCode: string | undefined, message?: RegExp): void {
  t.equal(response.statusCode, status, `status ${status}`);
  const body = json(response);
  t.ok(errorBodySchema.safeParse(body).success, 'interface 7.1 error body');
  t.equal(body.errorCode, errorCode, `errorCode ${errorCode ?? 'absent'}`);
  if (message) t.match(body.message, message);
}

function ids(response: LightMyRequestResponse): string[] {
  return json(response).data.map((item: { id: string }) => item.id);
}

t.test('HMAC headers (interface 5.2, docs/authentication.md)', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const inject = (url: string, headers: Record<string, string>, method: 'GET' | 'POST' = 'GET', payload?: string) =>
    sandbox.app.inject({ method, url, headers: payload === undefined ? headers : { ...headers, 'content-type': 'application/json' }, payload });

  t.test('a correct signature passes', async (t) => {
    const response = await inject('/v1/accounts', sandbox.sign('GET', '/v1/accounts'));
    t.equal(response.statusCode, 200);
    t.same(ids(response), ACME_ACCOUNTS, 'the SINGLE_USER key acts for its bound user');
  });

  t.test('an upper-case hex signature is accepted too', async (t) => {
    const headers = sandbox.sign('GET', '/v1/accounts');
    headers['x-service-signature'] = headers['x-service-signature']!.toUpperCase();
    t.equal((await inject('/v1/accounts', headers)).statusCode, 200);
  });

  t.test('each header missing gives 401 naming it', async (t) => {
    const cases: Array<[string, RegExp]> = [
      ['x-service-api-key', /X-Service-\*|Api-Key/],
      ['x-service-timestamp', /X-Service-Timestamp/],
      ['x-service-signature', /X-Service-Signature/],
      ['x-service-program-id', /X-Service-Program-Id/],
    ];
    for (const [name, message] of cases) {
      const headers = sandbox.sign('GET', '/v1/accounts');
      delete headers[name];
      expectError(t, await inject('/v1/accounts', headers), 401, 'UNAUTHORIZED', message);
    }
    expectError(t, await inject('/v1/accounts', {}), 401, 'UNAUTHORIZED', /Missing authentication/);
  });

  t.test('an unknown API key gives 401', async (t) => {
    const headers = sandbox.sign('GET', '/v1/accounts', '', { apiKey: 'pk_does_not_exist', secret: 'whatever-secret' });
    expectError(t, await inject('/v1/accounts', headers), 401, 'UNAUTHORIZED', /Unknown API key/);
  });

  t.test('a wrong signature gives 401', async (t) => {
    for (const bad of ['0'.repeat(64), 'not-hex-at-all', '', 'abc']) {
      const headers = sandbox.sign('GET', '/v1/accounts');
      headers['x-service-signature'] = bad;
      expectError(t, await inject('/v1/accounts', headers), 401, 'UNAUTHORIZED');
    }
    const wrongSecret = sandbox.sign('GET', '/v1/accounts', '', { secret: CREDENTIALS.multi.secret });
    expectError(t, await inject('/v1/accounts', wrongSecret), 401, 'UNAUTHORIZED', /Signature mismatch/);
  });

  t.test('a body changed by one byte gives 401', async (t) => {
    const signed = JSON.stringify({ scopes: ['accounts:read'] });
    const headers = sandbox.sign('POST', '/v1/auth/token', signed);
    t.equal((await inject('/v1/auth/token', headers, 'POST', signed)).statusCode, 200, 'the signed body passes');
    const changed = signed.replace('read', 'reae');
    t.equal(changed.length, signed.length);
    expectError(t, await inject('/v1/auth/token', sandbox.sign('POST', '/v1/auth/token', signed), 'POST', changed), 401, 'UNAUTHORIZED', /Signature mismatch/);
    const spaced = `${signed} `;
    expectError(t, await inject('/v1/auth/token', sandbox.sign('POST', '/v1/auth/token', signed), 'POST', spaced), 401, 'UNAUTHORIZED');
  });

  t.test('a query string changed gives 401', async (t) => {
    const headers = sandbox.sign('GET', '/v1/accounts?pageSize=2');
    t.equal((await inject('/v1/accounts?pageSize=2', headers)).statusCode, 200);
    expectError(t, await inject('/v1/accounts?pageSize=3', sandbox.sign('GET', '/v1/accounts?pageSize=2')), 401, 'UNAUTHORIZED');
    expectError(t, await inject('/v1/accounts?pageSize=2&pageIndex=0', sandbox.sign('GET', '/v1/accounts?pageSize=2')), 401, 'UNAUTHORIZED');
    expectError(t, await inject('/v1/accounts', sandbox.sign('GET', '/v1/accounts?pageSize=2')), 401, 'UNAUTHORIZED');
  });

  t.test('the method is part of the canonical string', async (t) => {
    const headers = sandbox.sign('GET', '/v1/auth/token', '{}');
    expectError(t, await inject('/v1/auth/token', headers, 'POST', '{}'), 401, 'UNAUTHORIZED');
  });

  t.test('the timestamp must be within 60 s of the real clock', async (t) => {
    const at = (offsetMs: number) => ({ timestamp: String(Date.now() + offsetMs) });
    expectError(t, await inject('/v1/accounts', sandbox.sign('GET', '/v1/accounts', '', at(-61_000))), 401, 'UNAUTHORIZED', /60 seconds/);
    expectError(t, await inject('/v1/accounts', sandbox.sign('GET', '/v1/accounts', '', at(61_000))), 401, 'UNAUTHORIZED', /60 seconds/);
    t.equal((await inject('/v1/accounts', sandbox.sign('GET', '/v1/accounts', '', at(-55_000)))).statusCode, 200, '55 s old passes');
    for (const timestamp of ['2026-03-01T12:00:00Z', '12.5', '-1', '']) {
      expectError(t, await inject('/v1/accounts', sandbox.sign('GET', '/v1/accounts', '', { timestamp })), 401, 'UNAUTHORIZED');
    }
  });

  t.test('the skew is measured on the real clock, not the emulated one', async (t) => {
    await advance(sandbox, 24 * 3600 * 1000);
    t.equal((await inject('/v1/accounts', sandbox.sign('GET', '/v1/accounts'))).statusCode, 200);
  });

  t.test('a programme header of another programme gives 403', async (t) => {
    const headers = sandbox.sign('GET', '/v1/accounts', '', { programmeId: 'prg_other' });
    expectError(t, await inject('/v1/accounts', headers), 403, 'FORBIDDEN', /X-Service-Program-Id/);
    const unknown = sandbox.sign('GET', '/v1/accounts', '', { programmeId: 'prg_nope' });
    expectError(t, await inject('/v1/accounts', unknown), 403, 'FORBIDDEN');
  });
});

t.test('user context: SINGLE_USER and MULTI_USER header rules (docs/decisions.md#user-context)', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);

  expectError(
    t,
    await sandbox.request('GET', '/v1/accounts', undefined, { userId: 'usr_acme' }),
    400,
    'USER_ID_HEADER_NOT_ALLOWED',
    /SINGLE_USER/,
  );
  expectError(t, await sandbox.request('GET', '/v1/accounts', undefined, MULTI), 400, 'USER_ID_HEADER_REQUIRED', /X-Service-User-Id/);
  expectError(t, await sandbox.request('GET', '/v1/accounts', undefined, { ...MULTI, userId: 'usr_nobody' }), 403, 'FORBIDDEN');
  // the document's bounds (1-128 characters) are enforced: a 400 with the validation error body, not a lookup's 403
  const tooLong = await sandbox.request('GET', '/v1/accounts', undefined, { ...MULTI, userId: `usr_${'x'.repeat(125)}` });
  expectError(t, tooLong, 400, undefined, /X-Service-User-Id must be 1-128 characters/);
  t.same(json(tooLong).validationErrors, [{ type: 'InvalidFormat', fieldRef: 'X-Service-User-Id', message: 'X-Service-User-Id must be 1-128 characters' }]);
  expectError(t, await sandbox.request('GET', '/v1/accounts', undefined, { ...MULTI, userId: `usr_${'x'.repeat(124)}` }), 403, 'FORBIDDEN', /not a user/);
  expectError(t, await sandbox.request('GET', '/v1/accounts', undefined, { ...MULTI, userId: 'usr_other' }), 403, 'FORBIDDEN', /not a user of this programme/);

  const jane = await sandbox.request('GET', '/v1/accounts', undefined, AS_JANE);
  t.equal(jane.statusCode, 200);
  t.same(ids(jane), ['acct_jane_usd'], 'a MULTI_USER key acts for the user it names');
  const other = await sandbox.request('GET', '/v1/accounts', undefined, AS_OTHER);
  t.same(ids(other), ['acct_other_usd']);

  // interface 4.11: the users list is programme-level; the user header is not required with either key
  t.equal((await sandbox.request('GET', '/v1/users', undefined, MULTI)).statusCode, 200);
  t.equal((await sandbox.request('GET', '/v1/users')).statusCode, 200);
});

t.test('bearer tokens (interface 5.1, docs/decisions.md#bearer-tokens)', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);

  const issued = await sandbox.request('POST', '/v1/auth/token');
  t.equal(issued.statusCode, 200);
  const token = json(issued);
  t.match(token, {
    accessToken: /^\S{20,}$/,
    tokenType: 'Bearer',
    expiresIn: 3600,
    expiresAt: new Date(Date.parse(START) + 3600_000).toISOString(),
    programId: 'prg_sandbox',
    userId: 'usr_acme',
  });
  t.same(token.scopes, [...SCOPES], 'all scopes by default');
  const stored = sandbox.ctx.db.prepare('SELECT token_hash FROM access_tokens').all() as Array<{ token_hash: string }>;
  t.equal(stored.length, 1);
  t.not(stored[0]!.token_hash, token.accessToken, 'only a hash of the token is stored');

  t.test('a token is used instead of the HMAC headers', async (t) => {
    const response = await sandbox.request('GET', '/v1/accounts', undefined, { bearer: token.accessToken });
    t.equal(response.statusCode, 200);
    t.same(ids(response), ACME_ACCOUNTS);
    const detail = await sandbox.request('GET', '/v1/accounts/acct_acme_usd', undefined, { bearer: token.accessToken });
    t.equal(detail.statusCode, 200);
  });

  t.test('a second token is different (random, not derived from the frozen clock)', async (t) => {
    const again = json(await sandbox.request('POST', '/v1/auth/token'));
    t.not(again.accessToken, token.accessToken);
  });

  t.test('a token carries the user of the HMAC headers that requested it', async (t) => {
    const janeToken = json(await sandbox.request('POST', '/v1/auth/token', undefined, AS_JANE));
    t.equal(janeToken.userId, 'usr_jane');
    t.same(ids(await sandbox.request('GET', '/v1/accounts', undefined, { bearer: janeToken.accessToken })), ['acct_jane_usd']);
    const forbidden = await sandbox.request('GET', '/v1/accounts/acct_acme_usd', undefined, { bearer: janeToken.accessToken });
    expectError(t, forbidden, 403, 'FORBIDDEN');
  });

  t.test('a missing scope gives 403', async (t) => {
    const narrow = await sandbox.request('POST', '/v1/auth/token', { scopes: ['transactions:read'] });
    t.equal(narrow.statusCode, 200);
    t.same(json(narrow).scopes, ['transactions:read']);
    expectError(t, await sandbox.request('GET', '/v1/accounts', undefined, { bearer: json(narrow).accessToken }), 403, 'FORBIDDEN', /accounts:read/);
  });

  t.test('an unknown scope is a 400 naming it', async (t) => {
    const response = await sandbox.request('POST', '/v1/auth/token', { scopes: ['accounts:read', 'root'] });
    expectError(t, response, 400, undefined);
    t.equal(json(response).validationErrors[0].fieldRef, 'scopes.1');
    expectError(t, await sandbox.request('POST', '/v1/auth/token', { scopes: [] }), 400, undefined);
    expectError(t, await sandbox.request('POST', '/v1/auth/token', { scope: 'accounts:read' }), 400, undefined);
  });

  t.test('bearer tokens are refused on HMAC-only routes', async (t) => {
    expectError(t, await sandbox.request('GET', '/v1/users', undefined, { bearer: token.accessToken }), 401, 'UNAUTHORIZED', /HMAC/);
    expectError(t, await sandbox.request('POST', '/v1/auth/token', undefined, { bearer: token.accessToken }), 401, 'UNAUTHORIZED', /HMAC/);
    expectError(t, await sandbox.request('POST', '/v1/auth/users', { externalId: 'x', type: 'PERSON', name: 'X' }, { bearer: token.accessToken }), 401, 'UNAUTHORIZED');
  });

  t.test('unknown or malformed tokens give 401', async (t) => {
    expectError(t, await sandbox.request('GET', '/v1/accounts', undefined, { bearer: 'sbx_at_not_a_real_token' }), 401, 'UNAUTHORIZED', /Unknown access token/);
    const basic = await sandbox.app.inject({ method: 'GET', url: '/v1/accounts', headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    expectError(t, basic, 401, 'UNAUTHORIZED', /Bearer/);
  });

  t.test('a token expires after 3600 s of emulated time', async (t) => {
    await advance(sandbox, 3599_000);
    t.equal((await sandbox.request('GET', '/v1/accounts', undefined, { bearer: token.accessToken })).statusCode, 200, 'valid at 3599 s');
    await advance(sandbox, 2_000);
    expectError(t, await sandbox.request('GET', '/v1/accounts', undefined, { bearer: token.accessToken }), 401, 'UNAUTHORIZED', /expired/);
  });

  t.test('tokens die at reset', async (t) => {
    const fresh = json(await sandbox.request('POST', '/v1/auth/token'));
    t.equal((await sandbox.request('GET', '/v1/accounts', undefined, { bearer: fresh.accessToken })).statusCode, 200);
    t.equal((await sandbox.app.inject({ method: 'POST', url: '/_emulator/reset' })).statusCode, 200);
    expectError(t, await sandbox.request('GET', '/v1/accounts', undefined, { bearer: fresh.accessToken }), 401, 'UNAUTHORIZED');
  });
});

// A probe route with the payout policy exercises verifyPayoutHmac through HTTP, as the payout endpoint
// uses it.
const payoutProbe: FastifyPluginAsync = async (app) => {
  app.post('/test/payout-probe', { config: { auth: { modes: ['payout'], user: 'programme' } } }, async (request) => {
    const auth = authOf(request);
    return { mode: auth.mode, apiKey: auth.apiKey, programmeId: auth.programmeId };
  });
};

t.test('payout HMAC variant: sha256=, RFC 3339, 300 s skew, header lengths (interface 4.12)', async (t) => {
  const sandbox = await buildTestApp({ plugins: [payoutProbe] });
  t.teardown(sandbox.close);
  const target = '/test/payout-probe';
  const body = Buffer.from(JSON.stringify({ entityId: 'acct_acme_usd', amount: '1.00' })).toString('base64');
  const rfc3339 = (offsetMs = 0) => new Date(Date.now() + offsetMs).toISOString().replace(/\.\d{3}Z$/, 'Z');

  function headers(overrides: { apiKey?: string; secret?: string; timestamp?: string; programmeId?: string; signature?: string; signedBody?: string } = {}) {
    const apiKey = overrides.apiKey ?? CREDENTIALS.multi.apiKey;
    const timestamp = overrides.timestamp ?? rfc3339();
    const hex = signRequest({ apiKey, secret: overrides.secret ?? CREDENTIALS.multi.secret, timestamp, method: 'POST', target, body: overrides.signedBody ?? body });
    return {
      'content-type': 'text/plain',
      'x-service-api-key': apiKey,
      'x-service-timestamp': timestamp,
      'x-service-program-id': overrides.programmeId ?? CREDENTIALS.programmeId,
      'x-service-signature': overrides.signature ?? `sha256=${hex}`,
    };
  }
  const post = (h: Record<string, string>, payload = body) => sandbox.app.inject({ method: 'POST', url: target, headers: h, payload });

  const ok = await post(headers());
  t.equal(ok.statusCode, 200, ok.body);
  t.same(json(ok), { mode: 'payout', apiKey: CREDENTIALS.multi.apiKey, programmeId: 'prg_sandbox' });

  t.equal((await post(headers({ timestamp: rfc3339(-299_000) }))).statusCode, 200, '299 s old passes');
  t.equal((await post(headers({ timestamp: new Date().toISOString() }))).statusCode, 200, 'fractional seconds are RFC 3339 too');
  const upper = headers();
  upper['x-service-signature'] = `sha256=${upper['x-service-signature'].slice(7).toUpperCase()}`;
  t.equal((await post(upper)).statusCode, 200, 'upper-case hex digits match ^sha256=[A-Fa-f0-9]{64}$');

  expectError(t, await post(headers({ timestamp: rfc3339(-301_000) })), 401, 'UNAUTHORIZED', /300 seconds/);
  expectError(t, await post(headers({ timestamp: rfc3339(301_000) })), 401, 'UNAUTHORIZED', /300 seconds/);
  expectError(t, await post(headers({ timestamp: String(Date.now()) })), 401, 'UNAUTHORIZED', /RFC 3339/);

  const plainHex = headers();
  plainHex['x-service-signature'] = plainHex['x-service-signature'].slice('sha256='.length);
  expectError(t, await post(plainHex), 401, 'UNAUTHORIZED', /sha256=/);
  expectError(t, await post(headers({ signature: `sha256=${'0'.repeat(64)}` })), 401, 'UNAUTHORIZED', /Signature mismatch/);
  expectError(t, await post(headers({ signature: `sha256=${'a'.repeat(63)}` })), 401, 'UNAUTHORIZED');
  expectError(t, await post(headers({ signedBody: `${body}x` })), 401, 'UNAUTHORIZED', /Signature mismatch/);

  for (const [header, value] of [
    ['x-service-api-key', 'short12'],
    ['x-service-api-key', 'k'.repeat(129)],
    ['x-service-program-id', 'prg_abc'],
    ['x-service-program-id', 'p'.repeat(129)],
  ] as const) {
    const response = await post({ ...headers(), [header]: value });
    expectError(t, response, 400, undefined);
    t.equal(json(response).validationErrors[0].type, 'InvalidFormat');
    t.match(json(response).validationErrors[0].fieldRef, new RegExp(header, 'i'), `${header} length ${value.length}`);
  }
  expectError(t, await post(headers({ programmeId: 'prg_other' })), 403, 'FORBIDDEN');
  expectError(t, await post(headers({ apiKey: 'pk_unknown_key' })), 401, 'UNAUTHORIZED', /Unknown API key/);
  const missing = headers();
  delete (missing as Record<string, string>)['x-service-timestamp'];
  expectError(t, await post(missing), 401, 'UNAUTHORIZED', /X-Service-Timestamp/);
});

t.test('secrets and signatures never appear in logs', async (t) => {
  let logged = '';
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      logged += chunk.toString();
      done();
    },
  });
  const sandbox = await buildTestApp({ config: { logLevel: 'trace', adminToken: 'admin-token-value-42' }, logStream });
  t.teardown(sandbox.close);

  const signatures: string[] = [];
  const signedGet = async (url: string, as: Identity = {}) => {
    const headers = sandbox.sign('GET', url, '', as);
    signatures.push(headers['x-service-signature']!);
    return sandbox.app.inject({ method: 'GET', url, headers });
  };
  t.equal((await signedGet('/v1/accounts')).statusCode, 200);
  t.equal((await signedGet('/v1/accounts', AS_JANE)).statusCode, 200);
  const token = json(await sandbox.request('POST', '/v1/auth/token')).accessToken as string;
  t.equal((await sandbox.request('GET', '/v1/accounts', undefined, { bearer: token })).statusCode, 200);
  // a failing signature and a statement-style signed link in the url
  const bad = sandbox.sign('GET', '/v1/accounts');
  bad['x-service-signature'] = 'f'.repeat(64);
  t.equal((await sandbox.app.inject({ method: 'GET', url: '/v1/accounts', headers: bad })).statusCode, 401);
  await sandbox.app.inject({ method: 'GET', url: '/v1/statement-files/sf_x?expires=1&signature=deadbeefcafe0123' });
  await sandbox.app.inject({ method: 'GET', url: '/_emulator/clock', headers: { authorization: 'Bearer admin-token-value-42' } });

  t.match(logged, /"url":"\/v1\/accounts"/, 'requests are logged');
  t.match(logged, /signature=\[REDACTED\]/, 'signed-link parameters are masked');
  for (const secret of [
    CREDENTIALS.single.secret,
    CREDENTIALS.multi.secret,
    token,
    'admin-token-value-42',
    'deadbeefcafe0123',
    'f'.repeat(64),
    ...signatures,
  ]) {
    t.notOk(logged.includes(secret), `log does not contain ${secret.slice(0, 12)}...`);
  }
});
