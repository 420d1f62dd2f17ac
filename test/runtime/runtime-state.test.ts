// What a sandbox holds in memory (docs/architecture.md#runtime): every runtime slot is declared by one module's
// descriptor, and a reset, a new session and a snapshot restore each do to it what the declaration and the docs say
// (docs/faults.md#lifetime, docs/faults.md#reset-sessions-and-snapshots, docs/sessions.md, docs/decisions.md#reset).
// The table below has one row per slot: a slot added without a row (or without a descriptor) fails this file.
import t, { type Test } from 'tap';
import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { buildTestApp } from '../helper.js';
import { createTestDeposit, startReceiver, type Receiver } from '../helpers/receiver.js';
import { waitUntil } from '../helpers/wait.js';
import { byJobType, jobHandlers, modules, stateSlots } from '../../src/modules.js';
import { SandboxRuntime, type StateSlot } from '../../src/runtime/sandbox-runtime.js';
import type { DomainDescriptor } from '../../src/domains/domain.js';
import { configSchema } from '../../src/config.js';
import type { AppContext } from '../../src/context.js';
import { resetImageSlot, resetSandbox } from '../../src/emulator/reset.service.js';
import { getSnapshot, listSnapshots, restoreNamedSnapshot, saveSnapshot } from '../../src/emulator/snapshots.service.js';
import { setStartingSnapshot, startingSnapshot } from '../../src/snapshots/snapshot.js';
import { snapshotTrackingSlot } from '../../src/snapshots/snapshots.tracking.js';
import { journalSlot } from '../../src/emulator/journal.service.js';
import { uiEvents, uiEventsSlot } from '../../src/emulator/dashboard.events.js';
import { getDemoState } from '../../src/emulator/demo.service.js';
import { beginPlay, savePlay, scenarioPlaySlot } from '../../src/emulator/scenario-play.service.js';
import { findScenario } from '../../src/emulator/scenario-library.js';
import { addFaultRule, listFaultRules } from '../../src/faults/fault-rules.service.js';
import { getWebhookChaos, putWebhookChaos } from '../../src/faults/webhook-chaos.service.js';
import { outboxSlot } from '../../src/domains/webhooks/outbox.js';
import { senderSlot } from '../../src/domains/webhooks/webhooks.sender.js';
import { startWebhookDispatcher, webhookDispatcherOf, type WebhookDispatcher } from '../../src/domains/webhooks/webhooks.dispatcher.js';
import { deliveryInterceptorSlot } from '../../src/domains/webhooks/webhooks.interceptor.js';
import { deliveryTransportSlot } from '../../src/domains/webhooks/webhooks.transport.js';
import { connectListener, listenStatus } from '../../src/emulator/listen.service.js';
import { pinSessionWebhookUrl, sessionWebhookUrl } from '../../src/domains/webhooks/webhooks.endpoints.js';
import { listReaderSlot, listTransactionsJson } from '../../src/domains/transactions/transactions-list.service.js';
import { listTransactionsQuery } from '../../src/domains/transactions/transactions.schema.js';
import { clockMoveSlot, jobsTimerSlot } from '../../src/scheduler/scheduler.js';

interface SlotCase {
  /** What POST /_emulator/reset does to it, as the docs say: kept as it is, or cleared (as a new sandbox has it). */
  reset: 'kept' | 'cleared';
  /** What a new session starts with: what a new sandbox has (`fresh`), or what its creator gives (`given`). */
  session: 'fresh' | 'given';
  /** Wiring made with the sandbox (no touch changes it). */
  wiring?: true;
  /** A comparable view of what the slot holds. */
  probe(ctx: AppContext): unknown;
}

