import t, { type Test } from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import { errorBodySchema } from '../../../src/core/errors.js';
import { AS_OTHER, CREDENTIALS, START, buildTestApp, json, type Identity, type TestApp } from '../../helper.js';

// POST /v1/auth/users (docs/decisions.md#users-create) and GET /v1/users (interface 4.11).

const MULTI: Identity = { apiKey: CREDENTIALS.multi.apiKey, secret: CREDENTIALS.multi.secret };
const OTHER_PROGRAMME: Identity = { apiKey: AS_OTHER.apiKey, secret: AS_OTHER.secret, programmeId: AS_OTHER.programmeId };

function expectError(t: Test, response: LightMyRequestResponse, status: number, errorCode: string | undefined): Record<string, any> {
  t.equal(response.statusCode, status, `status ${status}`);
  const body = json(response);
  t.ok(errorBodySchema.safeParse(body).success, 'interface 7.1 error body');
  t.equal(body.errorCode, errorCode);
  return body;
}

/**
 * Interface 4.11: a user appears once its enrollment has started (set directly here; the enrollment tests start it over
 * HTTP).
 */
function startEnrollment(sandbox: TestApp, userId: string): void {
  sandbox.ctx.db.prepare('UPDATE users SET enrollment_started_at = ? WHERE id = ?').run(sandbox.ctx.clock.nowIso(), userId);
}

function userIds(response: LightMyRequestResponse): string[] {
  return json(response).data.map((user: { userId: string }) => user.userId);
}

t.test('POST /v1/auth/users', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const ann = { externalId: 'ext-ann-1', type: 'PERSON', name: 'Ann Example', email: 'ann@example.com' };

  const created = await sandbox.request('POST', '/v1/auth/users', ann, MULTI);
  t.equal(created.statusCode, 201);
  const user = json(created);
  t.match(user.userId, /^usr_[0-9a-z]{16}$/);
  t.same(user, {
    userId: user.userId,
    externalId: 'ext-ann-1',
    type: 'PERSON',
    name: 'Ann Example',
    email: 'ann@example.com',
    enrollmentStatus: 'INACTIVE',
    createdAt: START,
    updatedAt: START,
  });

  t.test('the same externalId returns the existing user with 200 and creates nothing', async (t) => {
    const again = await sandbox.request('POST', '/v1/auth/users', ann, MULTI);
    t.equal(again.statusCode, 200);
    t.same(json(again), user, 'the stored user');
    // docs/decisions.md#users-create: with another name or type it is a conflict (deliberate change)
    const other = await sandbox.request('POST', '/v1/auth/users', { ...ann, name: 'Another Name', type: 'BUSINESS' }, MULTI);
    expectError(t, other, 409, 'INVALID_REQUEST');
    const count = sandbox.ctx.db.prepare("SELECT COUNT(*) AS n FROM users WHERE external_id = 'ext-ann-1'").get() as { n: number };
    t.equal(count.n, 1);
  });

  t.test('email is optional and absent (not null) when not given', async (t) => {
    const response = await sandbox.request('POST', '/v1/auth/users', { externalId: 'biz-1', type: 'BUSINESS', name: 'Biz Ltd' }, MULTI);
    t.equal(response.statusCode, 201);
    t.notOk('email' in json(response));
    t.notOk('enrollmentStatusReason' in json(response));
  });

  t.test('the same externalId in another programme is another user', async (t) => {
    const response = await sandbox.request('POST', '/v1/auth/users', ann, OTHER_PROGRAMME);
    t.equal(response.statusCode, 201);
    t.not(json(response).userId, user.userId);
  });

  t.test('a SINGLE_USER key may not create users', async (t) => {
    const body = expectError(t, await sandbox.request('POST', '/v1/auth/users', { ...ann, externalId: 'ext-2' }), 403, 'SINGLE_USER_KEY_NOT_ALLOWED');
    t.match(body.message, /MULTI_USER/);
    const count = sandbox.ctx.db.prepare("SELECT COUNT(*) AS n FROM users WHERE external_id = 'ext-2'").get() as { n: number };
    t.equal(count.n, 0);
  });

  t.test('validation errors name the field and say what is accepted', async (t) => {
    const cases: Array<[unknown, Array<{ type: string; fieldRef: string }>]> = [
      [{}, [
        { type: 'MissingValue', fieldRef: 'externalId' },
        { type: 'MissingValue', fieldRef: 'type' },
        { type: 'MissingValue', fieldRef: 'name' },
      ]],
      [{ ...ann, type: 'ROBOT' }, [{ type: 'InvalidValue', fieldRef: 'type' }]],
      [{ ...ann, email: 'not-an-email' }, [{ type: 'InvalidFormat', fieldRef: 'email' }]],
      [{ ...ann, externalId: 'x'.repeat(129) }, [{ type: 'InvalidValue', fieldRef: 'externalId' }]],
      [{ ...ann, externalId: '' }, [{ type: 'InvalidValue', fieldRef: 'externalId' }]],
      [{ ...ann, name: '   ' }, [{ type: 'InvalidValue', fieldRef: 'name' }]],
      [{ ...ann, name: 'n'.repeat(201) }, [{ type: 'InvalidValue', fieldRef: 'name' }]],
      [{ ...ann, name: 42 }, [{ type: 'InvalidFormat', fieldRef: 'name' }]],
      [{ ...ann, nickname: 'Annie' }, [{ type: 'InvalidValue', fieldRef: 'nickname' }]],
    ];
    for (const [payload, expected] of cases) {
      const response = await sandbox.request('POST', '/v1/auth/users', payload, MULTI);
      const body = expectError(t, response, 400, undefined);
      t.match(body.validationErrors, expected, JSON.stringify(payload).slice(0, 60));
      t.equal(body.validationErrors.length, expected.length);
      for (const item of body.validationErrors) t.match(item.message, new RegExp(item.fieldRef), 'the message names the field');
    }
    const typeError = json(await sandbox.request('POST', '/v1/auth/users', { ...ann, type: 'ROBOT' }, MULTI));
    t.match(typeError.validationErrors[0].message, /PERSON/, 'an enum failure lists the accepted values');

    const noBody = expectError(t, await sandbox.request('POST', '/v1/auth/users', undefined, MULTI), 400, undefined);
    t.equal(noBody.validationErrors[0].type, 'MissingRequestBody');
    const array = expectError(t, await sandbox.request('POST', '/v1/auth/users', [ann], MULTI), 400, undefined);
    t.ok(array.validationErrors.length > 0);
    const count = sandbox.ctx.db.prepare('SELECT COUNT(*) AS n FROM users').get() as { n: number };
    t.equal(count.n, 6, 'fixtures (3) + ann + biz + ann in prg_other; no failed request wrote a row');
  });
});

