import { createHash } from 'node:crypto';
import { assertEnrollmentActive } from '../enrollment/enrollment.service.js';
import { sql } from '../../db/connection.js';
import type { AppContext } from '../../context.js';
import { precisionOf } from '../../context.js';
import { errors } from '../../http/errors.js';
import type { Page } from '../../http/pagination.js';
import { formatAmount } from '../../lib/money.js';
import { assertTransition } from '../../lib/state-machine.js';
import { scheduleJob } from '../../scheduler/scheduler.js';
import { requireOwnAccount, type Caller } from '../accounts/accounts.service.js';
import type { AccountRow } from '../accounts/accounts.schema.js';
import {
  creditInstrumentFor,
  creditPartyFor,
  creditRailTypeFor,
  feeRailFor,
  railsFor,
  requireInstrument,
  requireOwnBeneficiary,
} from '../beneficiaries/beneficiaries.service.js';
import type { CreditRail } from '../fees-fx/fees-fx.schema.js';
import { parsePositiveAmount, quote } from '../fees-fx/fees-fx.service.js';
import { availableOf } from '../ledger/ledger.service.js';
import { createTransaction, InsufficientFundsError, precisionLookup } from '../transactions/transactions.service.js';
import type { Instrument, Party } from '../transactions/transactions.schema.js';
import { intentTransitions, type IntentStatus } from './intents.machine.js';
import { toIntent, type CreateIntentInput, type IntentRow, type StoredFee, type TransactionIntent } from './intents.schema.js';

// Transaction intents (contract 5, interface 2.3, 3.2, 4.4): a priced preview of a movement of funds.
// Nothing moves until commit; commit creates at most one transaction. Expiry is a job on the emulated
// clock and is also applied lazily whenever an intent is read, so a reader never sees a stale CREATED.

export const INTENT_EXPIRY_JOB = 'intent.expire';

/**
 * Enrollment gate for moving money: an INACTIVE user's payouts and intent commits are refused with 403.
 * The single call site of intent commits and payout submissions (issue 7 wires enrollment to it).
 */
export function accountInstrument(account: AccountRow): Instrument {
  return { instrumentType: 'ACCOUNT', account: { id: account.id, displayName: account.display_name, currency: account.currency } };
}

function getIntentRow(ctx: AppContext, id: string): IntentRow | undefined {
  return sql<IntentRow>(ctx.db, 'SELECT * FROM transaction_intents WHERE id = ?').get(id);
}

function serialize(ctx: AppContext, row: IntentRow): TransactionIntent {
  return toIntent(row, precisionLookup(ctx));
}

/** A stable hash of the creation request: keys sorted, absent and null fields dropped. */
function requestHash(input: CreateIntentInput): string {
  const canonical = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map(canonical);
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([, field]) => field !== null && field !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([key, field]) => [key, canonical(field)]),
    );
  };
  return createHash('sha256').update(JSON.stringify(canonical(input))).digest('hex');
}

/** Move an intent along its transition table (invalid moves are a 409) and return the updated row. */
function transitionIntent(
  ctx: AppContext,
  row: IntentRow,
  to: IntentStatus,
  change: { statusReason: string; relatedTransactionId?: string; at?: string },
): IntentRow {
  assertTransition('Transaction intent', intentTransitions, row.status, to);
  const at = change.at ?? ctx.clock.nowIso();
  sql(
    ctx.db,
    `UPDATE transaction_intents SET status = ?, status_reason = ?, related_transaction_id = COALESCE(?, related_transaction_id),
       updated_at = ?, updated_at_ms = ? WHERE id = ?`,
  ).run(to, change.statusReason, change.relatedTransactionId ?? null, at, Date.parse(at), row.id);
  return getIntentRow(ctx, row.id)!;
}

/** Contract 5: past expiresAt a CREATED intent reads EXPIRED; the change is stamped with expiresAt itself. */
function expireIfDue(ctx: AppContext, row: IntentRow): IntentRow {
  if (row.status !== 'CREATED' || ctx.clock.nowMs() < row.expires_at_ms) return row;
  return transitionIntent(ctx, row, 'EXPIRED', { statusReason: `Expired at ${row.expires_at} without a commit`, at: row.expires_at });
}

/** Job handler (scheduler/job-handlers.ts): expire the intent if it is still waiting for its commit. */
export function runIntentExpiry(ctx: AppContext, payload: Record<string, unknown>): void {
  const row = getIntentRow(ctx, String(payload.intentId));
  if (row) expireIfDue(ctx, row);
}

