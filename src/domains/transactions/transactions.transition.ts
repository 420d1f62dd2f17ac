import { prepared } from '../../db/connection.js';
import type { AppContext } from '../../context.js';
import { assertTransition } from '../../lib/state-machine.js';
import { postEntry } from '../ledger/ledger.service.js';
import { replaceEventPayload } from '../webhooks/outbox.js';
import { errors } from '../../core/errors.js';
import { TRANSACTION_STATUSES, transactionTransitions, type TransactionStatus } from './transactions.machine.js';
import { toWebhookTransaction, type Party, type TransactionRow, toTransaction } from './transactions.schema.js';
import { emitTransactionEvent, getTransactionRow, precisionLookup } from './transactions.stored.js';
import { scheduleNextRailStep } from './transactions.rail.js';
import { reverseHold, typeLabel } from './transactions.create.js';
import { sweepCompletedDeposit } from './internal-sweep.js';
import { createP2pCredit } from './p2p.js';

// Moving a transaction along its state machine, with the ledger effects of the new status, its event, the
// next step of its rail timeline and what follows a completion (the stablecoin sweep, a P2P credit).

/**
 * Move a transaction to `to` (the transition table of transactions.machine.ts, docs/decisions.md#rail-timeline).
 * COMPLETED posts the credit; FAILED reverses the hold. Emits transaction_status_updated, schedules the next rail step
 * and runs what follows a completion (the stablecoin sweep of a sub-balance deposit, the receiver's side of a P2P
 * transfer), all in one SQLite transaction.
 */
export function transitionTransaction(
  ctx: AppContext,
  id: string,
  to: TransactionStatus,
  details: { statusCode?: string | null; statusReason?: string | null } = {},
): TransactionRow {
  return ctx.db.transaction(() => transitionTransactionNow(ctx, id, to, details)).immediate();
}

function transitionTransactionNow(
  ctx: AppContext,
  id: string,
  to: TransactionStatus,
  details: { statusCode?: string | null; statusReason?: string | null },
  known?: TransactionRow,
): TransactionRow {
  const row = known ?? getTransactionRow(ctx, id);
  if (!row) throw errors.notFound(`Transaction ${id} not found`);
  assertTransition('Transaction', transactionTransitions, row.status, to);
  const now = ctx.clock.nowIso();
  const statusCode = details.statusCode !== undefined ? details.statusCode : to === 'FAILED' ? (row.status_code ?? 'RAIL_REJECTED') : row.status_code;
  const statusReason = details.statusReason !== undefined ? details.statusReason : defaultReason(to, statusCode);
  // The row as this UPDATE leaves it, and its REST form stored by the same UPDATE (docs/architecture.md#row-to-json):
  // one write of the row instead of three (the status, the stale-JSON trigger clearing rest_json, the refresh). Only
  // the row's own columns shape its REST form, and nothing below writes to them again unless the sweep or the
  // receiver's side of a P2P transfer does (then the row is read back).
  const next: TransactionRow = {
    ...row,
    status: to,
    status_code: statusCode,
    status_reason: statusReason,
    updated_at: now,
    updated_at_ms: Date.parse(now),
    completed_at: to === 'COMPLETED' ? now : row.completed_at,
  };
  const transaction = toTransaction(next, precisionLookup(ctx));
  const restJson = JSON.stringify(transaction);
  prepared(
    ctx.db,
    `UPDATE transactions SET status = ?, status_code = ?, status_reason = ?, updated_at = ?, updated_at_ms = ?,
       completed_at = CASE WHEN ? = 'COMPLETED' THEN ? ELSE completed_at END, rest_json = ?
     WHERE id = ?`,
  ).run(to, statusCode, statusReason, now, next.updated_at_ms, to, now, restJson, id);

  if (to === 'COMPLETED' && row.credit_account_id) {
    postEntry(ctx, {
      accountId: row.credit_account_id,
      transactionId: id,
      kind: 'PRINCIPAL',
      amountMinor: BigInt(row.credit_amount_minor),
      currency: row.credit_currency,
      isFee: false,
      description: ledgerDescription(ctx, row),
    });
  }
  if (to === 'FAILED') reverseHold(ctx, id);

  // the row as a read would now return it: `SELECT *` carries rest_json, which the row type leaves out
  const updated = { ...next, rest_json: restJson } as TransactionRow;
  const eventId = emitTransactionEvent(ctx, updated, transaction, 'transaction_status_updated');
  scheduleNextRailStep(ctx, updated);
  const swept = sweepCompletedDeposit(ctx, updated, row.status);
  const received = createP2pCredit(ctx, updated, row.status);
  // the receiver's transfer has no timeline of its own: it settles with the sender's, here
  if (received) transitionTransactionNow(ctx, received.id, 'COMPLETED', {});
  // only the sweep or the receiver's side write to this row again; otherwise it stands as stored above
  const final = swept || received ? getTransactionRow(ctx, id)! : updated;
  // The sweep links this transaction to the one it created (a completed stablecoin deposit names its sweep in
  // relatedTransactionId, interface 2.4): the event written above, not yet sent (the dispatcher sends after
  // commit), is brought to that final form, so the webhook says what GET /v1/transactions/{id} says.
  if (final.related_transaction_id !== updated.related_transaction_id) {
    replaceEventPayload(ctx, eventId, toWebhookTransaction(toTransaction(final, precisionLookup(ctx))));
  }
  return final;
}