t.test('GET /v1/users', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);

  const initial = await sandbox.request('GET', '/v1/users', undefined, MULTI);
  t.equal(initial.statusCode, 200);
  t.same(userIds(initial), ['usr_jane', 'usr_acme'], 'newest first');
  t.match(json(initial), { pageIndex: 0, pageSize: 25, totalRecords: 2 });
  t.match(json(initial).data[0], { userId: 'usr_jane', externalId: 'jane-doe', type: 'PERSON', name: 'Jane Doe', enrollmentStatus: 'ACTIVE' });

  const first = json(await sandbox.request('POST', '/v1/auth/users', { externalId: 'new-1', type: 'PERSON', name: 'New One' }, MULTI)).userId;
  const second = json(await sandbox.request('POST', '/v1/auth/users', { externalId: 'new-2', type: 'BUSINESS', name: 'New Two' }, MULTI)).userId;
  t.same(userIds(await sandbox.request('GET', '/v1/users', undefined, MULTI)), ['usr_jane', 'usr_acme'], 'not listed before enrollment starts');

  startEnrollment(sandbox, first);
  startEnrollment(sandbox, second);
  const listed = await sandbox.request('GET', '/v1/users', undefined, MULTI);
  // Both were created at the same frozen instant: ties break on id, descending with the newest-first order.
  const newest = [first, second].sort().reverse();
  t.same(userIds(listed), [...newest, 'usr_jane', 'usr_acme']);
  t.equal(json(listed).totalRecords, 4);

  t.test('paging', async (t) => {
    const page = json(await sandbox.request('GET', '/v1/users?pageIndex=1&pageSize=3', undefined, MULTI));
    t.same(page.data.map((u: { userId: string }) => u.userId), ['usr_acme']);
    t.match(page, { pageIndex: 1, pageSize: 3, totalRecords: 4 });
    const beyond = json(await sandbox.request('GET', '/v1/users?pageIndex=9&pageSize=25', undefined, MULTI));
    t.same(beyond.data, []);
    t.equal(beyond.totalRecords, 4);
    for (const bad of ['pageSize=0', 'pageSize=26', 'pageSize=-1', 'pageSize=2.5', 'pageSize=ten', 'pageIndex=-1', 'pageIndex=x']) {
      const body = expectError(t, await sandbox.request('GET', `/v1/users?${bad}`, undefined, MULTI), 400, undefined);
      t.equal(body.validationErrors[0].fieldRef, bad.split('=')[0], bad);
      if (bad.startsWith('pageSize')) t.match(body.validationErrors[0].message, /1-25/, 'says what is accepted');
    }
    t.equal((await sandbox.request('GET', '/v1/users?pageSize=25', undefined, MULTI)).statusCode, 200);
    t.equal((await sandbox.request('GET', '/v1/users?pageSize=1', undefined, MULTI)).statusCode, 200);
  });

  t.test("another programme's users never appear", async (t) => {
    const theirs = await sandbox.request('GET', '/v1/users', undefined, OTHER_PROGRAMME);
    t.same(userIds(theirs), ['usr_other']);
    const ours = userIds(await sandbox.request('GET', '/v1/users?pageSize=25', undefined, MULTI));
    t.notOk(ours.includes('usr_other'));
  });
});

