import { Writable } from 'node:stream';
import t from 'tap';
import { prepared } from '../../src/db/connection.js';
import { buildTestApp, json, type TestApp } from '../helper.js';

// The dashboard's server side (docs/dashboard.md#read-endpoints-behind-the-dashboard): control-plane read endpoints and
// the act-as proxy, over inject.

async function control(sandbox: TestApp, method: 'GET' | 'POST', url: string, payload?: unknown) {
  const response = await sandbox.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }) });
  return { status: response.statusCode, body: response.body ? json(response) : null, headers: response.headers };
}

t.test('overview: programmes, users, top-level accounts with balances and instructions', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const { status, body } = await control(sandbox, 'GET', '/_emulator/overview');
  t.equal(status, 200);
  t.equal(body.now, '2026-03-01T12:00:00.000Z', 'emulated now');
  t.same(body.programmes.map((p: { id: string }) => p.id), ['prg_sandbox', 'prg_other'], 'fixture order');
  const sandboxProgramme = body.programmes[0];
  const acme = sandboxProgramme.users.find((u: { id: string }) => u.id === 'usr_acme');
  t.match(acme, { name: 'Acme Robotics LLC', type: 'BUSINESS', enrollmentStatus: 'ACTIVE', enrollmentStatusReason: null, enrollmentStarted: true });
  t.same(
    acme.accounts.map((a: { id: string }) => a.id),
    ['acct_acme_usd', 'acct_acme_eur', 'acct_acme_usdc', 'acct_acme_gbp'],
    'top-level accounts only, createdAt order (sub-balances hidden)',
  );
  const usd = acme.accounts[0];
  t.match(usd.balances, { current: /^-?\d+\.\d{2}$/, available: /^-?\d+\.\d{2}$/ }, 'USD balances with 2 decimals');
  t.match(acme.accounts[2].balances.current, /^\d+\.\d{6}$/, 'USDC with 6 decimals');
  t.same(
    usd.depositInstructions.map((d: { id: string; status: string }) => [d.id, d.status]),
    [
      ['di_acme_usd_ach', 'ACTIVE'],
      ['di_acme_usd_wire', 'ACTIVE'],
    ],
  );
  t.match(usd.depositInstructions[0].rail, { type: 'US.USD.ACH', label: String });
  t.equal(acme.accounts[3].providerReady, false, 'the GBP account is not provider-ready');

  // A created user shows at once, flagged as not yet listed by GET /v1/users.
  const created = await sandbox.request('POST', '/v1/auth/users', { externalId: 'new-1', type: 'PERSON', name: 'New Person' }, {
    apiKey: 'pk_sandbox_multi',
    secret: 'sk_sandbox_multi_secret',
  });
  t.equal(created.statusCode, 201);
  const again = (await control(sandbox, 'GET', '/_emulator/overview')).body;
  const fresh = again.programmes[0].users.find((u: { id: string }) => u.id === json(created).userId);
  t.match(fresh, { name: 'New Person', enrollmentStatus: 'INACTIVE', enrollmentStarted: false, accounts: [] });
});

t.test('act-as: signs as the user, runs the public API, reports the inner answer', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);

  const list = await control(sandbox, 'POST', '/_emulator/act-as', { userId: 'usr_jane', method: 'GET', path: '/v1/accounts?pageSize=5' });
  t.equal(list.status, 200);
  t.equal(list.body.status, 200, 'inner status');
  t.same(list.body.body.data.map((a: { id: string }) => a.id), ['acct_jane_usd'], 'acted as usr_jane (MULTI_USER key + user header)');
  t.same(list.body.actedAs, { apiKey: 'pk_sandbox_multi', integrationType: 'MULTI_USER', programmeId: 'prg_sandbox', userId: 'usr_jane' });
  t.notMatch(JSON.stringify(list.body), /sk_sandbox/, 'no secret in the answer');

  const other = await control(sandbox, 'POST', '/_emulator/act-as', { userId: 'usr_other', method: 'GET', path: '/v1/accounts' });
  t.equal(other.body.status, 200);
  t.same(other.body.body.data.map((a: { id: string }) => a.id), ['acct_other_usd'], 'another programme: its own key');

  // Inner failures come back as data: the same validation as any client.
  const deposit = await control(sandbox, 'POST', '/_emulator/act-as', {
    userId: 'usr_acme',
    method: 'POST',
    path: '/v1/sandbox/accounts/acct_acme_usd/deposits',
    body: { depositInstructionId: 'di_acme_usd_ach', amount: '1.001' },
  });
  t.equal(deposit.status, 200);
  t.equal(deposit.body.status, 400, 'inner 400');
  t.notOk('errorCode' in deposit.body.body, 'no errorCode: validationErrors describe it (interface 7.1)');
  t.ok(deposit.body.body.validationErrors?.length || deposit.body.body.message, 'with the error body');

  const forbidden = await control(sandbox, 'POST', '/_emulator/act-as', { userId: 'usr_jane', method: 'GET', path: '/v1/accounts/acct_acme_usd' });
  t.equal(forbidden.body.status, 403, "another user's account: the public API's own 403");

  const createdUser = await control(sandbox, 'POST', '/_emulator/act-as', {
    userId: 'usr_acme',
    method: 'POST',
    path: '/v1/auth/users',
    body: { externalId: 'via-act-as', type: 'BUSINESS', name: 'Via Act-As Ltd' },
  });
  t.equal(createdUser.body.status, 201, 'a programme-level write with the MULTI_USER key');
});

