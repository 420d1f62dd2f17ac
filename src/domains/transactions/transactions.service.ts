import { sql } from '../../db/connection.js';
import type { AppContext } from '../../context.js';
import { precisionOf } from '../../context.js';
import { assertTransition } from '../../lib/state-machine.js';
import { balancesOf, entriesOfTransaction, postEntry } from '../ledger/ledger.service.js';
import { recordEvent } from '../webhooks/outbox.js';
import { scheduleJob } from '../../scheduler/scheduler.js';
import { errors } from '../../http/errors.js';
import { formatAmount } from '../../lib/money.js';
import { settlementHooks } from './settlement-hooks.js';
import { transactionTransitions, type TransactionStatus } from './transactions.machine.js';
import {
  toTransaction,
  toWebhookTransaction,
  type Fee,
  type Instrument,
  type Party,
  type Transaction,
  type TransactionRow,
} from './transactions.schema.js';

// The transaction core: creation with its ledger hold, the state machine, the rail timeline and the
// outbox events. Every function runs inside the caller's SQLite transaction.

export const RAIL_STEP_JOB = 'transaction.rail-step';

export type RailBehaviour = TransactionRow['rail_behaviour'];

/** Contract 4 magic amounts: cents .91 fail at processing (RAIL_REJECTED), .92 hold in PROCESSING. */
export function railBehaviourFor(amountMinor: bigint, precision: number): RailBehaviour {
  if (precision < 2) return 'NORMAL';
  const cents = (amountMinor / 10n ** BigInt(precision - 2)) % 100n;
  if (cents === 91n) return 'REJECT';
  if (cents === 92n) return 'HOLD';
  return 'NORMAL';
}

export interface FeeInput {
  type: string;
  label: string;
  amountMinor: bigint;
  currency: string;
}

export interface NewTransaction {
  id?: string;
  programmeId: string;
  userId: string;
  /** Top-level account the transaction is listed under. */
  accountId: string;
  /** Ledger account debited (held at creation); null for an external payer. */
  debitAccountId: string | null;
  /** Ledger account credited on completion; null for an external payee. */
  creditAccountId: string | null;
  direction: 'INCOMING' | 'OUTGOING';
  type: Transaction['type'];
  category?: Transaction['category'];
  /** Total debit, fees included. */
  debitAmountMinor: bigint;
  /** Debit net of fees, when a net figure exists (interface 2.4: absent is not zero). */
  netDebitAmountMinor?: bigint | null;
  debitCurrency: string;
  debitParty?: Party | null;
  debitRail?: string | null;
  debitMemo?: string | null;
  debitReference?: string | null;
  debitEntryDescriptor?: string | null;
  debitInstrument?: Instrument | null;
  creditAmountMinor: bigint;
  creditCurrency: string;
  creditParty?: Party | null;
  creditRail?: string | null;
  creditInstrument?: Instrument | null;
  fees?: FeeInput[];
  exchangeRate?: string | null;
  baseExchangeRate?: string | null;
  fxSpread?: string | null;
  purpose?: Transaction['purpose'];
  externalId?: string | null;
  depositReconciliationId?: string | null;
  relatedTransactionId?: string | null;
  intentId?: string | null;
  statusReason?: string | null;
  statusCode?: string | null;
  railBehaviour?: RailBehaviour;
  /** Fixture history only: a settled record with given instants, no events and no timeline. */
  history?: { status: 'COMPLETED' | 'FAILED'; createdAt: string; completedAt: string };
}

export class InsufficientFundsError extends Error {
  constructor(
    readonly accountId: string,
    readonly availableMinor: bigint,
    readonly requiredMinor: bigint,
  ) {
    super(`Insufficient funds in ${accountId}: available ${availableMinor} minor units, required ${requiredMinor}`);
  }
}

export function precisionLookup(ctx: AppContext): (currency: string) => number {
  return (currency) => precisionOf(ctx, currency);
}

export function getTransactionRow(ctx: AppContext, id: string): TransactionRow | undefined {
  return sql<TransactionRow>(ctx.db, 'SELECT * FROM transactions WHERE id = ?').get(id);
}

