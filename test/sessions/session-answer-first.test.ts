import t from 'tap';
import { readFileSync } from 'node:fs';
import { buildTestApp, json, type TestApp } from '../helper.js';
import { DEFAULT_FIXTURES } from '../../src/config.js';
import { createContext } from '../../src/create-context.js';
import { openSandbox } from '../../src/sandbox.js';
import { createSessionRegistry, type Session } from '../../src/sessions/sessions.registry.js';

// docs/sessions.md#how-fast: a session that opens a database image (the server's fixtures or given ones met before, a
// snapshot's kept database) is answered before its database opens, which then opens in the same turn; what the answer
// says of it (its clock, where it sends, its credentials) is what the opened session has.

async function created(sandbox: TestApp, body: Record<string, unknown>) {
  const response = await sandbox.app.inject({ method: 'POST', url: '/_emulator/sessions', payload: body });
  t.equal(response.statusCode, 201, response.body);
  return json(response);
}

t.test('the answer built before the database opens says what the opened session has', async (t) => {
  const sandbox = await buildTestApp({ config: { maxSessions: 20 } });
  t.teardown(sandbox.close);
  const fixtures = JSON.parse(readFileSync(DEFAULT_FIXTURES, 'utf8'));
  fixtures.programmes[0].name = 'Given Programme';
  await created(sandbox, {}); // the first of the server's fixtures takes the image the others open
  await created(sandbox, { fixtures }); // and the first of these fixtures theirs
  t.equal((await sandbox.app.inject({ method: 'POST', url: '/_emulator/clock', payload: { advanceMs: 90_000 } })).statusCode, 200);
  t.equal((await sandbox.app.inject({ method: 'POST', url: '/_emulator/snapshots', payload: { name: 'frozen' } })).statusCode, 201);
  t.equal((await sandbox.app.inject({ method: 'POST', url: '/_emulator/clock', payload: { realtime: true } })).statusCode, 200);
  t.equal((await sandbox.app.inject({ method: 'POST', url: '/_emulator/snapshots', payload: { name: 'flowing' } })).statusCode, 201);
  await created(sandbox, { snapshot: 'frozen' }); // the first session of each snapshot keeps its image
  await created(sandbox, { snapshot: 'flowing' });

  const cases: Array<[string, Record<string, unknown>]> = [
    ['the defaults', {}],
    ['its own clock', { clock: '2026-06-01T08:30:00.123Z' }],
    ['a flowing clock', { clock: 'realtime' }],
    ['a webhook URL and a seed', { webhookUrl: 'http://127.0.0.1:9/hooks', seed: 'answered-first', label: 'first' }],
    ['given fixtures met before', { fixtures }],
    ['a snapshot of a frozen clock', { snapshot: 'frozen', webhookUrl: 'http://127.0.0.1:9/other' }],
    ['a snapshot of a flowing clock', { snapshot: 'flowing' }],
  ];
  for (const [name, body] of cases) {
    const answer = await created(sandbox, body);
    const session = sandbox.sessions.get(answer.id)!;
    t.ok(session.opened, `${name}: open once the create has answered`);
    const listed = json(await sandbox.app.inject({ method: 'GET', url: `/_emulator/sessions/${answer.id}` }));
    t.same({ ...answer, lastUsedAt: null, expiresAt: null }, { ...listed, lastUsedAt: null, expiresAt: null }, `${name}: the answer is what the session says of itself once open`);
    const clock = json(await sandbox.app.inject({ method: 'GET', url: `/_sessions/${answer.id}/_emulator/clock` }));
    if (answer.startedFrom.clock === 'realtime') t.equal(clock.mode, 'realtime', `${name}: a flowing clock`);
    else t.match(clock, { mode: 'frozen', now: answer.startedFrom.clock }, `${name}: its clock is where the answer says`);
    const programme = json(await sandbox.app.inject({ method: 'GET', url: `/_sessions/${answer.id}/_emulator/webhooks/endpoint` }));
    t.equal(programme.endpoints?.[0]?.url ?? null, answer.webhookUrl, `${name}: it sends where the answer says`);
    t.equal(answer.credentials.programmeId, sandbox.sessions.get(answer.id)!.sandbox.ctx.fixtures.programmes[0]!.id);
  }
});

t.test('the registry answers before it opens an image, and opens it in the same turn', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const seen: Array<{ opened: boolean }> = [];
  const note = (session: Session) => seen.push({ opened: session.opened });
  const first = await sandbox.sessions.create({}, note); // no image yet: opened, then answered
  const second = await sandbox.sessions.create({}, note); // the image: answered, then opened
  t.same(seen, [{ opened: true }, { opened: false }]);
  t.ok(second.opened, 'open when create resolves');
  t.equal(second.sandbox.ctx.db.open, true);
  t.not(second.sandbox.ctx.db, first.sandbox.ctx.db, 'a database of its own');
  t.equal((await sandbox.app.inject({ method: 'GET', url: `/_sessions/${second.id}/v1/accounts/acct_acme_usd`, headers: sandbox.sign('GET', `/_sessions/${second.id}/v1/accounts/acct_acme_usd`) })).statusCode, 200);
});

t.test('a session whose database fails to open after its answer is gone: its next request is a 404', async (t) => {
  const root = createContext({ config: { logLevel: 'silent' } });
  t.teardown(() => root.db.close());
  let opens = 0;
  const registry = createSessionRegistry(root, (options) => {
    opens += 1;
    if (opens === 2) throw new Error('the disk is on fire');
    return openSandbox(options);
  });
  t.teardown(() => registry.close());
  await registry.create({}, () => undefined); // the first: opened before its answer, and it takes the image
  let answered: Session | undefined;
  await t.rejects(
    registry.create({}, (session) => {
      answered = session;
    }),
    /the disk is on fire/,
  );
  t.ok(answered, 'it was answered first');
  t.equal(registry.get(answered!.id), undefined, 'and is no longer listed');
  t.equal(registry.list().length, 1);
});