const CASES: Record<string, SlotCase> = {
  'faults.rules': { reset: 'cleared', session: 'fresh', probe: (ctx) => listFaultRules(ctx).map((rule) => rule.id) },
  'faults.webhookChaos': { reset: 'cleared', session: 'fresh', probe: (ctx) => getWebhookChaos(ctx) },
  'emulator.snapshots': { reset: 'kept', session: 'fresh', probe: (ctx) => listSnapshots(ctx).map((snapshot) => snapshot.name) },
  'emulator.startingSnapshot': { reset: 'kept', session: 'given', probe: (ctx) => startingSnapshot(ctx)?.name ?? null },
  'emulator.snapshotTracking': { reset: 'kept', session: 'fresh', probe: (ctx) => ctx.runtime.get(snapshotTrackingSlot).tracking !== null },
  'emulator.resetImage': { reset: 'kept', session: 'fresh', probe: (ctx) => imageOf(ctx) },
  'emulator.journal': { reset: 'kept', session: 'fresh', probe: (ctx) => ctx.runtime.get(journalSlot).all().map((entry) => `${entry.method} ${entry.path}`) },
  'emulator.uiEvents': { reset: 'kept', session: 'fresh', probe: (ctx) => ctx.runtime.get(uiEventsSlot)?.open() ?? 'no streams' },
  'emulator.scenarioPlay': { reset: 'kept', session: 'fresh', probe: (ctx) => ctx.runtime.get(scenarioPlaySlot).runningStep !== null },
  'webhooks.outbox': { reset: 'kept', session: 'fresh', probe: (ctx) => ctx.runtime.get(outboxSlot).subscriber !== null },
  'webhooks.sender': { reset: 'kept', session: 'fresh', probe: (ctx) => ctx.runtime.get(senderSlot).listeners.size },
  'webhooks.dispatcher': { reset: 'kept', session: 'fresh', probe: (ctx) => webhookDispatcherOf(ctx) !== undefined },
  'webhooks.deliveryInterceptor': { reset: 'kept', session: 'fresh', wiring: true, probe: (ctx) => ctx.runtime.get(deliveryInterceptorSlot).interceptor !== null },
  'webhooks.sessionUrl': { reset: 'kept', session: 'given', probe: (ctx) => sessionWebhookUrl(ctx) ?? String(sessionWebhookUrl(ctx)) },
  'webhooks.deliveryTransport': { reset: 'kept', session: 'fresh', wiring: true, probe: (ctx) => ctx.runtime.get(deliveryTransportSlot).transport !== null },
  'emulator.listen': { reset: 'cleared', session: 'fresh', probe: (ctx) => listenStatus(ctx) },
  'emulator.jobsTimer': { reset: 'kept', session: 'fresh', wiring: true, probe: (ctx) => ctx.runtime.get(jobsTimerSlot).wake !== null },
  'emulator.clockMove': { reset: 'kept', session: 'fresh', probe: (ctx) => ctx.runtime.get(clockMoveSlot).underWay !== null },
  'transactions.listReader': { reset: 'kept', session: 'fresh', probe: (ctx) => ctx.runtime.get(listReaderSlot).run !== null },
};

function imageOf(ctx: AppContext): unknown {
  const kept = ctx.runtime.get(resetImageSlot);
  return kept === null ? 'no image' : { webhookUrl: kept.webhookUrl ?? 'not pinned', rows: kept.image.tables.length };
}

function probeAll(ctx: AppContext): Record<string, unknown> {
  return Object.fromEntries(Object.entries(CASES).map(([name, slotCase]) => [name, JSON.parse(JSON.stringify(slotCase.probe(ctx)))]));
}

/** An open dashboard stream, as ui-events.ts sees one. */
function fakeStream(): ServerResponse {
  return { writeHead: () => undefined, write: () => true, once: () => undefined, end: () => undefined } as unknown as ServerResponse;
}

/**
 * Put something in every slot (and a demo step and a delivery in the database): a reset image, a saved snapshot (so
 * tracking), the starting snapshot, demo progress, a fault rule, a pinned webhook URL, a running dispatcher, chaos
 * with one attempt held, a journal entry, a dashboard stream, a step "running", the list's reader.
 */
