import t from 'tap';
import type { FastifyPluginAsync } from 'fastify';
import { parse } from 'csv-parse/sync';
import { buildTestApp, json } from '../helper.js';
import { ACCOUNT, PERIOD, STATEMENT_TEST_START, seedStatementScenario } from '../helpers/statements.js';
import { createUser, startEnrollment, writeEntries } from '../helpers/onboarding.js';
import { documentValue, makePdf } from '../helpers/pdf.js';
import { requestStatement } from '../../src/domains/statements/statements.service.js';
import { playStep } from '../../src/emulator/scenario-play.service.js';
import { injectTransport } from '../../src/emulator/scenario-transport.js';
import { resetSandbox } from '../../src/emulator/reset.service.js';
import { clockMoveUnderWay, holdSandbox, stateReplacements } from '../../src/scheduler/scheduler.js';
import { settleSandbox } from '../../src/emulator/settle.service.js';
import type { AppContext } from '../../src/context.js';

// docs/control-plane.md#a-write-after-a-wait: a handler that waited on something of its own (a statement rendered,
// documents parsed, a scenario's step played) writes only once no hold of its sandbox is under way, and a reset or
// restore that replaced the state meanwhile is noticed: the statement is rendered again from the new state, the
// step is refused. Each hold here is taken by hand while the handler waits, and let go by hand, so nothing depends
// on how fast the machine is; the hold's own work resets the sandbox at its end, as a restore taking turns writes its
// rows before it lets go.

/** A hold on the sandbox that resets it once `release` is called. */
function heldReset(ctx: AppContext): { release: () => void; hold: Promise<void> } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const hold = holdSandbox(ctx, async () => {
    await released;
    resetSandbox(ctx);
  });
  return { release, hold };
}

/** Whether `promise` has settled after a few turns of the event loop (it would have, were it not waiting). */
async function settledSoon(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < 20 && !settled; i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
  return settled;
}

const filesStored = (ctx: AppContext) => ctx.db.prepare('SELECT COUNT(*) FROM statement_files').pluck().get() as number;

t.test('a statement rendered while a reset replaces the state is stored after it, rendered again from the new state', async (t) => {
  const sandbox = await buildTestApp({ start: STATEMENT_TEST_START });
  t.teardown(sandbox.close);
  const { ctx } = sandbox;
  seedStatementScenario(ctx);
  const caller = ctx.db
    .prepare('SELECT u.programme_id AS programmeId, u.id AS userId FROM accounts a JOIN users u ON u.id = a.user_id WHERE a.id = ?')
    .get(ACCOUNT) as { programmeId: string; userId: string };
  const query = { startDate: PERIOD.startDate, endDate: PERIOD.endDate, format: 'csv' as const };
  const rowsBefore = (await requestStatement(ctx, caller, ACCOUNT, { ...query, format: 'json' as const }, 'http://localhost')) as { days: Array<{ entries: unknown[] }> };
  const entriesBefore = rowsBefore.days.flatMap((day) => day.entries).length;
  t.ok(entriesBefore > 0, 'the seeded period has entries');
  const replacedBefore = stateReplacements(ctx);

  // the statement is built and its rendering under way (the function has reached its first wait): a reset holds the sandbox
  const statement = requestStatement(ctx, caller, ACCOUNT, query, 'http://localhost');
  const { release, hold } = heldReset(ctx);
  t.equal(await settledSoon(statement), false, 'the rendered file is not stored while the hold is under way');
  t.equal(filesStored(ctx), 0, 'nothing was written');

  release();
  await hold;
  t.equal(stateReplacements(ctx), replacedBefore + 1, 'the reset counted as a replacement of the state');
  const link = (await statement) as { url: string };
  t.equal(filesStored(ctx), 1, 'one file, stored after the reset');
  const file = await sandbox.app.inject({ method: 'GET', url: new URL(link.url).pathname + new URL(link.url).search });
  t.equal(file.statusCode, 200);
  const rows = parse(file.body, { columns: true }) as unknown[];
  const after = (await requestStatement(ctx, caller, ACCOUNT, { ...query, format: 'json' as const }, 'http://localhost')) as { days: Array<{ entries: unknown[] }> };
  t.equal(rows.length, after.days.flatMap((day) => day.entries).length, "the file is the reset state's statement");
  t.not(rows.length, entriesBefore, "not the one of the state the reset replaced (the seeded entries are gone)");
});

