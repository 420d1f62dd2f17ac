import { startServer, type RunningServer } from '../server.js';
import { advanceClockYielding } from '../scheduler/scheduler.js';
import { createFaultRuleBody } from '../faults/fault-rules.schema.js';
import { addFaultRule, clearFaultRules } from '../faults/fault-rules.service.js';
import { webhookChaosBody } from '../faults/webhook-chaos.schema.js';
import { clearWebhookChaos, putWebhookChaos } from '../faults/webhook-chaos.service.js';
import { resetSandboxInTurns } from '../emulator/reset.service.js';
import { restoreNamedSnapshot, saveSnapshot } from '../emulator/snapshots.service.js';
import { loadFixtures, validateFixtures } from '../fixtures/fixtures.loader.js';
import type { Fixtures } from '../fixtures/fixtures.schema.js';
import type { AppContext } from '../context.js';
import { signedFetcher, startWebhookInbox, type SandboxClient, type SandboxCredentials } from './kit-parts.js';

export type { ReceivedWebhook, RejectedWebhook, SandboxCredentials } from './kit-parts.js';

// The in-process test kit (docs/test-kit.md#in-process-test-kit): one line starts a sandbox on a random port with a
// webhook receiver attached, for tap, vitest, jest or node:test suites.
//
//   const sandbox = await startSandbox();
//   const res = await sandbox.signedFetch('GET', '/v1/accounts');
//   await sandbox.close();

export interface SandboxOptions {
  /** A fixtures object or a path to a fixtures file (default: the bundled default fixtures). */
  fixtures?: Fixtures | string;
  /** `realtime` or an ISO instant to start frozen (default: real time, or the clock stored in `db`). */
  clock?: string;
  /** Port to listen on (default: a random free port). */
  port?: number;
  /** Seed for ids (default: the emulator's default seed). */
  seed?: string;
  /** Database path (default `:memory:`). */
  db?: string;
}

export interface Sandbox extends SandboxClient {
  /** The running server's context (database, clock) for advanced assertions. */
  context: AppContext;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const inbox = await startWebhookInbox();
  const fixtures =
    options.fixtures === undefined ? undefined : typeof options.fixtures === 'string' ? loadFixtures(options.fixtures) : validateFixtures(options.fixtures);
  let server: RunningServer;
  try {
    server = await startServer({
      config: {
        port: options.port ?? 0,
        host: '127.0.0.1',
        db: options.db ?? ':memory:',
        clock: options.clock,
        seed: options.seed,
        logLevel: 'silent',
        webhookUrl: inbox.url,
      } as never,
      fixtures,
    });
  } catch (error) {
    await inbox.close();
    throw error;
  }
  const ctx = server.ctx;
  // the attached receiver verifies with every programme's webhook key, read afresh (a restore may bring other fixtures)
  inbox.expect(() => ctx.fixtures.programmes.map((each) => each.webhook));
  const programme = ctx.fixtures.programmes[0]!;
  const single = programme.apiKeys.find((key) => key.integrationType === 'SINGLE_USER');
  const multi = programme.apiKeys.find((key) => key.integrationType === 'MULTI_USER');
  const credentials: SandboxCredentials = {
    programmeId: programme.id,
    single: { apiKey: single?.apiKey ?? '', secret: single?.secret ?? '', userId: single?.userId ?? '' },
    multi: { apiKey: multi?.apiKey ?? '', secret: multi?.secret ?? '' },
    webhook: { apiKey: programme.webhook.apiKey, secret: programme.webhook.secret },
  };

  return {
    url: server.url,
    credentials,
    signedFetch: signedFetcher(server.url, credentials),
    async advanceClock(ms) {
      await advanceClockYielding(ctx, ms);
    },
    // after any move of the clock the app under test asked for, as a request would be (docs/decisions.md#scheduler-slices)
    async reset() {
      await resetSandboxInTurns(ctx); // its hold waits for moves of the clock
      inbox.clear();
    },
    async snapshot(name) {
      await saveSnapshot(ctx, name); // its hold waits for moves of the clock
    },
    async restore(name) {
      await restoreNamedSnapshot(ctx, name); // its hold waits for moves of the clock
      inbox.clear();
    },
    async addFault(rule) {
      const parsed = createFaultRuleBody.safeParse(rule);
      if (!parsed.success) throw new Error(`Invalid fault rule: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || 'rule'}: ${issue.message}`).join('; ')}`);
      return addFaultRule(ctx, parsed.data);
    },
    async clearFaults() {
      clearFaultRules(ctx);
    },
    async setWebhookChaos(settings) {
      const parsed = webhookChaosBody.safeParse(settings);
      if (!parsed.success) throw new Error(`Invalid webhook chaos: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || 'settings'}: ${issue.message}`).join('; ')}`);
      return putWebhookChaos(ctx, parsed.data);
    },
    async clearWebhookChaos() {
      clearWebhookChaos(ctx);
    },
    webhooks: { received: inbox.received, rejected: inbox.rejected, waitFor: inbox.waitFor, clear: inbox.clear },
    context: ctx,
    async close() {
      await server.close();
      await inbox.close();
    },
  };
}
