import type { AppContext } from '../../context.js';
import { precisionOf } from '../../context.js';
import { scheduleJob } from '../../scheduler/scheduler.js';
import type { TransactionRow } from './transactions.schema.js';

// The sandbox rail: which amounts fail or hold (the magic amounts), and the timeline of steps a
// transaction takes on the emulated clock, as `transaction.rail-step` jobs (run by runRailStep in
// transactions.transition.ts).

export const RAIL_STEP_JOB = 'transaction.rail-step';

export type RailBehaviour = TransactionRow['rail_behaviour'];

/**
 * Magic amounts (docs/decisions.md#magic-amounts): cents .91 fail at processing (RAIL_REJECTED), .92 hold in
 * PROCESSING.
 */
export function railBehaviourFor(amountMinor: bigint, precision: number): RailBehaviour {
  if (precision < 2) return 'NORMAL';
  const cents = (amountMinor / 10n ** BigInt(precision - 2)) % 100n;
  if (cents === 91n) return 'REJECT';
  if (cents === 92n) return 'HOLD';
  return 'NORMAL';
}

/**
 * The magic amount (docs/decisions.md#magic-amounts) of an outgoing transaction: the amount sent (credit), else debit
 * net of fees.
 */
export function outgoingRailBehaviour(
  ctx: AppContext,
  input: { creditAmountMinor: bigint; creditCurrency: string; debitAmountMinor: bigint; debitCurrency: string; fees?: Array<{ amountMinor: bigint }> },
): RailBehaviour {
  const byCredit = railBehaviourFor(input.creditAmountMinor, precisionOf(ctx, input.creditCurrency));
  if (byCredit !== 'NORMAL') return byCredit;
  const feeTotal = (input.fees ?? []).reduce((sum, fee) => sum + fee.amountMinor, 0n);
  return railBehaviourFor(input.debitAmountMinor - feeTotal, precisionOf(ctx, input.debitCurrency));
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