t.test('act-as: the user\'s SINGLE_USER key when the programme has no MULTI_USER key', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  prepared(sandbox.ctx.db, "DELETE FROM api_keys WHERE api_key = 'pk_sandbox_multi'").run();

  const acme = await control(sandbox, 'POST', '/_emulator/act-as', { userId: 'usr_acme', method: 'GET', path: '/v1/accounts' });
  t.equal(acme.body.status, 200, 'signed with the bound key, without a user header');
  t.equal(acme.body.actedAs.apiKey, 'pk_sandbox_single');
  t.equal(acme.body.actedAs.integrationType, 'SINGLE_USER');

  const jane = await control(sandbox, 'POST', '/_emulator/act-as', { userId: 'usr_jane', method: 'GET', path: '/v1/accounts' });
  t.equal(jane.status, 409, 'no key can act for usr_jane');
  t.match(jane.body.message, /no MULTI_USER key/);
});

t.test('act-as: rejects paths outside /v1/, unknown users and malformed requests', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const cases: Array<[string, Record<string, unknown>, number, RegExp | undefined]> = [
    ['control plane path', { userId: 'usr_acme', method: 'POST', path: '/_emulator/reset' }, 400, /\/v1\//],
    ['relative path', { userId: 'usr_acme', method: 'GET', path: 'v1/accounts' }, 400, /\/v1\//],
    ['dot segments', { userId: 'usr_acme', method: 'GET', path: '/v1/../_emulator/overview' }, 400, /dot segments/],
    ['encoded dot segments', { userId: 'usr_acme', method: 'GET', path: '/v1/%2e%2e/_emulator/overview' }, 400, /dot segments/],
    ['fragment', { userId: 'usr_acme', method: 'GET', path: '/v1/accounts#x' }, 400, /fragment/],
    ['encoded slashes', { userId: 'usr_acme', method: 'GET', path: '/v1/accounts%2F..%2F..%2F_emulator' }, 400, /encoded dot, slash or backslash/],
    ['a backslash', { userId: 'usr_acme', method: 'GET', path: '/v1/..\\_emulator\\overview' }, 400, /dot segments/],
    ['GET with a body', { userId: 'usr_acme', method: 'GET', path: '/v1/accounts', body: { a: 1 } }, 400, /no body/],
    ['unknown method', { userId: 'usr_acme', method: 'TRACE', path: '/v1/accounts' }, 400, undefined],
    ['missing userId', { method: 'GET', path: '/v1/accounts' }, 400, undefined],
    ['unknown field', { userId: 'usr_acme', method: 'GET', path: '/v1/accounts', apiKey: 'x' }, 400, undefined],
    ['unknown user', { userId: 'usr_nobody', method: 'GET', path: '/v1/accounts' }, 404, /usr_nobody/],
  ];
  for (const [name, payload, expected, message] of cases) {
    const response = await control(sandbox, 'POST', '/_emulator/act-as', payload);
    t.equal(response.status, expected, name);
    // interface 7.1: a 400 that validationErrors describe carries no errorCode; one they do not, INVALID_REQUEST
    const describedByItems = expected === 400 && (response.body.validationErrors?.length ?? 0) > 0;
    t.equal(response.body.errorCode, expected === 404 ? 'NOT_FOUND' : describedByItems ? undefined : 'INVALID_REQUEST', `${name}: errorCode`);
    if (message) t.match(response.body.message, message, `${name}: message`);
  }
});

t.test('transactions across programmes: newest first, filters, detail', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const before = (await control(sandbox, 'GET', '/_emulator/transactions?limit=500')).body.data.length;

  const deposit = (userId: string, accountId: string, depositInstructionId: string, amount: string) =>
    control(sandbox, 'POST', '/_emulator/act-as', {
      userId,
      method: 'POST',
      path: `/v1/sandbox/accounts/${accountId}/deposits`,
      body: { depositInstructionId, amount, reference: `REF-${amount}` },
    });
  t.equal((await deposit('usr_acme', 'acct_acme_usd', 'di_acme_usd_ach', '10.00')).body.status, 202);
  sandbox.ctx.clock.advance(1000);
  t.equal((await deposit('usr_jane', 'acct_jane_usd', 'di_jane_usd_ach', '20.00')).body.status, 202);
  sandbox.ctx.clock.advance(1000);
  t.equal((await deposit('usr_other', 'acct_other_usd', 'di_other_usd_ach', '30.00')).body.status, 202);

  const all = await control(sandbox, 'GET', '/_emulator/transactions');
  t.equal(all.status, 200);
  t.equal(all.body.data.length, Math.min(before + 3, 50), 'default limit 50');
  const newest = all.body.data.slice(0, 3);
  t.same(
    newest.map((txn: { creditAmount: string; userId: string; programmeId: string; accountId: string }) => [txn.creditAmount, txn.userId, txn.programmeId, txn.accountId]),
    [
      ['30.00', 'usr_other', 'prg_other', 'acct_other_usd'],
      ['20.00', 'usr_jane', 'prg_sandbox', 'acct_jane_usd'],
      ['10.00', 'usr_acme', 'prg_sandbox', 'acct_acme_usd'],
    ],
    'newest first across programmes, with owner fields',
  );
  t.match(newest[0], { id: /^txn_/, type: 'DEPOSIT', status: 'PENDING', debitReference: 'REF-30.00' }, 'the transaction of interface 2.4');
  const createdAt = all.body.data.map((txn: { createdAt: string }) => txn.createdAt);
  t.same(createdAt, [...createdAt].sort().reverse(), 'sorted by createdAt descending');

  const jane = (await control(sandbox, 'GET', '/_emulator/transactions?userId=usr_jane')).body.data;
  t.ok(jane.length >= 1 && jane.every((txn: { userId: string }) => txn.userId === 'usr_jane'), 'userId filter');
  const account = (await control(sandbox, 'GET', '/_emulator/transactions?accountId=acct_other_usd&limit=1')).body.data;
  t.equal(account.length, 1, 'limit');
  t.equal(account[0].accountId, 'acct_other_usd', 'accountId filter');
  const programme = (await control(sandbox, 'GET', '/_emulator/transactions?programmeId=prg_other')).body.data;
  t.ok(programme.every((txn: { programmeId: string }) => txn.programmeId === 'prg_other'), 'programmeId filter');

  for (const bad of ['limit=0', 'limit=501', 'limit=abc', 'sortBy=createdAt']) {
    const response = await control(sandbox, 'GET', `/_emulator/transactions?${bad}`);
    t.equal(response.status, 400, bad);
    t.ok(response.body.validationErrors?.[0]?.fieldRef, `${bad}: names the parameter`);
  }

  const detail = await control(sandbox, 'GET', `/_emulator/transactions/${newest[1].id}`);
  t.equal(detail.status, 200);
  t.same(Object.keys(detail.body).sort(), ['accountId', 'programmeId', 'transaction', 'userId']);
  t.match(detail.body, { userId: 'usr_jane', programmeId: 'prg_sandbox', accountId: 'acct_jane_usd', transaction: { id: newest[1].id, creditAmount: '20.00' } });

  const missing = await control(sandbox, 'GET', '/_emulator/transactions/txn_nope');
  t.equal(missing.status, 404);
  t.equal(missing.body.errorCode, 'NOT_FOUND');
});

