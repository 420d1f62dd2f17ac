import { setMaxListeners } from 'node:events';
import type { AppContext } from '../../context.js';
import { attemptDelivery, closeSender, senderState } from './webhooks.sender.js';
import { dueDeliveryIds } from './webhooks.queue.js';
import { setWebhookEndpoint } from './webhooks.endpoints.js';
import { subscribeToOutbox } from './outbox.js';
import { deliveryInterceptorOf } from './webhooks.interceptor.js';
import type { StateSlot } from '../../runtime/sandbox-runtime.js';

// The webhook dispatcher (docs/webhooks.md#delivery-rules): a long-running service that sends every due delivery of the
// outbox, a few at a time, without ever blocking the request that wrote the event. It is the outbox's subscriber
// (`subscribeToOutbox`), woken by `notifyOutbox(ctx)` (called by recordEvent, and after the scheduler ran jobs,
// e.g. a due `webhook.retry`, through the webhooks descriptor's `afterJobsRan`), and polls as a safety net. All delivery state is in SQLite, so a new dispatcher on the
// same database file picks up whatever was owed when the previous process stopped.

export interface WebhookDispatcherOptions {
  /**
   * Attempts on the wire at once (default 8). Events of one transaction never overlap regardless, unless webhook
   * chaos holds one back on purpose (docs/faults.md#webhook-chaos).
   */
  concurrency?: number;
  /** Per-attempt timeout in real ms (default config webhookTimeoutMs: 10 s, interface 6.1). */
  timeoutMs?: number;
  /** Safety-net poll in real ms (default 1000); notifyOutbox wakes the dispatcher at once anyway. */
  pollIntervalMs?: number;
}

export interface WebhookDispatcher {
  /** Look for due deliveries soon (after the current synchronous work, so after its commit). */
  wake(): void;
  /**
   * Resolves once nothing is on the wire and nothing is due now (RETRYING deliveries wait for the emulated
   * clock). For tests and for the CLI; rejects after `timeoutMs` of real time (default 30 s).
   */
  drain(options?: { timeoutMs?: number }): Promise<void>;
  /**
   * True when nothing is on the wire (chaos holds included) and no delivery may be attempted now: what is left waits
   * for the emulated clock (a retry) or behind an earlier event of its transaction (docs/control-plane.md#settle).
   */
  idle(): boolean;
  /** Resolves when an attempt settles, or after `ms` of real time, whichever comes first. */
  nextChange(ms: number): Promise<void>;
  /** The deliveries with an attempt on the wire now. */
  onTheWire(): ReadonlySet<string>;
  /** Stop sending; attempts on the wire are aborted unrecorded, so they are sent again after a restart. */
  stop(): Promise<void>;
}

/** The sandbox's running dispatcher (docs/architecture.md#runtime); a reset keeps it running. */
export const dispatcherSlot: StateSlot<WebhookDispatcher | null> = {
  name: 'webhooks.dispatcher',
  create: () => null,
  reset: 'keep',
  carriedBySnapshots: false,
  newSession: 'fresh',
};

/** Real ms before a delivery whose attempt threw (not a receiver failure) is tried again. */
const CRASH_BACKOFF_MS = 1000;

