import tap from 'tap';
import { startServer, type RunningServer } from '../../src/server.js';
import { verifyWebhookSignature } from '../../src/webhook-verify.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { call, signed } from '../helpers/http-client.js';
import { waitUntil } from '../helpers/wait.js';
import { CREDENTIALS, START } from '../helper.js';
import type { Config } from '../../src/config.js';

// Sessions over real HTTP (docs/sessions.md): isolated sandboxes under /_sessions/{id} on the root's port.

const US_BANK = { type: 'BANK_ACCOUNT', currency: 'USD', country: 'US', accountHolderName: 'Initech LLC', accountNumber: '987654321012', routingNumber: '021000021' };

interface SessionAnswer {
  id: string;
  baseUrl: string;
  webhookUrl: string | null;
  credentials: { programmeId: string; single: { apiKey: string; secret: string; userId: string }; multi: { apiKey: string; secret: string }; webhook: { apiKey: string; secret: string } };
  startedFrom: { fixtures: string; snapshot: string | null; clock: string; seed: string | null };
  label: string | null;
  [key: string]: unknown;
}

async function serve(config: Partial<Config> = {}): Promise<RunningServer> {
  return startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent', clock: START, ...config } as never });
}

async function createSession(server: RunningServer, body?: unknown): Promise<SessionAnswer> {
  const answer = await call(`${server.url}/_emulator/sessions`, 'POST', body);
  if (answer.status !== 201) throw new Error(`session not created: ${answer.status} ${answer.text}`);
  return answer.body as SessionAnswer;
}

tap.test('a session answers the interface under its base URL, signed over the path as sent', async (t) => {
  const server = await serve();
  t.teardown(() => server.close());
  const session = await createSession(server);
  t.match(session.id, /^ses_[0-9a-f]{16}$/);
  t.equal(session.baseUrl, `${server.url}/_sessions/${session.id}`, 'baseUrl from the Host the client used');
  t.same(session.credentials.single, CREDENTIALS.single);
  t.same(session.credentials.multi, CREDENTIALS.multi);
  t.same(session.credentials.webhook, CREDENTIALS.webhook);
  t.equal(session.webhookUrl, null, 'no webhook URL unless given');

  const accounts = await signed(session.baseUrl, 'GET', '/v1/accounts?pageSize=2');
  t.equal(accounts.status, 200);
  t.equal(accounts.body.data.length, 2);
  t.equal(accounts.body.data[0].id, 'acct_acme_usd');

  const unprefixed = await signed(session.baseUrl, 'GET', '/v1/accounts?pageSize=2', undefined, { signedTarget: '/v1/accounts?pageSize=2' });
  t.equal(unprefixed.status, 401, 'a signature over the path without the prefix is refused');
  t.equal(unprefixed.body.errorCode, 'UNAUTHORIZED');
  t.match(unprefixed.body.message, `/_sessions/${session.id} included`, 'the message names the prefix');

  const bare = await call(`${session.baseUrl}/v1/accounts`);
  t.equal(bare.status, 401, 'unsigned: 401 as on the root');

  const health = await call(`${session.baseUrl}/_emulator/health`);
  t.equal(health.status, 200);
  t.equal(health.body.now, START);

  const root = await call(`${session.baseUrl}`);
  t.equal(root.status, 404, 'the bare base URL is a 404 of the session, with the error body');
  t.type(root.body.message, 'string');
});