t.test('dashboard assets and feed', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const page = await sandbox.app.inject({ method: 'GET', url: '/_emulator/ui' });
  t.equal(page.statusCode, 200);
  t.match(page.headers['content-type'], /^text\/html/);
  t.match(page.headers['content-security-policy'], /default-src 'none'; script-src 'self'/);
  t.match(page.body, /<script type="module" src="\/_emulator\/ui\/app.js"><\/script>/);
  const trailing = await sandbox.app.inject({ method: 'GET', url: '/_emulator/ui/' });
  t.equal(trailing.statusCode, 200, 'with a trailing slash too');

  const script = await sandbox.app.inject({ method: 'GET', url: '/_emulator/ui/app.js' });
  t.equal(script.statusCode, 200);
  t.match(script.headers['content-type'], /^text\/javascript/);
  t.notMatch(script.body, /\.innerHTML\s*=|insertAdjacentHTML|outerHTML\s*=|document\.write/, 'the script never writes HTML from strings');
  const style = await sandbox.app.inject({ method: 'GET', url: '/_emulator/ui/app.css' });
  t.equal(style.statusCode, 200);
  t.match(style.headers['content-type'], /^text\/css/);

  const feed = await control(sandbox, 'GET', '/_emulator/ui/state?limit=5');
  t.equal(feed.status, 200);
  t.match(feed.body, { clock: { now: '2026-03-01T12:00:00.000Z', mode: 'frozen' }, overview: { programmes: Array }, transactions: Array, selected: null });
  t.ok(feed.body.transactions.length <= 5);

  // The selected transaction comes along with its webhook deliveries (one request per second in all).
  const deposit = await control(sandbox, 'POST', '/_emulator/act-as', {
    userId: 'usr_jane',
    method: 'POST',
    path: '/v1/sandbox/accounts/acct_jane_usd/deposits',
    body: { depositInstructionId: 'di_jane_usd_ach', amount: '5.00' },
  });
  t.equal(deposit.body.status, 202);
  const newest = (await control(sandbox, 'GET', '/_emulator/transactions?userId=usr_jane&limit=1')).body.data[0];
  const withSelected = await control(sandbox, 'GET', `/_emulator/ui/state?limit=1&selected=${newest.id}`);
  t.equal(withSelected.status, 200);
  t.equal(withSelected.body.selected.id, newest.id);
  t.match(withSelected.body.selected.detail, { userId: 'usr_jane', accountId: 'acct_jane_usd', transaction: { id: newest.id, creditAmount: '5.00' } });
  t.match(withSelected.body.selected.deliveries, [{ eventType: 'transaction_created', transactionId: newest.id, attempts: Array }], 'its deliveries, in event order');
  const gone = await control(sandbox, 'GET', '/_emulator/ui/state?selected=txn_gone');
  t.same(gone.body.selected, { id: 'txn_gone', detail: null, deliveries: [], story: null }, 'an unknown selection is not an error');
  t.equal((await control(sandbox, 'GET', '/_emulator/ui/state?bogus=1')).status, 400, 'unknown query parameters are refused');

  const openapi = json(await sandbox.app.inject({ method: 'GET', url: '/openapi.json' }));
  for (const path of ['/_emulator/overview', '/_emulator/transactions', '/_emulator/transactions/{transactionId}', '/_emulator/act-as', '/_emulator/ui']) {
    t.ok(openapi.paths[path], `${path} is documented`);
  }
});