/** The caller's intent: unknown or another programme's is 404, another user's 403 (contract 1). */
function requireOwnIntent(ctx: AppContext, caller: Caller, intentId: string): IntentRow {
  const row = getIntentRow(ctx, intentId);
  if (!row || row.programme_id !== caller.programmeId) throw errors.notFound(`Transaction intent ${intentId} not found`);
  if (row.user_id !== caller.userId) throw errors.forbidden(`Transaction intent ${intentId} belongs to another user`);
  return row;
}

interface CreditSide {
  type: 'TRANSFER' | 'WITHDRAWAL';
  creditAccountId: string | null;
  beneficiaryId: string | null;
  instrumentId: string | null;
  currency: string;
  instrument: Instrument;
  party: Party | null;
  rail: CreditRail | null;
  railType: string | null;
  feeRail: string | null;
}

function resolveCreditSide(ctx: AppContext, caller: Caller, input: CreateIntentInput, debit: AccountRow): CreditSide {
  const { credit } = input;
  if (credit.instrumentType === 'ACCOUNT') {
    const target = requireOwnAccount(ctx, caller, credit.accountId);
    if (target.id === debit.id) throw errors.field('InvalidValue', 'credit.accountId', 'credit.accountId must be another account than debitAccountId');
    if (input.creditRail) {
      throw errors.field('InvalidValue', 'creditRail', 'creditRail applies to beneficiary instruments; a transfer between own accounts is a book transfer without a rail');
    }
    return {
      type: 'TRANSFER',
      creditAccountId: target.id,
      beneficiaryId: null,
      instrumentId: null,
      currency: target.currency,
      instrument: accountInstrument(target),
      party: null,
      rail: null,
      railType: null,
      feeRail: null,
    };
  }
  const beneficiary = requireOwnBeneficiary(ctx, caller, credit.beneficiaryId);
  const instrument = requireInstrument(ctx, beneficiary, credit.instrumentId);
  const expected = instrument.type === 'WALLET' ? 'EXTERNAL_WALLET' : 'BANK_ACCOUNT';
  if (credit.instrumentType !== expected) {
    throw errors.field('InvalidValue', 'credit.instrumentType', `Instrument ${instrument.id} is a ${instrument.type}: send instrumentType ${expected}`);
  }
  const rails = railsFor(instrument);
  const rail = input.creditRail ?? rails[0]!;
  if (!rails.includes(rail)) {
    throw errors.field('InvalidValue', 'creditRail', `Instrument ${instrument.id} cannot be paid over ${rail}; accepted for it: ${rails.join(', ')}`);
  }
  return {
    type: 'WITHDRAWAL',
    creditAccountId: null,
    beneficiaryId: beneficiary.id,
    instrumentId: instrument.id,
    currency: instrument.currency,
    instrument: creditInstrumentFor(instrument),
    party: creditPartyFor(beneficiary),
    rail,
    railType: creditRailTypeFor(instrument, rail),
    feeRail: feeRailFor(instrument, rail),
  };
}

