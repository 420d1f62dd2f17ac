import { rearmJobsTimer, stateReplaced } from '../scheduler/scheduler.js';
import { heldInTurns } from './snapshots.service.js';
import type { AppContext } from '../context.js';
import { resetState } from '../fixtures/fixtures.seed.js';
import { captureSnapshot, restoreSnapshotSteps, restoreTablesSteps, startingSnapshot, type Snapshot } from '../snapshots/snapshot.js';
import { runInTurns, runNow, type Steps } from '../lib/turns.js';
import { sessionWebhookUrl, setWebhookEndpoint } from '../domains/webhooks/webhooks.endpoints.js';
import type { StateSlot } from '../runtime/sandbox-runtime.js';

/**
 * The state the fixtures seed, taken at a sandbox's first reset and put back by every later one
 * (docs/decisions.md#reset): a restore compares each table with the saved rows and rewrites only the rows that
 * differ, where emptying every table and seeding the fixtures again cost ≈10 ms on the default fixtures
 * (docs/benchmarks.md#reset). Seeding depends on the context's fixtures and the webhook URL it is seeded with, never
 * on the clock, so the image is kept per sandbox and per URL.
 */
export const resetImageSlot: StateSlot<{ webhookUrl: string | null | undefined; image: Snapshot } | null> = {
  name: 'emulator.resetImage',
  create: () => null,
  reset: 'keep', // what reset itself puts back
  carriedBySnapshots: false,
  newSession: 'fresh',
};

/**
 * `/_emulator/reset` (and the test kit's reset): a new sandbox, as a new database file started with the same
 * flags would be: the fixtures again, ids from the start, and the clock back at its `--clock` start. This
 * is the one move of the clock backwards, on purpose: nothing recorded under the later time survives it
 * (docs/decisions.md#reset-and-the-clock). The clock is recorded again once `meta` has been cleared, so a
 * restart after a reset resumes the reset sandbox. A server started with `--snapshot` goes back to that
 * snapshot instead, its clock included. What the sandbox holds in memory goes as each module's descriptor says
 * (docs/architecture.md#runtime): fault rules and webhook chaos are cleared, attempts chaos held are dropped.
 */
export function resetSandbox(ctx: AppContext): void {
  runNow(resetSteps(ctx));
}

/**
 * resetSandbox as steps: the restore of a big state yields between chunks of rows (docs/control-plane.md#big-states);
 * the route runs them a turn at a time while it holds the sandbox (resetSandboxInTurns).
 */
function* resetSteps(ctx: AppContext): Steps {
  ctx.runtime.reset(); // every slot by its declaration (docs/faults.md#lifetime, docs/faults.md#reset-sessions-and-snapshots)
  // attempts on the wire finish unrecorded: their deliveries' ids are drawn again by the new state (docs/webhooks.md#reset);
  // nor is a write a handler prepared before it made in the new one (docs/control-plane.md#a-write-after-a-wait)
  stateReplaced(ctx);
  const snapshot = startingSnapshot(ctx);
  const pinnedUrl = sessionWebhookUrl(ctx);
  if (snapshot) {
    yield* restoreSnapshotSteps(ctx, snapshot); // started with --snapshot: that state is the new sandbox (docs/configuration.md#snapshot)
    // a session keeps the webhook URL it was created with, not the snapshot's (docs/sessions.md#webhooks)
    if (pinnedUrl !== undefined) setWebhookEndpoint(ctx, { url: pinnedUrl });
    return;
  }
  ctx.clock.restoreInitial(); // the fixtures are seeded at the start instant
  const kept = ctx.runtime.get(resetImageSlot);
  if (kept && kept.webhookUrl === pinnedUrl) {
    yield* restoreTablesSteps(ctx, kept.image);
  } else {
    resetState(ctx);
    ctx.runtime.set(resetImageSlot, { webhookUrl: pinnedUrl, image: captureSnapshot(ctx, 'reset') });
  }
  ctx.clock.restoreInitial(); // meta was cleared with every other table: record the clock again
  rearmJobsTimer(ctx); // the jobs table and the clock went back (docs/decisions.md#scheduler-wake-up)
}

/**
 * POST /_emulator/reset: the same steps a turn of the event loop at a time, holding the sandbox (its other requests
 * wait, every other sandbox is answered: docs/control-plane.md#big-states).
 */
export function resetSandboxInTurns(ctx: AppContext): Promise<void> {
  return heldInTurns(ctx, 'it was reset', (stillWanted) => runInTurns(resetSteps(ctx), stillWanted));
}