tap.test('create: bad bodies, unknown snapshots and combinations are refused and create nothing', async (t) => {
  const server = await serve();
  t.teardown(() => server.close());
  const cases: Array<[unknown, number, string]> = [
    [{ clock: '2026-02-30T00:00:00Z' }, 400, 'clock'],
    [{ webhookUrl: 'ftp://x' }, 400, 'webhookUrl'],
    [{ colour: 'blue' }, 400, 'colour'],
    [{ snapshot: 'no-such' }, 404, 'no-such'],
    [{ snapshot: 'bad name!' }, 400, 'snapshot'],
    [{ fixtures: { programmes: 'x' } }, 400, 'fixtures'],
    [{ fixtures: [] }, 400, 'fixtures'],
    [{ seed: '' }, 400, 'seed'],
    [{ seed: 'x'.repeat(129) }, 400, 'seed'],
    [{ label: '' }, 400, 'label'],
    [{ label: 'x'.repeat(129) }, 400, 'label'],
    [{ label: 'tab\there' }, 400, 'label'],
    ['text', 400, 'body'],
  ];
  for (const [body, status, mentions] of cases) {
    const answer = await call(`${server.url}/_emulator/sessions`, 'POST', body);
    t.equal(answer.status, status, `${JSON.stringify(body)} -> ${status}`);
    t.type(answer.body.message, 'string');
    t.match(JSON.stringify(answer.body), mentions);
  }
  // a fixtures webhook URL is http(s), as the control plane takes one (docs/configuration.md#fixtures-file-format)
  for (const url of ['file:///etc/passwd', 'ftp://example.com/hooks']) {
    const fixtures = JSON.parse(JSON.stringify(server.ctx.fixtures));
    fixtures.programmes[0].webhook.url = url;
    const refused = await call(`${server.url}/_emulator/sessions`, 'POST', { fixtures });
    t.equal(refused.status, 400, `${url}: ${refused.text.slice(0, 200)}`);
    t.match(refused.body.message, /programmes\.0\.webhook\.url: url must be an http:\/\/ or https:\/\/ URL/);
  }
  const saved = await call(`${server.url}/_emulator/snapshots`, 'POST', { name: 'start' });
  t.equal(saved.status, 201);
  const both = await call(`${server.url}/_emulator/sessions`, 'POST', { snapshot: 'start', clock: START });
  t.equal(both.status, 400);
  t.equal(both.body.validationErrors[0].fieldRef, 'snapshot');
  t.same((await call(`${server.url}/_emulator/sessions`)).body.data, [], 'no session was created by a refusal');

  t.equal((await call(`${server.url}/_emulator/sessions/ses_0000000000000000`)).status, 404);
  t.equal((await call(`${server.url}/_emulator/sessions/ses_0000000000000000`, 'DELETE')).status, 404);
  const ghost = await call(`${server.url}/_sessions/ses_0000000000000000/v1/accounts`);
  t.equal(ghost.status, 404);
  t.equal(ghost.body.errorCode, 'NOT_FOUND');
  t.match(ghost.body.message, 'ses_0000000000000000');
});