/** Contract 5: 201 with a new intent; the same key and body again returns it (created: false); another body 409. */
export function createIntent(ctx: AppContext, caller: Caller, input: CreateIntentInput): { intent: TransactionIntent; created: boolean } {
  const hash = requestHash(input);
  const existing = sql<IntentRow>(ctx.db, 'SELECT * FROM transaction_intents WHERE user_id = ? AND idempotency_key = ?').get(
    caller.userId,
    input.idempotencyKey,
  );
  if (existing) {
    if (existing.request_hash !== hash) {
      throw errors.conflict(`idempotencyKey ${input.idempotencyKey} was already used for a different request (intent ${existing.id}); use a new key for a new intent`);
    }
    return { intent: serialize(ctx, expireIfDue(ctx, existing)), created: false };
  }

  const hasDebit = input.debitAmount !== undefined && input.debitAmount !== null;
  const hasCredit = input.creditAmount !== undefined && input.creditAmount !== null;
  if (hasDebit === hasCredit) {
    const message = 'Send exactly one of debitAmount (total debit, fees included) and creditAmount (amount to credit)';
    throw errors.invalid(message, hasDebit ? [{ type: 'InvalidValue', fieldRef: 'creditAmount', message }] : [{ type: 'MissingValue', fieldRef: 'creditAmount', message }]);
  }

  const debit = requireOwnAccount(ctx, caller, input.debitAccountId);
  const credit = resolveCreditSide(ctx, caller, input, debit);
  if (input.creditCurrency !== undefined && input.creditCurrency !== null && input.creditCurrency !== credit.currency) {
    throw errors.field('InvalidValue', 'creditCurrency', `creditCurrency ${input.creditCurrency} does not match the credit instrument, which is in ${credit.currency}`);
  }
  const amount = hasDebit
    ? { side: 'DEBIT' as const, minor: parsePositiveAmount(ctx, input.debitAmount!, debit.currency, 'debitAmount') }
    : { side: 'CREDIT' as const, minor: parsePositiveAmount(ctx, input.creditAmount!, credit.currency, 'creditAmount') };
  const priced = quote(ctx, {
    debitCurrency: debit.currency,
    creditCurrency: credit.currency,
    feeRail: credit.feeRail,
    amount,
    fieldRefs: { amount: hasDebit ? 'debitAmount' : 'creditAmount', currency: input.creditCurrency ? 'creditCurrency' : 'credit' },
  });

  const id = ctx.ids.id('intent');
  const now = ctx.clock.nowMs();
  const createdAt = new Date(now).toISOString();
  const expiresAtMs = now + ctx.fixtures.timeline.intentExpiryMs;
  const expiresAt = new Date(expiresAtMs).toISOString();
  const fees: StoredFee[] = priced.fees.map((fee) => ({ type: fee.type, label: fee.label, amountMinor: fee.amountMinor.toString(), currency: fee.currency }));
  sql(
    ctx.db,
    `INSERT INTO transaction_intents (id, programme_id, user_id, idempotency_key, request_hash, type, status, status_reason,
       debit_account_id, credit_account_id, beneficiary_id, beneficiary_instrument_id, debit_amount_minor, principal_minor, debit_currency,
       credit_amount_minor, credit_currency, debit_instrument, credit_instrument, credit_party, fees, exchange_rate, base_exchange_rate,
       fx_spread, credit_rail, credit_rail_type, debit_memo, purpose, related_transaction_id, expires_at, expires_at_ms,
       created_at, created_at_ms, updated_at, updated_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, 'CREATED', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?)`,
  ).run(
    id,
    caller.programmeId,
    caller.userId,
    input.idempotencyKey,
    hash,
    credit.type,
    `Awaiting commit; expires at ${expiresAt}`,
    debit.id,
    credit.creditAccountId,
    credit.beneficiaryId,
    credit.instrumentId,
    priced.debitAmountMinor,
    priced.principalMinor,
    debit.currency,
    priced.creditAmountMinor,
    credit.currency,
    JSON.stringify(accountInstrument(debit)),
    JSON.stringify(credit.instrument),
    credit.party === null ? null : JSON.stringify(credit.party),
    JSON.stringify(fees),
    priced.exchangeRate,
    priced.baseExchangeRate,
    priced.fxSpread,
    credit.rail,
    credit.railType,
    input.debitMemo ?? null,
    input.purpose ?? null,
    expiresAt,
    expiresAtMs,
    createdAt,
    now,
    createdAt,
    now,
  );
  scheduleJob(ctx, INTENT_EXPIRY_JOB, expiresAtMs, { intentId: id });
  return { intent: serialize(ctx, getIntentRow(ctx, id)!), created: true };
}

export function getIntent(ctx: AppContext, caller: Caller, intentId: string): TransactionIntent {
  return serialize(ctx, expireIfDue(ctx, requireOwnIntent(ctx, caller, intentId)));
}

// Newest first (ties by id), like the transactions list's default: intents are short-lived previews.
export function listIntents(ctx: AppContext, caller: Caller, page: { pageIndex: number; pageSize: number }): Page<TransactionIntent> {
  const due = sql<IntentRow>(ctx.db, "SELECT * FROM transaction_intents WHERE user_id = ? AND status = 'CREATED' AND expires_at_ms <= ?").all(
    caller.userId,
    ctx.clock.nowMs(),
  );
  for (const row of due) expireIfDue(ctx, row);
  const rows = sql<IntentRow>(
    ctx.db,
    'SELECT * FROM transaction_intents WHERE user_id = ? ORDER BY created_at_ms DESC, id DESC LIMIT ? OFFSET ?',
  ).all(caller.userId, page.pageSize, page.pageIndex * page.pageSize);
  const total = sql<{ n: number }>(ctx.db, 'SELECT COUNT(*) AS n FROM transaction_intents WHERE user_id = ?').get(caller.userId)!;
  return { data: rows.map((row) => serialize(ctx, row)), pageIndex: page.pageIndex, pageSize: page.pageSize, totalRecords: total.n };
}