export function serializeTransaction(ctx: AppContext, row: TransactionRow): Transaction {
  return toTransaction(row, precisionLookup(ctx));
}

function emit(ctx: AppContext, row: TransactionRow, eventType: 'transaction_created' | 'transaction_status_updated'): void {
  recordEvent(ctx, {
    programmeId: row.programme_id,
    userId: row.user_id,
    resourceType: 'transaction',
    resourceId: row.id,
    eventType,
    payload: toWebhookTransaction(serializeTransaction(ctx, row)),
  });
}

/**
 * Create a transaction. An outgoing one holds its debit (amount and each fee as separate entries) at once;
 * if `available` cannot cover it, InsufficientFundsError is thrown and nothing is written, unless
 * `failOnInsufficientFunds` is set, in which case the transaction is recorded FAILED with
 * statusCode INSUFFICIENT_FUNDS and no entries (contract 6).
 */
export function createTransaction(ctx: AppContext, input: NewTransaction, options: { failOnInsufficientFunds?: boolean } = {}): TransactionRow {
  const id = input.id ?? ctx.ids.id('transaction');
  const createdAt = input.history?.createdAt ?? ctx.clock.nowIso();
  const fees = input.fees ?? [];
  const feeTotal = fees.reduce((sum, fee) => sum + fee.amountMinor, 0n);
  let status: TransactionStatus = input.history?.status ?? 'PENDING';
  let statusCode = input.statusCode ?? null;
  let statusReason = input.statusReason ?? null;

  if (input.debitAccountId && !input.history) {
    const { availableMinor } = balancesOf(ctx, input.debitAccountId);
    if (availableMinor < input.debitAmountMinor) {
      if (!options.failOnInsufficientFunds) throw new InsufficientFundsError(input.debitAccountId, availableMinor, input.debitAmountMinor);
      status = 'FAILED';
      statusCode = 'INSUFFICIENT_FUNDS';
      statusReason = `Insufficient funds: available ${availableMinor} minor units is less than the ${input.debitAmountMinor} required`;
    }
  }

  const feesJson: Fee[] = fees.map((fee) => ({
    type: fee.type,
    label: fee.label,
    amount: formatMinor(ctx, fee.amountMinor, fee.currency),
    currency: fee.currency,
  }));
  const completedAt = status === 'COMPLETED' ? (input.history?.completedAt ?? createdAt) : null;
  const updatedAt = input.history ? (input.history.completedAt ?? createdAt) : createdAt;
  sql(
    ctx.db,
    `INSERT INTO transactions (
      id, programme_id, user_id, account_id, debit_account_id, credit_account_id, direction, type, status, status_reason,
      status_code, category, reference_number, external_id, deposit_reconciliation_id, related_transaction_id,
      debit_amount_minor, net_debit_amount_minor, debit_currency, debit_party, debit_rail, debit_memo, debit_reference,
      debit_entry_descriptor, debit_instrument, credit_amount_minor, credit_currency, credit_party, credit_rail,
      credit_instrument, fees, exchange_rate, base_exchange_rate, fx_spread, tags, purpose, rail_behaviour, intent_id,
      created_at, created_at_ms, updated_at, updated_at_ms, completed_at
    ) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    id,
    input.programmeId,
    input.userId,
    input.accountId,
    input.debitAccountId,
    input.creditAccountId,
    input.direction,
    input.type,
    status,
    statusReason,
    statusCode,
    input.category ?? null,
    ctx.ids.reference(),
    input.externalId ?? null,
    input.depositReconciliationId ?? null,
    input.relatedTransactionId ?? null,
    input.debitAmountMinor,
    input.netDebitAmountMinor ?? null,
    input.debitCurrency,
    json(input.debitParty),
    input.debitRail ?? null,
    input.debitMemo ?? null,
    input.debitReference ?? null,
    input.debitEntryDescriptor ?? null,
    json(input.debitInstrument),
    input.creditAmountMinor,
    input.creditCurrency,
    json(input.creditParty),
    input.creditRail ?? null,
    json(input.creditInstrument),
    JSON.stringify(feesJson),
    input.exchangeRate ?? null,
    input.baseExchangeRate ?? null,
    input.fxSpread ?? null,
    '[]',
    input.purpose ?? null,
    input.history ? 'NONE' : (input.railBehaviour ?? 'NORMAL'),
    input.intentId ?? null,
    createdAt,
    Date.parse(createdAt),
    updatedAt,
    Date.parse(updatedAt),
    completedAt,
  );

  const holdPosted = input.debitAccountId !== null && !(status === 'FAILED' && !input.history);
  if (holdPosted && input.debitAccountId) {
    postDebitHold(ctx, id, input.debitAccountId, input.debitAmountMinor - feeTotal, input.debitCurrency, fees, createdAt, describe(input));
  }
  if (input.history) {
    if (status === 'COMPLETED' && input.creditAccountId) {
      postEntry(ctx, {
        accountId: input.creditAccountId,
        transactionId: id,
        kind: 'PRINCIPAL',
        amountMinor: input.creditAmountMinor,
        currency: input.creditCurrency,
        isFee: false,
        description: describe(input),
        postedAt: completedAt ?? createdAt,
      });
    }
    if (status === 'FAILED' && holdPosted) reverseHold(ctx, id, input.history.completedAt);
  }

  const row = getTransactionRow(ctx, id)!;
  if (!input.history) {
    emit(ctx, row, 'transaction_created');
    if (status !== 'FAILED') scheduleNextRailStep(ctx, row);
  }
  return row;
}

function postDebitHold(
  ctx: AppContext,
  transactionId: string,
  accountId: string,
  principalMinor: bigint,
  currency: string,
  fees: FeeInput[],
  postedAt: string,
  description: string,
): void {
  postEntry(ctx, { accountId, transactionId, kind: 'PRINCIPAL', amountMinor: -principalMinor, currency, isFee: false, description, postedAt });
  for (const fee of fees) {
    postEntry(ctx, { accountId, transactionId, kind: 'FEE', amountMinor: -fee.amountMinor, currency, isFee: true, description: fee.label, postedAt });
  }
}

function reverseHold(ctx: AppContext, transactionId: string, postedAt?: string): void {
  for (const entry of entriesOfTransaction(ctx, transactionId)) {
    if (entry.amount_minor >= 0 || entry.kind === 'REVERSAL') continue;
    postEntry(ctx, {
      accountId: entry.account_id,
      transactionId,
      kind: 'REVERSAL',
      amountMinor: BigInt(-entry.amount_minor),
      currency: entry.currency,
      isFee: entry.is_fee === 1,
      description: `Reversal: ${entry.description}`,
      postedAt,
    });
  }
}

function describe(input: NewTransaction): string {
  const counterparty =
    input.direction === 'INCOMING'
      ? input.debitParty?.partyType === 'PAYER'
        ? input.debitParty.payer.displayName
        : null
      : input.creditParty?.partyType === 'BENEFICIARY'
        ? (input.creditParty.beneficiary.business?.name ?? input.creditParty.beneficiary.person?.name ?? null)
        : null;
  const label = input.category === 'INTERNAL_SWEEP' ? 'Internal sweep' : input.type.charAt(0) + input.type.slice(1).toLowerCase().replace('_', ' ');
  return counterparty ? `${label} ${input.direction === 'INCOMING' ? 'from' : 'to'} ${counterparty}` : label;
}

/**
 * Move a transaction to `to` (contract 4 transition table). COMPLETED posts the credit; FAILED reverses
 * the hold. Emits transaction_status_updated and schedules the next rail step.
 */
export function transitionTransaction(
  ctx: AppContext,
  id: string,
  to: TransactionStatus,
  details: { statusCode?: string | null; statusReason?: string | null } = {},
): TransactionRow {
  const row = getTransactionRow(ctx, id);
  if (!row) throw errors.notFound(`Transaction ${id} not found`);
  assertTransition('Transaction', transactionTransitions, row.status, to);
  const now = ctx.clock.nowIso();
  const statusCode = details.statusCode !== undefined ? details.statusCode : to === 'FAILED' ? (row.status_code ?? 'RAIL_REJECTED') : row.status_code;
  const statusReason = details.statusReason !== undefined ? details.statusReason : defaultReason(to, statusCode);
  sql(
    ctx.db,
    `UPDATE transactions SET status = ?, status_code = ?, status_reason = ?, updated_at = ?, updated_at_ms = ?,
       completed_at = CASE WHEN ? = 'COMPLETED' THEN ? ELSE completed_at END
     WHERE id = ?`,
  ).run(to, statusCode, statusReason, now, Date.parse(now), to, now, id);

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

  const updated = getTransactionRow(ctx, id)!;
  emit(ctx, updated, 'transaction_status_updated');
  scheduleNextRailStep(ctx, updated);
  for (const hook of settlementHooks) hook(ctx, updated, row.status);
  return updated;
}

function ledgerDescription(ctx: AppContext, row: TransactionRow): string {
  const first = sql<{ description: string }>(ctx.db, 'SELECT description FROM ledger_entries WHERE transaction_id = ? ORDER BY id LIMIT 1').get(row.id);
  if (first) return first.description;
  const party = row.debit_party ? (JSON.parse(row.debit_party) as Party) : null;
  const label = row.category === 'INTERNAL_SWEEP' ? 'Internal sweep' : row.type.charAt(0) + row.type.slice(1).toLowerCase().replace('_', ' ');
  return party?.partyType === 'PAYER' ? `${label} from ${party.payer.displayName}` : label;
}

function defaultReason(to: TransactionStatus, statusCode: string | null): string | null {
  if (to !== 'FAILED') return null;
  if (statusCode === 'RAIL_REJECTED') return 'Rejected by the receiving rail';
  if (statusCode === 'INSUFFICIENT_FUNDS') return 'Insufficient funds';
  return statusCode ? `Failed: ${statusCode}` : 'Failed';
}

/**
 * Hooks run after every status write, in the same SQLite transaction (for example the stablecoin sweep
 * that follows a completed sub-balance deposit). Domains add theirs in settlement-hooks.ts.
 */
export type SettlementHook = (ctx: AppContext, row: TransactionRow, previousStatus: TransactionStatus) => void;

/** The rail timeline of contract 4, as jobs on the emulated clock. */
function scheduleNextRailStep(ctx: AppContext, row: TransactionRow): void {
  if (row.rail_behaviour === 'NONE') return;
  const timeline = ctx.fixtures.timeline;
  const now = ctx.clock.nowMs();
  if (row.direction === 'INCOMING' && row.status === 'PENDING') {
    const delay = row.category === 'INTERNAL_SWEEP' ? timeline.sweepCompletionMs : timeline.depositCompletionMs;
    scheduleJob(ctx, RAIL_STEP_JOB, now + delay, { transactionId: row.id, to: 'COMPLETED' });
  } else if (row.direction === 'OUTGOING' && row.status === 'PENDING') {
    scheduleJob(ctx, RAIL_STEP_JOB, now + timeline.outgoingProcessingMs, { transactionId: row.id, to: 'PROCESSING' });
  } else if (row.direction === 'OUTGOING' && row.status === 'PROCESSING' && row.rail_behaviour !== 'HOLD') {
    scheduleJob(ctx, RAIL_STEP_JOB, now + timeline.outgoingCompletionMs, {
      transactionId: row.id,
      to: row.rail_behaviour === 'REJECT' ? 'FAILED' : 'COMPLETED',
    });
  }
}

/** Job handler: apply a scheduled rail step unless the transaction was moved on by other means. */
export function runRailStep(ctx: AppContext, payload: Record<string, unknown>): void {
  const id = String(payload.transactionId);
  const to = payload.to as TransactionStatus;
  const row = getTransactionRow(ctx, id);
  if (!row || !transactionTransitions[row.status].includes(to)) return;
  transitionTransaction(ctx, id, to, to === 'FAILED' ? { statusCode: 'RAIL_REJECTED' } : {});
}

function formatMinor(ctx: AppContext, minor: bigint, currency: string): string {
  return formatAmount(minor, precisionOf(ctx, currency));
}

function json(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}