t.test('a scenario step played while a reset replaces the state: a 409, nothing recorded, and it plays again after', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const scenario = `name: one-read
seed: one-read
clock: 2026-04-01T09:00:00Z
given:
  users:
    - as: northwind
      type: BUSINESS
      name: Northwind Traders Inc
      accounts:
        - { as: usd, currency: USD, balance: "100.00" }
steps:
  - caption: Read the account
    request: { method: GET, path: "/v1/accounts/\${usd.id}", as: northwind }
    expect: { status: 200, body: { balances.available: "100.00" } }
`;
  const created = await sandbox.app.inject({ method: 'POST', url: '/_emulator/sessions', payload: { scenario } });
  t.equal(created.statusCode, 201, created.body);
  const id = json(created).id as string;
  const prefix = `/_sessions/${id}`;
  const ctx = sandbox.sessions.get(id)!.sandbox.ctx;

  // the step's first request is on its way (the function has reached its first wait): a reset holds the session
  const step = playStep(ctx, injectTransport(sandbox.app, { prefix, adminToken: ctx.config.adminToken }), 1);
  const { release, hold } = heldReset(ctx);
  t.equal(await settledSoon(step), false, "the step's request waits for the hold");
  release();
  await hold;
  const refused = await step.then(
    () => null,
    (error: unknown) => error,
  );
  t.match(refused, { statusCode: 409, message: /^The sandbox was reset or restored while step 1 of the scenario one-read ran, so the step is not recorded/ });
  t.equal(clockMoveUnderWay(ctx), null);

  const play = json(await sandbox.app.inject({ method: 'GET', url: `${prefix}/_emulator/scenario` }));
  t.match(play, { completed: 0, next: 1, finished: false }, 'the play is where the reset left it');
  const again = await sandbox.app.inject({ method: 'POST', url: `${prefix}/_emulator/scenario/steps/1` });
  t.equal(again.statusCode, 200, again.body);
  t.match(json(again), { scenario: { completed: 1, finished: true } }, 'and the step plays from there');
});

t.test('information request entries whose documents are read while a reset holds the sandbox: written after it, against its state', async (t) => {
  // a hook after the app's gate takes the hold while the entries' request is already past it, as a request whose
  // handler had started when a restore began (it then parses its PDF)
  let holding: { release: () => void; hold: Promise<void> } | undefined;
  const holdOnEntries: FastifyPluginAsync = async (app) => {
    app.addHook('preHandler', async (request) => {
      if (request.method === 'POST' && request.url.endsWith('/entries') && !holding) holding = heldReset(sandbox.ctx);
    });
  };
  (holdOnEntries as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true; // the hook applies to every route
  const sandbox = await buildTestApp({ plugins: [holdOnEntries] });
  t.teardown(sandbox.close);
  const { as } = await createUser(sandbox, 'PERSON', 'Ada Waiting');
  const requestId = await startEnrollment(sandbox, as);

  const written = writeEntries(sandbox, as, requestId, [{ key: 'identityDocument', value: documentValue(await makePdf(), 'passport.pdf') }]);
  for (let i = 0; i < 200 && !holding; i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
  t.ok(holding, 'the hold was taken after the request passed the gate');
  t.equal(await settledSoon(written), false, 'the entries are not written while the hold is under way');
  holding!.release();
  await holding!.hold;
  const response = await written;
  t.equal(response.statusCode, 404, 'written after the reset: the request checks the state it finds, where the user and its request are gone');
  t.equal(sandbox.ctx.db.prepare('SELECT COUNT(*) FROM information_requests WHERE id = ?').pluck().get(requestId), 0);
});

t.test('settle whose deadline passes while a save holds the sandbox half way answers after the hold, never half written', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const { ctx } = sandbox;
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  // a save taking turns: its read transaction stays open between them
  const hold = holdSandbox(ctx, async () => {
    ctx.db.exec('SAVEPOINT half_way');
    await released;
    ctx.db.exec('RELEASE half_way');
  });
  const settled = settleSandbox(ctx, 1);
  t.equal(await settledSoon(settled), false, 'past its 1 ms deadline, settle still waits for the hold');
  release();
  await hold;
  const report = await settled;
  t.equal(report.settled, true, 'and then reports the whole state');
  t.ok(report.waitedMs >= 1, `it waited ${report.waitedMs} ms`);
});