export function startWebhookDispatcher(ctx: AppContext, options: WebhookDispatcherOptions = {}): WebhookDispatcher {
  if (ctx.runtime.get(dispatcherSlot)) throw new Error('a webhook dispatcher is already running for this context');
  const concurrency = Math.max(1, options.concurrency ?? 8);
  const timeoutMs = options.timeoutMs ?? ctx.config.webhookTimeoutMs;
  const sender = senderState(ctx);
  const own = new Map<string, Promise<unknown>>();
  const stopController = new AbortController();
  // every attempt on the wire listens to it; a chaos burst puts more than `concurrency` there (docs/faults.md#burst)
  setMaxListeners(0, stopController.signal);
  let stopped = false;
  let wakeScheduled = false;
  const settleWaiters = new Set<() => void>();
  const crashedAt = new Map<string, number>();

  function wake(): void {
    if (stopped || wakeScheduled) return;
    wakeScheduled = true;
    // setImmediate: recordEvent calls this inside the writer's SQLite transaction; by the time the pump
    // runs, that transaction has committed (or rolled back, and there is nothing to send).
    setImmediate(() => {
      wakeScheduled = false;
      pump();
    });
  }

  // Attempts held by the delivery interceptor (webhook chaos's reorder or burst) wait outside the concurrency limit and do not hold back
  // the later events of their transaction (docs/faults.md#webhook-chaos).
  const heldOutOfOrder = () => deliveryInterceptorOf(ctx).heldOutOfOrder(ctx);
  const busy = () => own.size - heldOutOfOrder().length;

  function pump(): void {
    if (stopped || busy() >= concurrency) return;
    // a big restore or reset keeps a transaction open across turns (docs/control-plane.md#big-states): no attempt
    // starts during it; its end wakes the outbox
    if (ctx.db.open && ctx.db.inTransaction) return;
    const limit = concurrency + sender.inFlight.size;
    let ids: string[];
    try {
      ids = dueDeliveryIds(ctx, limit, heldOutOfOrder());
    } catch {
      return; // database closing during shutdown
    }
    const now = ctx.clock.realNowMs(); // a real-time backoff, not business time
    let started = 0;
    for (const id of ids) {
      if (busy() >= concurrency) break;
      if (sender.inFlight.has(id) || own.has(id)) continue;
      if ((crashedAt.get(id) ?? -Infinity) > now - CRASH_BACKOFF_MS) continue;
      const attempt = attemptDelivery(ctx, id, 'SCHEDULED', { timeoutMs, signal: stopController.signal }).then(
        () => {
          own.delete(id);
          crashedAt.delete(id);
          wake();
        },
        (error: unknown) => {
          // Not a receiver failure (those are recorded attempts) but a fault of our own, e.g. the database:
          // leave the delivery owed and let the poll try again later instead of spinning on it.
          own.delete(id);
          if (!stopped) process.emitWarning(`webhook delivery ${id} could not be attempted: ${error instanceof Error ? error.message : String(error)}`);
          crashedAt.set(id, ctx.clock.realNowMs());
        },
      );
      own.set(id, attempt);
      started += 1;
    }
    // attempts that went straight into a chaos hold left room: look again (a burst fills past the limit)
    if (started > 0 && ids.length === limit && busy() < concurrency) wake();
  }

  function onSettled(): void {
    wake();
    for (const waiter of [...settleWaiters]) waiter();
  }
  sender.listeners.add(onSettled);

  const unsubscribe = subscribeToOutbox(ctx, wake);
  const timer = setInterval(wake, options.pollIntervalMs ?? 1000);
  timer.unref();

  const dispatcher: WebhookDispatcher = {
    wake,
    async drain({ timeoutMs: limit = 30_000 } = {}) {
      const deadline = ctx.clock.realNowMs() + limit;
      for (;;) {
        if (stopped) throw new Error('the webhook dispatcher is stopped');
        if (dispatcher.idle()) return;
        if (ctx.clock.realNowMs() > deadline) throw new Error(`webhook deliveries still in flight or due after ${limit} ms`);
        await dispatcher.nextChange(25);
      }
    },
    idle() {
      pump();
      return own.size === 0 && sender.inFlight.size === 0 && dueDeliveryIds(ctx, 1, heldOutOfOrder()).length === 0;
    },
    nextChange(ms) {
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(fallback);
          settleWaiters.delete(done);
          resolve();
        };
        const fallback = setTimeout(done, ms);
        settleWaiters.add(done);
      });
    },
    onTheWire: () => sender.inFlight,
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      unsubscribe();
      sender.listeners.delete(onSettled);
      stopController.abort();
      await Promise.allSettled([...own.values()]);
      ctx.runtime.set(dispatcherSlot, null);
      await closeSender(ctx);
    },
  };
  ctx.runtime.set(dispatcherSlot, dispatcher);
  wake(); // whatever was owed before this start (a restart on a database file)
  return dispatcher;
}

/** The running dispatcher of a context, if any. */
export function webhookDispatcherOf(ctx: AppContext): WebhookDispatcher | undefined {
  return ctx.runtime.get(dispatcherSlot) ?? undefined;
}

/**
 * Background service (webhooks.domain.ts). `--webhook-url` is applied to every programme on each start,
 * not only when a new database is seeded, so a restart on a database file honours the flag.
 */
export function webhookDispatcherService(ctx: AppContext): () => Promise<void> {
  if (ctx.config.webhookUrl) setWebhookEndpoint(ctx, { url: ctx.config.webhookUrl });
  const dispatcher = startWebhookDispatcher(ctx);
  return () => dispatcher.stop();
}