t.test('determinism: same seed, frozen clock and requests give byte-identical responses', async (t) => {
  async function run(seed: string): Promise<string[]> {
    const sandbox = await buildTestApp({ config: { seed } });
    try {
      const bodies: string[] = [];
      const record = async (response: Promise<LightMyRequestResponse>) => bodies.push(`${(await response).statusCode} ${(await response).body}`);
      for (let i = 0; i < 5; i += 1) {
        await record(sandbox.request('POST', '/v1/auth/users', { externalId: `det-${i}`, type: i % 2 ? 'PERSON' : 'BUSINESS', name: `User ${i}` }, MULTI));
      }
      // a replay with the same values (another name would be a 409: docs/decisions.md#users-create)
      await record(sandbox.request('POST', '/v1/auth/users', { externalId: 'det-0', type: 'BUSINESS', name: 'User 0' }, MULTI));
      await record(sandbox.app.inject({ method: 'POST', url: '/_emulator/clock', payload: { advanceMs: 1500 } }));
      await record(sandbox.request('POST', '/v1/auth/users', { externalId: 'det-late', type: 'PERSON', name: 'Late' }, MULTI));
      sandbox.ctx.db.prepare('UPDATE users SET enrollment_started_at = created_at').run();
      await record(sandbox.request('GET', '/v1/users', undefined, MULTI));
      await record(sandbox.request('GET', '/v1/accounts'));
      await record(sandbox.request('GET', '/v1/accounts/acct_acme_usdc'));
      await record(sandbox.app.inject({ method: 'GET', url: '/_emulator/clock' }));
      return bodies.map((body) => body.replace(/"offsetMs":-?\d+(\.\d+)?/, '"offsetMs":<real-clock dependent>'));
    } finally {
      await sandbox.close();
    }
  }
  const a = await run('seed-one');
  const b = await run('seed-one');
  t.same(a, b, 'byte-identical');
  t.ok(a.every((body) => /^20\d /.test(body)), 'every step succeeded');
  const c = await run('seed-two');
  t.not(c[0], a[0], 'another seed gives other ids');
});

t.test('POST /v1/auth/users needs the key\'s enrollment:write entitlement (docs/decisions.md#users-create)', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const readonly: Identity = { apiKey: 'pk_sandbox_readonly', secret: 'sk_sandbox_readonly_secret' };
  const count = () => (sandbox.ctx.db.prepare('SELECT COUNT(*) AS n FROM users').get() as { n: number }).n;
  const before = count();
  const refused = await sandbox.request('POST', '/v1/auth/users', { externalId: 'ext-readonly-1', type: 'PERSON', name: 'Read Only' }, readonly);
  const body = expectError(t, refused, 403, 'FORBIDDEN');
  t.match(body.message, /^API key lacks entitlement: this endpoint needs enrollment:write/);
  t.equal(count(), before, 'nothing created');
  // The same key still reads the programme's users; a key with the entitlement creates.
  t.equal((await sandbox.request('GET', '/v1/users', undefined, readonly)).statusCode, 200, 'a read needs no scope');
  t.equal((await sandbox.request('POST', '/v1/auth/users', { externalId: 'ext-readonly-1', type: 'PERSON', name: 'Read Only' }, MULTI)).statusCode, 201);
  t.equal(count(), before + 1);
});
