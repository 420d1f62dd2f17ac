import type { AppContext } from '../../context.js';
import { scheduleJob } from '../../scheduler/scheduler.js';
import type { TransactionRow } from './transactions.schema.js';

// The sandbox rail: which amounts fail or hold (the magic amounts), and the timeline of steps a
// transaction takes on the emulated clock, as `transaction.rail-step` jobs (run by runRailStep in
// transactions.transition.ts).

export const RAIL_STEP_JOB = 'transaction.rail-step';

export type RailBehaviour = TransactionRow['rail_behaviour'];

/**
 * Magic amounts (docs/decisions.md#magic-amounts): cents .91 fail at processing (RAIL_REJECTED), .92 hold in
 * PROCESSING. The flow that knows which amount the caller wrote calls it on that amount only.
 */
export function railBehaviourFor(amountMinor: bigint, precision: number): RailBehaviour {
  if (precision < 2) return 'NORMAL';
  const cents = (amountMinor / 10n ** BigInt(precision - 2)) % 100n;
  if (cents === 91n) return 'REJECT';
  if (cents === 92n) return 'HOLD';
  return 'NORMAL';
}

/** The rail timeline (docs/decisions.md#rail-timeline), as jobs on the emulated clock. */
export function scheduleNextRailStep(ctx: AppContext, row: TransactionRow): void {
  if (row.rail_behaviour === 'NONE') return;
  const timeline = ctx.fixtures.timeline;
  const now = ctx.clock.nowMs();
  if (row.direction === 'INCOMING' && row.status === 'PENDING') {
    const delay = row.category === 'INTERNAL_SWEEP' ? timeline.sweepCompletionMs : timeline.depositCompletionMs;
    // an incoming pull marked REJECT (a direct debit of .91, docs/money-out.md#direct-debits) comes back
    // returned by the paying bank: ACH return code R01 (insufficient funds)
    const step = row.rail_behaviour === 'REJECT' ? { to: 'FAILED', statusCode: 'R01' } : { to: 'COMPLETED' };
    scheduleJob(ctx, RAIL_STEP_JOB, now + delay, { transactionId: row.id, ...step });
  } else if (row.direction === 'OUTGOING' && row.status === 'PENDING') {
    scheduleJob(ctx, RAIL_STEP_JOB, now + timeline.outgoingProcessingMs, { transactionId: row.id, to: 'PROCESSING' });
  } else if (row.direction === 'OUTGOING' && row.status === 'PROCESSING' && row.rail_behaviour !== 'HOLD') {
    scheduleJob(ctx, RAIL_STEP_JOB, now + timeline.outgoingCompletionMs, {
      transactionId: row.id,
      to: row.rail_behaviour === 'REJECT' ? 'FAILED' : 'COMPLETED',
    });
  }
}