tap.test('sixteen sessions under parallel load share nothing: ids, balances, clocks, webhooks', async (t) => {
  const server = await serve();
  t.teardown(() => server.close());
  const receivers: Receiver[] = [];
  t.teardown(() => Promise.all(receivers.map((receiver) => receiver.close())));
  const sessions = await Promise.all(
    Array.from({ length: 16 }, async (_, index) => {
      const receiver = await startReceiver({ path: `/hooks/${index}` });
      receivers[index] = receiver;
      return createSession(server, { webhookUrl: receiver.url });
    }),
  );
  t.equal(new Set(sessions.map((session) => session.id)).size, 16);

  // Each session deposits its own amount (index + 1) and moves its clock by its own step, all at once.
  const deposits = await Promise.all(
    sessions.map(async (session, index) => {
      const created = await signed(session.baseUrl, 'POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: `${index + 1}.00` });
      t.equal(created.status, 202, `session ${index}: deposit accepted`);
      const moved = await call(`${session.baseUrl}/_emulator/clock`, 'POST', { advanceMs: 60_000 * (index + 1) });
      t.equal(moved.status, 200);
      return created.body;
    }),
  );
  t.equal(deposits.length, 16);
  const depositIds: string[] = [];

  await Promise.all(
    sessions.map(async (session, index) => {
      const clock = await call(`${session.baseUrl}/_emulator/clock`);
      t.equal(clock.body.now, new Date(Date.parse(START) + 60_000 * (index + 1)).toISOString(), `session ${index}: its own clock`);
      const list = await signed(session.baseUrl, 'GET', '/v1/transactions?pageSize=100&sortDirection=DESC');
      const simulated = list.body.data.filter((transaction: { createdAt: string }) => transaction.createdAt >= START);
      t.equal(simulated.length, 1, `session ${index}: only its own deposit`);
      t.equal(simulated[0].creditAmount, `${index + 1}.00`);
      t.equal(simulated[0].status, 'COMPLETED');
      depositIds[index] = simulated[0].id;
    }),
  );

  t.equal(new Set(depositIds).size, 16, 'docs/sessions.md#ids: no two sessions hand out the same id (each draws from a sequence of its own)');
  for (const [index, receiver] of receivers.entries()) {
    await waitUntil(() => receiver.requests.some((request) => request.body?.transaction?.status === 'COMPLETED'), `webhooks of session ${index}`);
    for (const request of receiver.requests) {
      t.equal(request.url, `/hooks/${index}`);
      t.equal(request.body.transaction.creditAmount, `${index + 1}.00`, `session ${index}: its webhooks carry its own amount`);
      t.ok(
        verifyWebhookSignature({
          apiKey: request.headers['x-service-api-key'] as string,
          secret: CREDENTIALS.webhook.secret,
          timestamp: request.headers['x-service-timestamp'] as string,
          signature: request.headers['x-service-signature'] as string,
          path: request.url,
          rawBody: request.rawBody,
        }),
        'signed over the session\'s webhook path',
      );
    }
  }
  // Each session's delivery log has its own deliveries only, as its receiver saw them.
  await Promise.all(
    sessions.map(async (session, index) => {
      const log = await call(`${session.baseUrl}/_emulator/webhooks/deliveries`);
      t.equal(log.status, 200);
      t.ok(log.body.data.length >= 2, `session ${index}: its deliveries are logged`);
      t.ok(
        log.body.data.every((delivery: { body: { transaction: { creditAmount: string } } }) => delivery.body.transaction.creditAmount === `${index + 1}.00`),
        `session ${index}: and no other session's`,
      );
    }),
  );
  const rootClock = await call(`${server.url}/_emulator/clock`);
  t.equal(rootClock.body.now, START, 'the root sandbox\'s clock did not move');
  const rootList = await signed(server.url, 'GET', '/v1/transactions?pageSize=100');
  t.notOk(rootList.body.data.some((transaction: { createdAt: string }) => transaction.createdAt >= START), 'nor did its data');

  const listed = await call(`${server.url}/_emulator/sessions`);
  t.equal(listed.body.data.length, 16);
  t.equal(listed.body.limit, 64);
  await Promise.all(sessions.map(async (session) => t.equal((await call(`${server.url}/_emulator/sessions/${session.id}`, 'DELETE')).status, 204)));
  t.same((await call(`${server.url}/_emulator/sessions`)).body.data, []);
  t.equal((await signed(sessions[0]!.baseUrl, 'GET', '/v1/accounts')).status, 404, 'an ended session answers 404');
});

tap.test('each session has its own control plane: reset, snapshots, journal', async (t) => {
  const server = await serve();
  t.teardown(() => server.close());
  const [a, b] = [await createSession(server), await createSession(server)];

  const beneficiary = { type: 'PERSON', firstName: 'Sam', lastName: 'Supplier', instruments: [US_BANK] };
  await call(`${a.baseUrl}/_emulator/requests`, 'DELETE');
  const made = await signed(a.baseUrl, 'POST', '/v1/beneficiaries', beneficiary);
  t.equal(made.status, 201, made.text);
  const inB = await signed(b.baseUrl, 'GET', '/v1/beneficiaries');
  t.equal(inB.status, 200);
  t.notOk(inB.body.data.some((item: { id: string }) => item.id === made.body.id), 'B does not see A\'s beneficiary');

  const journalA = await call(`${a.baseUrl}/_emulator/requests`);
  t.ok(journalA.body.data.some((entry: { path?: string; url?: string }) => (entry.path ?? entry.url ?? '').includes('/v1/beneficiaries')), 'A\'s journal has A\'s request');
  const journalB = await call(`${b.baseUrl}/_emulator/requests`);
  t.notOk(journalB.body.data.some((entry: { method: string }) => entry.method === 'POST'), 'B\'s journal has no POST');

  t.equal((await call(`${a.baseUrl}/_emulator/snapshots`, 'POST', { name: 'with-sam' })).status, 201);
  t.same((await call(`${b.baseUrl}/_emulator/snapshots`)).body.data, [], 'snapshots are per session');
  t.same((await call(`${server.url}/_emulator/snapshots`)).body.data, [], 'and not the root\'s');

  t.equal((await call(`${a.baseUrl}/_emulator/reset`, 'POST')).status, 200);
  const afterReset = await signed(a.baseUrl, 'GET', `/v1/beneficiaries/${made.body.id}`);
  t.equal(afterReset.status, 404, 'reset in A forgets Sam');
  t.equal((await call(`${a.baseUrl}/_emulator/snapshots/with-sam/restore`, 'POST')).status, 200);
  t.equal((await signed(a.baseUrl, 'GET', `/v1/beneficiaries/${made.body.id}`)).status, 200, 'restore brings Sam back');
  t.equal((await call(`${server.url}/_emulator/sessions`, 'POST', { snapshot: 'with-sam' })).status, 404, 'a session\'s snapshot is not the root\'s');
});

tap.test('a session from a root snapshot, with its own clock or its own fixtures', async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const server = await serve({ webhookUrl: receiver.url });
  t.teardown(() => server.close());
  const beneficiary = { type: 'PERSON', firstName: 'Root', lastName: 'Person', instruments: [US_BANK] };
  const made = await signed(server.url, 'POST', '/v1/beneficiaries', beneficiary);
  t.equal(made.status, 201);
  t.equal((await call(`${server.url}/_emulator/clock`, 'POST', { advanceMs: 3_600_000 })).status, 200);
  t.equal((await call(`${server.url}/_emulator/snapshots`, 'POST', { name: 'root-state' })).status, 201);

  const fromSnapshot = await createSession(server, { snapshot: 'root-state' });
  t.equal(fromSnapshot.webhookUrl, null, 'the root\'s webhook URL does not come along');
  t.same(fromSnapshot.startedFrom, { fixtures: 'server', snapshot: 'root-state', clock: '2026-03-01T13:00:00.000Z', seed: null }, 'it started at the snapshot instant');
  t.equal((await signed(fromSnapshot.baseUrl, 'GET', `/v1/beneficiaries/${made.body.id}`)).status, 200, 'the snapshot\'s data');
  t.equal((await call(`${fromSnapshot.baseUrl}/_emulator/clock`)).body.now, '2026-03-01T13:00:00.000Z', 'the snapshot\'s clock');
  await signed(fromSnapshot.baseUrl, 'DELETE', `/v1/beneficiaries/${made.body.id}`);
  t.equal((await call(`${fromSnapshot.baseUrl}/_emulator/reset`, 'POST')).status, 200);
  t.equal((await signed(fromSnapshot.baseUrl, 'GET', `/v1/beneficiaries/${made.body.id}`)).status, 200, 'reset goes back to the snapshot');
  t.equal((await signed(server.url, 'GET', `/v1/beneficiaries/${made.body.id}`)).status, 200, 'the root keeps its own');

  // The webhook URL given at creation survives a reset, even of a session started from the root's snapshot,
  // whose own endpoint is the root's receiver.
  const mine = await createSession(server, { snapshot: 'root-state', webhookUrl: 'http://127.0.0.1:9/mine' });
  const endpointOf = async (base: string) => (await call(`${base}/_emulator/webhooks/endpoint?programId=prg_sandbox`)).body.endpoints[0].url;
  t.equal(await endpointOf(mine.baseUrl), 'http://127.0.0.1:9/mine');
  t.equal((await call(`${mine.baseUrl}/_emulator/reset`, 'POST')).status, 200);
  t.equal(await endpointOf(mine.baseUrl), 'http://127.0.0.1:9/mine', 'a reset keeps the session\'s webhook URL');
  t.equal((await call(`${fromSnapshot.baseUrl}/_emulator/reset`, 'POST')).status, 200);
  t.equal(await endpointOf(fromSnapshot.baseUrl), null, 'and a session without one never falls back to the root\'s receiver');
  t.equal(mine.startedFrom && (mine.startedFrom as { clock: string }).clock, '2026-03-01T13:00:00.000Z', 'startedFrom.clock is the snapshot\'s instant');

  const frozen = await createSession(server, { clock: '2027-01-15T08:30:00.000Z' });
  t.equal((await call(`${frozen.baseUrl}/_emulator/clock`)).body.now, '2027-01-15T08:30:00.000Z');
  t.equal((await call(`${frozen.baseUrl}/_emulator/reset`, 'POST')).status, 200);
  t.equal((await call(`${frozen.baseUrl}/_emulator/clock`)).body.now, '2027-01-15T08:30:00.000Z', 'reset goes back to the session\'s clock');

  const fixtures = JSON.parse(JSON.stringify((server.ctx.fixtures)));
  fixtures.programmes[0].apiKeys = fixtures.programmes[0].apiKeys.map((key: { apiKey: string; secret: string }) => ({ ...key, secret: `${key.secret}_2` }));
  fixtures.programmes[0].webhook.url = 'http://127.0.0.1:9/from-fixtures';
  const custom = await createSession(server, { fixtures });
  t.equal(custom.credentials.single.secret, 'sk_sandbox_single_secret_2', 'credentials of the given fixtures');
  t.equal(custom.webhookUrl, null, 'a URL in the given fixtures is not the session\'s: none unless webhookUrl is given');
  t.equal((await call(`${custom.baseUrl}/_emulator/reset`, 'POST')).status, 200);
  t.equal(await endpointOf(custom.baseUrl), null, 'nor after a reset');
  t.equal((await signed(custom.baseUrl, 'GET', '/v1/accounts')).status, 401, 'the server\'s secret does not sign for it');
});