/** Contract 5: CREATED -> CANCELED; any other state is a 409. */
export function cancelIntent(ctx: AppContext, caller: Caller, intentId: string): TransactionIntent {
  const row = expireIfDue(ctx, requireOwnIntent(ctx, caller, intentId));
  if (row.status !== 'CREATED') throw errors.conflict(`Transaction intent ${row.id} is ${row.status}; only a CREATED intent can be canceled`);
  return serialize(ctx, transitionIntent(ctx, row, 'CANCELED', { statusReason: 'Canceled by the client' }));
}

/**
 * Interface 4.4 / contract 5. The key must be the creation key (else 409). A committed (or failed) intent
 * is returned as it is, so a repeated commit never creates a second transaction; expired and canceled
 * intents are a 409. Not enough available funds: the intent is FAILED with the reason, no transaction.
 */
export function commitIntent(ctx: AppContext, caller: Caller, intentId: string, idempotencyKey: string): TransactionIntent {
  let row = requireOwnIntent(ctx, caller, intentId);
  if (idempotencyKey !== row.idempotency_key) {
    throw errors.conflict(`idempotencyKey does not match the key this intent was created with; send the creation key to commit ${row.id}`);
  }
  row = expireIfDue(ctx, row);
  if (row.status === 'COMMITTED' || row.status === 'FAILED') return serialize(ctx, row);
  if (row.status === 'EXPIRED') throw errors.conflict(`Transaction intent ${row.id} expired at ${row.expires_at}; create a new intent`);
  if (row.status === 'CANCELED') throw errors.conflict(`Transaction intent ${row.id} was canceled; create a new intent`);

  assertEnrollmentActive(ctx, caller.userId); // issue 7: activation gates money

  const debitPrecision = precisionOf(ctx, row.debit_currency);
  const available = availableOf(ctx, row.debit_account_id);
  const insufficient = (availableMinor: bigint) =>
    transitionIntent(ctx, row, 'FAILED', {
      statusReason: `Insufficient funds: available ${formatAmount(availableMinor, debitPrecision)} ${row.debit_currency} is less than the ${formatAmount(BigInt(row.debit_amount_minor), debitPrecision)} ${row.debit_currency} required`,
    });
  if (available < BigInt(row.debit_amount_minor)) return serialize(ctx, insufficient(available));

  let transactionId: string;
  try {
    const fees = (JSON.parse(row.fees) as StoredFee[]).map((fee) => ({ ...fee, amountMinor: BigInt(fee.amountMinor) }));
    const transaction = createTransaction(ctx, {
      programmeId: row.programme_id,
      userId: row.user_id,
      accountId: row.debit_account_id,
      debitAccountId: row.debit_account_id,
      // own-account transfer: the target is credited when the transaction completes (contract 4)
      creditAccountId: row.credit_account_id,
      direction: 'OUTGOING',
      type: row.type,
      debitAmountMinor: BigInt(row.debit_amount_minor),
      netDebitAmountMinor: BigInt(row.principal_minor),
      debitCurrency: row.debit_currency,
      debitInstrument: JSON.parse(row.debit_instrument) as Instrument,
      debitMemo: row.debit_memo,
      creditAmountMinor: BigInt(row.credit_amount_minor),
      creditCurrency: row.credit_currency,
      creditParty: row.credit_party === null ? null : (JSON.parse(row.credit_party) as Party),
      creditRail: row.credit_rail_type,
      creditInstrument: JSON.parse(row.credit_instrument) as Instrument,
      fees,
      exchangeRate: row.exchange_rate,
      baseExchangeRate: row.base_exchange_rate,
      fxSpread: row.fx_spread,
      purpose: row.purpose,
      intentId: row.id,
      // railBehaviour omitted: the core applies the magic amounts of contract 4 to the amount sent
    });
    transactionId = transaction.id;
  } catch (error) {
    if (error instanceof InsufficientFundsError) return serialize(ctx, insufficient(error.availableMinor));
    throw error;
  }
  return serialize(ctx, transitionIntent(ctx, row, 'COMMITTED', { statusReason: `Committed: transaction ${transactionId} created`, relatedTransactionId: transactionId }));
}