async function touchEverything(t: Test, sandbox: { ctx: AppContext; app: FastifyInstance; prefix?: string }, receiver: Receiver): Promise<void> {
  const { ctx, app, prefix = '' } = sandbox;
  resetSandbox(ctx); // the first reset keeps the fixtures' image
  await saveSnapshot(ctx, 'touched');
  setStartingSnapshot(ctx, getSnapshot(ctx, 'touched'));
  // a played step's progress, in the database (docs/sessions.md#playing-a-scenario): the demo started, one step done
  savePlay(ctx, { ...beginPlay(ctx, findScenario(ctx.config, 'demo').loaded, 'shipped'), completed: 1 });
  t.equal(getDemoState(ctx).completed, 1, 'demo progress, in the database');
  addFaultRule(ctx, { match: { path: '/v1/never-called' }, effect: { type: 'status', status: 503 } });
  pinSessionWebhookUrl(ctx, receiver.url);
  let dispatcher: WebhookDispatcher | undefined;
  if (!webhookDispatcherOf(ctx)) {
    dispatcher = startWebhookDispatcher(ctx);
    t.teardown(() => dispatcher!.stop());
  }
  putWebhookChaos(ctx, { delay: { ms: 60_000 } });
  createTestDeposit(ctx);
  await waitUntil(() => getWebhookChaos(ctx).heldNow === 1, 'a held attempt');
  t.equal((await app.inject({ method: 'GET', url: `${prefix}/_emulator/health` })).statusCode, 200); // a journal entry
  const events = uiEvents(ctx);
  t.ok(events.attach(fakeStream()), 'a dashboard stream is open');
  t.teardown(() => events.closeAll());
  ctx.runtime.get(scenarioPlaySlot).runningStep = 2; // as while a step's requests are under way
  listTransactionsJson(ctx, { programmeId: 'prg_sandbox', userId: null }, listTransactionsQuery.parse({}));
  connectListener(ctx, 'http://127.0.0.1:9/listened', fakeStream()); // a `service-sandbox listen` relay
  t.equal(listenStatus(ctx).connected, true, 'a listener is connected');
  // as while a move of the clock runs its slices (docs/decisions.md#scheduler-slices); the tests clear it at their end
  ctx.runtime.get(clockMoveSlot).underWay = Promise.resolve('touched');
}

t.test('every runtime slot is declared by one module and has a row here', async (t) => {
  const names = stateSlots.map((slot) => slot.name);
  t.same([...names].sort(), Object.keys(CASES).sort(), 'one row per declared slot (add a row for a new slot)');
  t.equal(new Set(names).size, names.length, 'names are unique');
  for (const module of modules) {
    for (const slot of module.state ?? []) t.ok(slot.name.startsWith(`${module.name}.`), `${slot.name} is named after its module, ${module.name}`);
  }
  for (const slot of stateSlots) {
    const slotCase = CASES[slot.name]!;
    t.equal(slot.reset === 'keep' ? 'kept' : 'cleared', slotCase.reset, `${slot.name}: reset as declared`);
    t.equal(slot.newSession, slotCase.session, `${slot.name}: a new session as declared`);
    t.equal(slot.carriedBySnapshots, false, `${slot.name}: snapshots carry the database and the clock only`);
  }
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  t.same(sandbox.ctx.runtime.slots, stateSlots, "a context's runtime holds the modules' slots");
  const stray: StateSlot<number> = { name: 'test.stray', create: () => 0, reset: 'keep', carriedBySnapshots: false, newSession: 'fresh' };
  t.throws(() => sandbox.ctx.runtime.get(stray), /test\.stray is not declared by any module/, 'a slot no descriptor declares is refused');
});

t.test('a job type two modules declare is refused at start, as a slot declared twice is', async (t) => {
  const noop = () => undefined;
  const one: DomainDescriptor = { name: 'one', jobs: { 'thing.step': noop }, jobFailures: { 'thing.step': noop } };
  const other: DomainDescriptor = { name: 'other', jobs: { 'thing.step': noop, 'other.step': noop } };
  t.throws(() => byJobType([one, other], (module) => module.jobs, 'a handler'), /a handler for job type thing\.step is declared twice, by the one and other modules/);
  t.same(Object.keys(byJobType([one, other], (module) => module.jobFailures, 'a failure handler')), ['thing.step'], 'one declaration: kept');
  t.same(Object.keys(jobHandlers).length, new Set(modules.flatMap((module) => Object.keys(module.jobs ?? {}))).size, "the app's own modules declare each type once");
  const slot: StateSlot<number> = { name: 'test.twice', create: () => 0, reset: 'keep', carriedBySnapshots: false, newSession: 'fresh' };
  t.throws(() => new SandboxRuntime([slot, slot], configSchema.parse({})), /test\.twice is declared twice/, 'as a slot declared twice');
});