tap.test('given fixtures: bounded in size (200 history entries start a session, 201 or 1,001 users are a 400 naming the count); one that fails while seeded is a 400', async (t) => {
  // docs/sessions.md#given-fixtures
  const server = await serve();
  t.teardown(() => server.close());
  const withHistory = (entries: number) => {
    const fixtures = JSON.parse(JSON.stringify(server.ctx.fixtures));
    const programme = fixtures.programmes[0];
    const more = entries - fixtures.programmes.reduce((sum: number, each: { history: unknown[] }) => sum + each.history.length, 0);
    for (let i = 0; i < more; i++) {
      programme.history.push({ id: `txn_given_${i}`, accountId: 'acct_acme_usd', type: 'DEPOSIT', createdAt: '2026-01-02T15:04:00.000Z', completedAt: '2026-01-02T15:06:30.000Z', amount: '1.00', rail: 'US.USD.ACH', payer: { displayName: 'Payer' } });
    }
    return fixtures;
  };

  // fixtures that pass their schema but fail while seeded: 50,000.00 USD at precision 18 is past SQLite's integers
  const precise = JSON.parse(JSON.stringify(server.ctx.fixtures));
  precise.currencies.USD.precision = 18;
  const unseedable = await call(`${server.url}/_emulator/sessions`, 'POST', { fixtures: precise });
  t.equal(unseedable.status, 400, JSON.stringify(unseedable.body).slice(0, 300));
  t.same(unseedable.body.validationErrors.map((item: { fieldRef: string }) => item.fieldRef), ['fixtures']);
  t.match(unseedable.body.message, /^invalid history txn_hist_acme_usd_\d+: /, 'names the history entry');

  // what the database holds unique: refused before seeding, or by the database while seeding; never a 500
  const twice = (edit: (fixtures: any) => void) => {
    const fixtures = JSON.parse(JSON.stringify(server.ctx.fixtures));
    edit(fixtures);
    return call(`${server.url}/_emulator/sessions`, 'POST', { fixtures });
  };
  const sameExternalId = await twice((fixtures) => (fixtures.programmes[0].users[1].externalId = fixtures.programmes[0].users[0].externalId));
  t.equal(sameExternalId.status, 400);
  t.match(sameExternalId.body.message, 'externalId acme-robotics is used by two users of programme prg_sandbox');
  const sameBeneficiary = await twice((fixtures) => (fixtures.programmes[0].beneficiaries[1].id = fixtures.programmes[0].beneficiaries[0].id));
  t.equal(sameBeneficiary.status, 400);
  t.match(sameBeneficiary.body.message, /id ben_\w+ is used twice/);
  const sameCounterparty = await twice((fixtures) => {
    const [first, second] = fixtures.programmes[0].beneficiaries;
    first.counterpartyId = 'cp_shared';
    second.counterpartyId = 'cp_shared';
  });
  t.equal(sameCounterparty.status, 400, sameCounterparty.text.slice(0, 300));
  t.match(sameCounterparty.body.message, /^the fixtures cannot be seeded: UNIQUE constraint failed/);

  // the server's fixtures at a clock before their own dates: a 400 on clock
  const early = await call(`${server.url}/_emulator/sessions`, 'POST', { clock: '1900-01-01T00:00:00Z' });
  t.equal(early.status, 400);
  t.same(early.body.validationErrors.map((item: { fieldRef: string }) => item.fieldRef), ['clock']);
  t.match(early.body.message, /^the fixtures cannot be seeded at clock 1900-01-01T00:00:00Z: .*is in the future/);

  const over = await call(`${server.url}/_emulator/sessions`, 'POST', { fixtures: withHistory(201) });
  t.equal(over.status, 400);
  t.same(over.body.validationErrors.map((item: { fieldRef: string }) => item.fieldRef), ['fixtures']);
  t.match(over.body.message, 'fixtures for a session hold 201 history entries in all, more than the 200 a session may start with');
  const manyUsers = JSON.parse(JSON.stringify(server.ctx.fixtures));
  const someone = manyUsers.programmes[0].users[0];
  for (let i = 0; manyUsers.programmes.reduce((sum: number, each: { users: unknown[] }) => sum + each.users.length, 0) <= 1_000; i++) {
    manyUsers.programmes[0].users.push({ ...someone, id: `usr_given_${i}`, externalId: `given-${i}` });
  }
  const users = await call(`${server.url}/_emulator/sessions`, 'POST', { fixtures: manyUsers });
  t.equal(users.status, 400);
  t.match(users.body.message, 'fixtures for a session hold 1001 users in all, more than the 1000 a session may start with');
  t.same((await call(`${server.url}/_emulator/sessions`)).body.data, [], 'no session was created by a refusal');

  const atBound = await createSession(server, { fixtures: withHistory(200) });
  t.equal(atBound.startedFrom.fixtures, 'given');
  const seeded = await signed(atBound.baseUrl, 'GET', '/v1/transactions?pageSize=25&pageIndex=7');
  t.equal(seeded.status, 200, JSON.stringify(seeded.body).slice(0, 200));
  t.ok(seeded.body.data.length > 0, 'the entries were seeded: the eighth page of 25 has some');
});