function ledgerDescription(ctx: AppContext, row: TransactionRow): string {
  const first = prepared<{ description: string }>(ctx.db, 'SELECT description FROM ledger_entries WHERE transaction_id = ? ORDER BY id LIMIT 1').get(row.id);
  if (first) return first.description;
  const party = row.debit_party ? (JSON.parse(row.debit_party) as Party) : null;
  const label = typeLabel(row.type, row.category);
  return party?.partyType === 'PAYER' ? `${label} from ${party.payer.displayName}` : label;
}

function defaultReason(to: TransactionStatus, statusCode: string | null): string | null {
  if (to !== 'FAILED') return null;
  if (statusCode === 'RAIL_REJECTED') return 'Rejected by the receiving rail';
  if (statusCode === 'INSUFFICIENT_FUNDS') return 'Insufficient funds';
  if (statusCode === 'R01') return 'Returned by the paying bank: R01 insufficient funds';
  return statusCode ? `Failed: ${statusCode}` : 'Failed';
}

/**
 * Job handler: apply a scheduled rail step unless the transaction was moved on by other means (a forced
 * status makes the older step invalid, and it is skipped rather than failing the job).
 */
export function runRailStep(ctx: AppContext, payload: Record<string, unknown>): void {
  const id = String(payload.transactionId);
  const to = payload.to as TransactionStatus;
  const row = getTransactionRow(ctx, id);
  if (!row || !TRANSACTION_STATUSES.includes(to) || !transactionTransitions[row.status].includes(to)) return;
  const statusCode = typeof payload.statusCode === 'string' ? payload.statusCode : 'RAIL_REJECTED';
  // The row just read is current: the slice's transaction holds the write lock, and the job's own savepoint makes the
  // step all or nothing (docs/decisions.md#scheduler-slices), so no savepoint of its own is opened here.
  transitionTransactionNow(ctx, id, to, to === 'FAILED' ? { statusCode } : {}, row);
}


/** statusCode of a transaction whose scheduled step failed inside the emulator (docs/decisions.md#failed-jobs). */
export const PROCESSING_ERROR = 'PROCESSING_ERROR';

/**
 * The failure handler of the rail-step job (transactions.domain.ts): the step threw and was rolled back, so
 * the transaction would otherwise stay PENDING or PROCESSING forever. It moves to FAILED with statusCode
 * PROCESSING_ERROR through the ordinary transition (hold released, webhook written). Runs inside the
 * scheduler's transaction (scheduler.ts recordJobFailure); a final transaction is left as it is.
 */
export function failTransactionOfJob(ctx: AppContext, payload: Record<string, unknown>): void {
  const id = String(payload.transactionId);
  const row = getTransactionRow(ctx, id);
  if (!row || !transactionTransitions[row.status].includes('FAILED')) return;
  transitionTransactionNow(ctx, id, 'FAILED', {
    statusCode: PROCESSING_ERROR,
    statusReason: 'A scheduled step of this transaction failed inside the sandbox; the failed job is listed by GET /_emulator/jobs?status=FAILED',
  });
}
