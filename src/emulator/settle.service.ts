import type { AppContext } from '../context.js';
import { errors } from '../core/errors.js';
import { afterOpenTransaction, pendingJobs, runDueJobsInSlices } from '../scheduler/scheduler.js';
import { webhookDispatcherOf } from '../domains/webhooks/webhooks.dispatcher.js';
import { waitingDeliveries } from '../domains/webhooks/webhooks.views.js';
import type { SettleReport } from './settle.schema.js';

// POST /_emulator/settle (docs/control-plane.md#settle): wait, in real time, until the sandbox has nothing left to do at
// the current emulated time: every job due has run, every delivery that may be attempted has been attempted and its
// answer recorded (webhook chaos's holds included). What waits for the clock (a retry, a later rail step) or behind an
// earlier event of its transaction is reported, with when it is next due. The clock never moves.

const ITEMS_REPORTED = 50;
/** How often the state is looked at again while something is on the wire (an attempt's end wakes it sooner). */
const POLL_MS = 25;

export async function settleSandbox(ctx: AppContext, timeoutMs: number): Promise<SettleReport> {
  const started = Date.now();
  const deadline = started + timeoutMs;
  let jobsRun = 0;
  const hadDispatcher = webhookDispatcherOf(ctx) !== undefined;
  for (;;) {
    const dispatcher = webhookDispatcherOf(ctx);
    // docs/control-plane.md#settle: its session was ended (or the server is stopping) while this waited. Its dispatcher
    // is stopped, so nothing would be left on the wire, but nothing was delivered either: not "settled".
    if (hadDispatcher && !dispatcher) throw errors.sandboxEnded('settle waited');
    // in slices with turns between, as the jobs timer runs them (docs/decisions.md#scheduler-slices)
    jobsRun += await runDueJobsInSlices(ctx, () => !ctx.db.open);
    if (!ctx.db.open) throw errors.sandboxEnded('settle waited');
    // a big save, restore or reset of this sandbox is half way (docs/control-plane.md#big-states): look again after it,
    // past the deadline too (an answer reads the state whole, never half written)
    if (ctx.db.inTransaction) {
      await afterOpenTransaction(ctx);
      continue;
    }
    const quiet = dispatcher ? dispatcher.idle() : true;
    const jobs = pendingJobs(ctx);
    const settled = quiet && jobs.dueNow === 0;
    const now = Date.now();
    if (settled || now >= deadline) {
      const waiting = waitingDeliveries(ctx, ITEMS_REPORTED);
      const onTheWire = dispatcher?.onTheWire() ?? new Set<string>();
      return {
        settled,
        now: ctx.clock.nowIso(),
        waitedMs: now - started,
        jobsRun,
        waiting: {
          jobs: jobs.later + (settled ? 0 : jobs.dueNow),
          deliveries: waiting.total,
          items: waiting.deliveries.map((delivery) => ({ ...delivery, onTheWire: onTheWire.has(delivery.id) })),
        },
        nextDueAt: jobs.nextDueMs === null ? null : new Date(jobs.nextDueMs).toISOString(),
      };
    }
    if (dispatcher) await dispatcher.nextChange(Math.min(POLL_MS, deadline - now));
    else await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, deadline - now)));
  }
}