t.test('with ADMIN_TOKEN the read endpoints and act-as need the token', async (t) => {
  const sandbox = await buildTestApp({ config: { adminToken: 'let-me-in' } });
  t.teardown(sandbox.close);
  for (const [method, url, payload] of [
    ['GET', '/_emulator/overview', undefined],
    ['GET', '/_emulator/transactions', undefined],
    ['GET', '/_emulator/ui/state', undefined],
    ['POST', '/_emulator/act-as', { userId: 'usr_acme', method: 'GET', path: '/v1/accounts' }],
  ] as const) {
    const denied = await sandbox.app.inject({ method, url, ...(payload ? { payload } : {}) });
    t.equal(denied.statusCode, 401, `${method} ${url} without the token`);
    const allowed = await sandbox.app.inject({ method, url, headers: { 'x-admin-token': 'let-me-in' }, ...(payload ? { payload } : {}) });
    t.equal(allowed.statusCode, 200, `${method} ${url} with it`);
  }
});

t.test("the dashboard's feed and files stay out of the request log", async (t) => {
  const lines: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const sandbox = await buildTestApp({ config: { logLevel: 'info' }, logStream });
  t.teardown(sandbox.close);
  for (const url of ['/_emulator/ui/state', '/_emulator/ui/app.js', '/_emulator/ui/app.css']) {
    t.equal((await sandbox.app.inject({ method: 'GET', url })).statusCode, 200, url);
  }
  t.same(lines, [], 'polled once a second, so not logged at info');
  await sandbox.app.inject({ method: 'GET', url: '/_emulator/overview' });
  t.ok(lines.some((line) => line.includes('/_emulator/overview')), 'other control-plane reads are logged as usual');
});
