import type { AppContext } from '../context.js';
import { resetState } from '../fixtures/fixtures.seed.js';
import { captureSnapshot, restoreSnapshot, restoreTables, startingSnapshot, type Snapshot } from './snapshots.service.js';
import { setWebhookEndpoint } from '../domains/webhooks/webhooks.service.js';
import { forgetFaultRules } from '../faults/fault-rules.service.js';
import { resetWebhookChaos } from '../faults/webhook-chaos.service.js';

// The state the fixtures seed, taken at a context's first reset and put back by every later one
// (docs/decisions.md#reset): a restore compares each table with the saved rows and rewrites only the rows that
// differ, where emptying every table and seeding the fixtures again cost ≈10 ms on the default fixtures
// (docs/benchmarks.md#reset). Seeding depends on the context's fixtures and the webhook URL it is seeded with, never
// on the clock, so the image is kept per context and per URL.
const fixtureImages = new WeakMap<AppContext, { webhookUrl: string | null | undefined; image: Snapshot }>();

/**
 * `/_emulator/reset` (and the test kit's reset): a new sandbox, as a new database file started with the same
 * flags would be: the fixtures again, ids from the start, and the clock back at its `--clock` start. This
 * is the one move of the clock backwards, on purpose: nothing recorded under the later time survives it
 * (docs/decisions.md#reset-and-the-clock). The clock is recorded again once `meta` has been cleared, so a
 * restart after a reset resumes the reset sandbox. A server started with `--snapshot` goes back to that
 * snapshot instead, its clock included. Webhook chaos is cleared, and attempts it held are dropped.
 */
export function resetSandbox(ctx: AppContext): void {
  forgetFaultRules(ctx); // a new sandbox has no fault rules (docs/faults.md#lifetime)
  resetWebhookChaos(ctx); // in memory, not in the database: a new sandbox has none (docs/faults.md#reset-sessions-and-snapshots)
  const snapshot = startingSnapshot(ctx);
  if (snapshot) {
    restoreSnapshot(ctx, snapshot); // started with --snapshot: that state is the new sandbox (docs/configuration.md#snapshot)
    // a session keeps the webhook URL it was created with, not the snapshot's (docs/sessions.md#webhooks)
    if (ctx.sessionWebhookUrl !== undefined) setWebhookEndpoint(ctx, { url: ctx.sessionWebhookUrl });
    return;
  }
  ctx.clock.restoreInitial(); // the fixtures are seeded at the start instant
  const kept = fixtureImages.get(ctx);
  if (kept && kept.webhookUrl === ctx.sessionWebhookUrl) {
    restoreTables(ctx.db, kept.image);
  } else {
    resetState(ctx);
    fixtureImages.set(ctx, { webhookUrl: ctx.sessionWebhookUrl, image: captureSnapshot(ctx, 'reset') });
  }
  ctx.clock.restoreInitial(); // meta was cleared with every other table: record the clock again
}