tap.test('statement links and the dashboard keep the session prefix', async (t) => {
  const server = await serve();
  t.teardown(() => server.close());
  const session = await createSession(server);
  const statement = await signed(session.baseUrl, 'GET', '/v1/accounts/acct_acme_usd/statement?startDate=2026-02-01&endDate=2026-02-28&format=csv');
  t.equal(statement.status, 200, statement.text);
  t.match(statement.body.url, `${session.baseUrl}/v1/statement-files/`);
  const file = await call(statement.body.url);
  t.equal(file.status, 200);
  t.match(file.headers.get('content-type') ?? '', 'text/csv');

  const page = await call(`${session.baseUrl}/_emulator/ui`);
  t.equal(page.status, 200);
  t.match(page.text, `/_sessions/${session.id}/_emulator/ui/app.js`, 'the page loads its script from the session');
});

tap.test('the live-session limit answers 429 with Retry-After; idle sessions end by themselves', async (t) => {
  // The limit on a server whose sessions do not idle out while the test runs (a loaded machine can take a second to
  // create two); the idle expiry below on one with a 1 s timeout.
  const limited = await serve({ maxSessions: 2, sessionIdleTimeout: 600 });
  t.teardown(() => limited.close());
  const first = await createSession(limited);
  await createSession(limited);
  const refused = await call(`${limited.url}/_emulator/sessions`, 'POST', {});
  t.equal(refused.status, 429);
  t.equal(refused.body.errorCode, 'TOO_MANY_REQUESTS');
  t.match(refused.body.message, '--max-sessions');
  t.match(refused.body.message, 'MAX_SESSIONS', 'it says how to raise the limit');
  const firstRetry = Number(refused.headers.get('retry-after'));
  t.ok(firstRetry >= 1 && firstRetry <= 5, `Retry-After is short before any session ended (${firstRetry} s), not the idle timeout`);
  t.equal((await call(`${limited.url}/_emulator/sessions/${first.id}`, 'DELETE')).status, 204);
  t.ok((await createSession(limited)).id, 'a slot freed by DELETE is usable at once');

  const server = await serve({ maxSessions: 2, sessionIdleTimeout: 1 });
  t.teardown(() => server.close());
  await createSession(server);
  const third = await createSession(server);

  // Keep `third` busy (a request every 100 ms, well inside its 1 s) until the other has idled past the timeout,
  // however long a loaded machine takes to notice; then let `third` idle until it ends too (generous bounds).
  const liveIds = async () => (await call(`${server.url}/_emulator/sessions`)).body.data.map((session: { id: string }) => session.id) as string[];
  // (one assertion over all the keep-alive answers, so the test's check count does not depend on the machine's speed)
  const keptAlive: number[] = [];
  let live = await liveIds();
  for (const deadline = Date.now() + 30_000; live.length > 1 && Date.now() < deadline; live = await liveIds()) {
    keptAlive.push((await call(`${third.baseUrl}/_emulator/health`)).status);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  t.ok(keptAlive.every((status) => status === 200), `the used one answered every keep-alive request (${keptAlive.join(', ')})`);
  t.same(live, [third.id], 'the idle one ended; the used one lives');
  await waitUntil(async () => (await liveIds()).length === 0, 'the used one to end once idle');
  t.same(await liveIds(), [], 'and it ends once idle too');
  const ended = await call(`${third.baseUrl}/_emulator/health`);
  t.equal(ended.status, 404);
  t.match(ended.body.message, 'expired after 1 s');
});

tap.test('--max-sessions 0 turns sessions off', async (t) => {
  const server = await serve({ maxSessions: 0 });
  t.teardown(() => server.close());
  const refused = await call(`${server.url}/_emulator/sessions`, 'POST');
  t.equal(refused.status, 429);
  t.match(refused.body.message, 'turned off');
});

tap.test('the admin token guards session creation and each session\'s control plane', async (t) => {
  const server = await serve({ adminToken: 'let-me-in' });
  t.teardown(() => server.close());
  t.equal((await call(`${server.url}/_emulator/sessions`, 'POST', {})).status, 401);
  const made = await call(`${server.url}/_emulator/sessions`, 'POST', {}, { 'x-admin-token': 'let-me-in' });
  t.equal(made.status, 201);
  t.equal((await call(`${made.body.baseUrl}/_emulator/clock`)).status, 401);
  t.equal((await call(`${made.body.baseUrl}/_emulator/clock`, 'GET', undefined, { 'x-admin-token': 'let-me-in' })).status, 200);
  t.equal((await signed(made.body.baseUrl, 'GET', '/v1/accounts')).status, 200, '/v1 takes API credentials as usual');
});

tap.test('ids: sessions without a seed never share one; one seed gives byte-identical answers, as --seed does', async (t) => {
  const server = await serve();
  t.teardown(() => server.close());
  const beneficiary = { type: 'PERSON', firstName: 'Sam', lastName: 'Supplier', instruments: [US_BANK] };
  // One journey: a user, a beneficiary, a deposit; every answer's text, in order.
  const journey = async (baseUrl: string) => {
    const texts: string[] = [];
    for (const [method, path, body] of [
      ['POST', '/v1/beneficiaries', beneficiary],
      ['POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '12.00' }],
      ['GET', '/v1/transactions?accountId=acct_acme_usd&pageSize=2', undefined],
      ['GET', '/v1/beneficiaries', undefined],
    ] as const) {
      const answer = await signed(baseUrl, method, path, body);
      t.ok(answer.status < 300, `${method} ${path}: ${answer.status}`);
      texts.push(answer.text.replaceAll(baseUrl, '{base}'));
    }
    return texts;
  };

  const unseeded = await Promise.all(Array.from({ length: 16 }, () => createSession(server, { label: 'ids' })));
  const idsBySession = await Promise.all(
    unseeded.map(async (session) => {
      const made = await signed(session.baseUrl, 'POST', '/v1/beneficiaries', beneficiary);
      const deposit = await signed(session.baseUrl, 'POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '1.00' });
      return [made.body.id as string, made.body.instruments[0].id as string, deposit.headers.get('location') as string];
    }),
  );
  const all = idsBySession.flat();
  t.equal(new Set(all).size, all.length, '16 parallel sessions without a seed share no id (beneficiaries, instruments, transactions)');
  t.equal((await call(`${server.url}/_emulator/sessions?label=ids`, 'DELETE')).status, 200);

  const [a, b] = [await createSession(server, { seed: 'run-42' }), await createSession(server, { seed: 'run-42' })];
  t.equal(a.startedFrom.seed, 'run-42');
  const [first, second] = [await journey(a.baseUrl), await journey(b.baseUrl)];
  t.same(second, first, 'two sessions with one seed answer byte-identically');
  const other = await createSession(server, { seed: 'run-43' });
  t.not((await journey(other.baseUrl))[0], first[0], 'another seed, other ids');

  const fresh = await serve({ seed: 'run-42' });
  t.teardown(() => fresh.close());
  t.same(await journey(fresh.url), first, 'and as a fresh server started with --seed run-42');

  // A reset starts the session's ids again from the start of its own sequence.
  t.equal((await call(`${a.baseUrl}/_emulator/reset`, 'POST')).status, 200);
  t.same(await journey(a.baseUrl), first, 'after a reset, the same answers again');
});

tap.test('ids: the first unseeded session of two fresh servers hands out different ids; --seed keeps them reproducible', async (t) => {
  const beneficiary = { type: 'PERSON', firstName: 'Sam', lastName: 'Supplier', instruments: [US_BANK] };
  const firstIdOf = async (config: Partial<Config>, body?: unknown) => {
    const server = await serve(config);
    try {
      const session = await createSession(server, body);
      const made = await signed(session.baseUrl, 'POST', '/v1/beneficiaries', beneficiary);
      t.equal(made.status, 201, made.text);
      return made.body.id as string;
    } finally {
      await server.close();
    }
  };
  // docs/sessions.md#ids: without --seed each start draws from a seed of its own, so a service that keeps the ids
  // of one run never sees them again from the next run's first session.
  t.not(await firstIdOf({}), await firstIdOf({}), 'two starts without --seed: different ids');
  t.equal(await firstIdOf({ seed: 'ci-7' }), await firstIdOf({ seed: 'ci-7' }), 'two starts with one --seed: the same ids');
  t.equal(await firstIdOf({}, { seed: 'run-1' }), await firstIdOf({}, { seed: 'run-1' }), 'a session seed: the same ids whatever the start');
});

tap.test('labels: list and end a run\'s sessions at once', async (t) => {
  const server = await serve();
  t.teardown(() => server.close());
  const run1 = await Promise.all([1, 2, 3].map(() => createSession(server, { label: 'ci run 1' })));
  const run2 = await createSession(server, { label: 'ci-run-2' });
  const unlabelled = await createSession(server);
  t.equal(run1[0]!.label, 'ci run 1');
  t.equal(unlabelled.label, null);

  const listed = await call(`${server.url}/_emulator/sessions?label=${encodeURIComponent('ci run 1')}`);
  t.equal(listed.status, 200);
  t.same(listed.body.data.map((session: { id: string }) => session.id).sort(), run1.map((session) => session.id).sort(), 'only the label\'s sessions');
  t.same((await call(`${server.url}/_emulator/sessions?label=nobody`)).body.data, [], 'no session has that label');
  t.equal((await call(`${server.url}/_emulator/sessions`)).body.data.length, 5, 'without label: every session');

  const ended = await call(`${server.url}/_emulator/sessions?label=${encodeURIComponent('ci run 1')}`, 'DELETE');
  t.equal(ended.status, 200);
  t.same([...ended.body.ended].sort(), run1.map((session) => session.id).sort(), 'it names the sessions it ended');
  for (const session of run1) t.equal((await call(`${session.baseUrl}/_emulator/health`)).status, 404, 'ended');
  t.same(
    (await call(`${server.url}/_emulator/sessions`)).body.data.map((session: { id: string }) => session.id).sort(),
    [run2.id, unlabelled.id].sort(),
    'the others live',
  );
  t.same((await call(`${server.url}/_emulator/sessions?label=${encodeURIComponent('ci run 1')}`, 'DELETE')).body, { ended: [] }, 'again: nothing left to end');

  const noLabel = await call(`${server.url}/_emulator/sessions`, 'DELETE');
  t.equal(noLabel.status, 400, 'DELETE without a label ends nothing');
  t.match(noLabel.body.validationErrors[0].fieldRef, 'label');
  t.equal((await call(`${server.url}/_emulator/sessions?label=${'x'.repeat(129)}`)).status, 400, 'a label over 128 characters');
  t.equal((await call(`${server.url}/_emulator/sessions`)).body.data.length, 2, 'nothing ended by a refusal');
});

tap.test('Retry-After follows how long the ended sessions lived', async (t) => {
  const server = await serve({ maxSessions: 2 });
  t.teardown(() => server.close());
  for (let round = 0; round < 3; round += 1) {
    const session = await createSession(server);
    t.equal((await call(`${server.url}/_emulator/sessions/${session.id}`, 'DELETE')).status, 204);
  }
  await createSession(server);
  await createSession(server);
  const refused = await call(`${server.url}/_emulator/sessions`, 'POST', {});
  t.equal(refused.status, 429);
  t.equal(refused.headers.get('retry-after'), '1', 'sessions end within a second here: retry in one');
});

tap.test('sessions with their own clock or fixtures: later ones open the image of the first and start as it did', async (t) => {
  const server = await serve();
  t.teardown(() => server.close());
  const clock = '2027-01-15T08:30:00.000Z';
  const sessions = [];
  for (let index = 0; index < 4; index += 1) {
    sessions.push(await createSession(server, { clock }));
  }
  const statesOf = async (baseUrl: string) => [
    (await signed(baseUrl, 'GET', '/v1/accounts')).text,
    (await signed(baseUrl, 'GET', '/v1/transactions?pageSize=100')).text,
  ];
  const first = await statesOf(sessions[0]!.baseUrl);
  for (const session of sessions) {
    t.equal((await call(`${session.baseUrl}/_emulator/clock`)).body.now, clock, 'each starts at its clock');
    t.equal(session.startedFrom.clock, clock);
    t.same(await statesOf(session.baseUrl), first, 'each starts as the first did');
  }
  const fixtures = JSON.parse(JSON.stringify(server.ctx.fixtures));
  fixtures.programmes[0].apiKeys = fixtures.programmes[0].apiKeys.map((key: { apiKey: string; secret: string }) => ({ ...key, secret: `${key.secret}_3` }));
  for (let index = 0; index < 3; index += 1) {
    const custom = await createSession(server, { fixtures });
    t.equal(custom.credentials.single.secret, 'sk_sandbox_single_secret_3');
    t.equal(custom.startedFrom.fixtures, 'given');
  }
});