t.test('reset: what the docs say goes, goes; the rest stays', async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const untouched = await buildTestApp();
  t.teardown(untouched.close);
  const fresh = probeAll(untouched.ctx);

  await touchEverything(t, sandbox, receiver);
  const touched = probeAll(sandbox.ctx);
  for (const [name, slotCase] of Object.entries(CASES)) {
    if (!slotCase.wiring) t.not(JSON.stringify(touched[name]), JSON.stringify(fresh[name]), `${name} was touched`);
  }

  resetSandbox(sandbox.ctx);
  const after = probeAll(sandbox.ctx);
  for (const [name, slotCase] of Object.entries(CASES)) {
    t.same(after[name], slotCase.reset === 'kept' ? touched[name] : fresh[name], `${name}: ${slotCase.reset} by a reset`);
  }
  t.equal(addFaultRule(sandbox.ctx, { match: {}, effect: { type: 'latency', ms: 1 } }).id, 'flt_1', 'fault rules number from flt_1 again');
  t.equal(getDemoState(sandbox.ctx).completed, 0, 'demo progress (in meta) went back to the starting snapshot');
  await waitUntil(() => sandbox.ctx.runtime.get(senderSlot).inFlight.size === 0, 'the dropped attempt to settle');
  t.equal(receiver.requests.length, 0, 'the held attempt was dropped unsent');
  t.equal(sandbox.ctx.db.prepare("SELECT webhook_url FROM programmes WHERE id = 'prg_sandbox'").pluck().get(), receiver.url, 'the pinned URL is put back');
  sandbox.ctx.runtime.get(scenarioPlaySlot).runningStep = null;
  sandbox.ctx.runtime.get(clockMoveSlot).underWay = null;
});

t.test('a snapshot restore leaves every slot as it is; the database follows the snapshot', async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  await touchEverything(t, sandbox, receiver); // saved 'touched' before the demo step, the rule, the chaos
  // a restore by name holds the sandbox itself, and lets the hold go at its end (docs/control-plane.md#big-states)
  sandbox.ctx.runtime.get(clockMoveSlot).underWay = null;
  const before = probeAll(sandbox.ctx);
  await restoreNamedSnapshot(sandbox.ctx, 'touched');
  t.same(probeAll(sandbox.ctx), before, 'no slot is carried by a snapshot (docs/decisions.md#snapshots)');
  t.equal(getDemoState(sandbox.ctx).completed, 0, 'demo progress, in the database, is the snapshot\'s');
  t.equal(getWebhookChaos(sandbox.ctx).heldNow, 1, 'the held attempt is still held (docs/faults.md#reset-sessions-and-snapshots)');
  sandbox.ctx.runtime.get(scenarioPlaySlot).runningStep = null;
});

t.test('a new session starts fresh, whatever the root or another session holds', async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const root = await buildTestApp();
  t.teardown(root.close);
  const registry = root.sessions;

  const first = await registry.create({});
  const baseline = probeAll(first.sandbox.ctx);
  await touchEverything(t, root, receiver);
  await touchEverything(t, { ctx: first.sandbox.ctx, app: root.app, prefix: `/_sessions/${first.id}` }, receiver);

  const next = await registry.create({});
  t.same(probeAll(next.sandbox.ctx), baseline, 'a session made after the root and another session were touched has what the first had at its start');

  const snapshot = getSnapshot(root.ctx, 'touched');
  const given = await registry.create({ webhookUrl: 'http://127.0.0.1:9/given', snapshot });
  const expected = { ...baseline, 'webhooks.sessionUrl': 'http://127.0.0.1:9/given', 'emulator.startingSnapshot': 'touched' };
  t.same(probeAll(given.sandbox.ctx), expected, 'the given slots hold what its creator gave, the others are fresh');
  for (const [name, slotCase] of Object.entries(CASES)) {
    if (slotCase.session === 'given') t.not(JSON.stringify(expected[name as keyof typeof expected]), JSON.stringify(baseline[name]), `${name} is given`);
  }
  root.ctx.runtime.get(scenarioPlaySlot).runningStep = null;
  first.sandbox.ctx.runtime.get(scenarioPlaySlot).runningStep = null;
  root.ctx.runtime.get(clockMoveSlot).underWay = null;
  first.sandbox.ctx.runtime.get(clockMoveSlot).underWay = null;
});
