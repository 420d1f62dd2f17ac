import { createHash } from 'node:crypto';
import { assertEnrollmentActive } from '../enrollment/enrollment.service.js';
import { prepared } from '../../db/connection.js';
import { readPage, type PageRequest } from '../../db/page.js';
import type { AppContext } from '../../context.js';
import { precisionOf } from '../../context.js';
import { errors } from '../../core/errors.js';
import type { Page } from '../../core/page.js';
import { formatAmount } from '../../lib/money.js';
import { clampToClockRange } from '../../lib/clock.js';
import { assertTransition } from '../../lib/state-machine.js';
import { scheduleJob } from '../../scheduler/scheduler.js';
import { requireOwnAccount } from '../accounts/accounts.service.js';
import type { Caller } from '../../core/caller.js';
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
import { assertCreditFits, availableOf } from '../ledger/ledger.service.js';
import { createTransaction, InsufficientFundsError, type NewTransaction } from '../transactions/transactions.create.js';
import { getTransactionRow, precisionLookup } from '../transactions/transactions.stored.js';
import { railBehaviourFor, type RailBehaviour } from '../transactions/transactions.rail.js';
import {
  DIRECT_DEBIT_RAIL,
  flowOf,
  otherUsersAccount,
  p2pCreditParty,
  refundAmountError,
  refundCreditInstrument,
  refundCreditRail,
  refundedMinor,
  requireOwnBankAccount,
  requireRefundableDeposit,
} from './intent-flows.js';
import { accountInstrument, type Instrument, type Party } from '../transactions/transactions.schema.js';
import { intentTransitions, type IntentStatus } from './intents.machine.js';
import { toIntent, type CreateIntentInput, type IntentRow, type StoredFee, type TransactionIntent } from './intents.schema.js';

// Transaction intents (docs/money-out.md#transaction-intents, interface 2.3, 3.2, 4.4): a priced preview of a movement
// of funds. Nothing moves until commit; commit creates at most one transaction. Expiry is a job on the emulated
// clock and is also applied lazily whenever an intent is read, so a reader never sees a stale CREATED.

export const INTENT_EXPIRY_JOB = 'intent.expire';

function getIntentRow(ctx: AppContext, id: string): IntentRow | undefined {
  return prepared<IntentRow>(ctx.db, 'SELECT * FROM transaction_intents WHERE id = ?').get(id);
}

function serialize(ctx: AppContext, row: IntentRow): TransactionIntent {
  return toIntent(row, precisionLookup(ctx), creditInstrumentOf(ctx, row));
}

/**
 * Where the money goes, never null (interface 2.3): a refund intent stored before its instrument was always
 * set (docs/decisions.md#refund-party) names the deposit's payer now.
 */
function creditInstrumentOf(ctx: AppContext, row: IntentRow): Instrument {
  if (row.credit_instrument !== null) return JSON.parse(row.credit_instrument) as Instrument;
  return refundCreditInstrument(getTransactionRow(ctx, row.refund_of_transaction_id!)!);
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
  prepared(
    ctx.db,
    `UPDATE transaction_intents SET status = ?, status_reason = ?, related_transaction_id = COALESCE(?, related_transaction_id),
       updated_at = ?, updated_at_ms = ? WHERE id = ?`,
  ).run(to, change.statusReason, change.relatedTransactionId ?? null, at, Date.parse(at), row.id);
  return getIntentRow(ctx, row.id)!;
}

/**
 * docs/decisions.md#intent-expiry: past expiresAt a CREATED intent reads EXPIRED; the change is stamped with expiresAt
 * itself.
 */
function expireIfDue(ctx: AppContext, row: IntentRow): IntentRow {
  if (row.status !== 'CREATED' || ctx.clock.nowMs() < row.expires_at_ms) return row;
  return transitionIntent(ctx, row, 'EXPIRED', { statusReason: `Expired at ${row.expires_at} without a commit`, at: row.expires_at });
}

/** Job handler (intents.domain.ts): expire the intent if it is still waiting for its commit. */
export function runIntentExpiry(ctx: AppContext, payload: Record<string, unknown>): void {
  const row = getIntentRow(ctx, String(payload.intentId));
  if (row) expireIfDue(ctx, row);
}

/** The caller's intent: unknown or another programme's is 404, another user's 403 (docs/decisions.md#status-codes). */
function requireOwnIntent(ctx: AppContext, caller: Caller, intentId: string): IntentRow {
  const row = getIntentRow(ctx, intentId);
  if (!row || row.programme_id !== caller.programmeId) throw errors.notFound(`Transaction intent ${intentId} not found`);
  if (row.user_id !== caller.userId) throw errors.forbidden(`Transaction intent ${intentId} belongs to another user`);
  return row;
}

interface CreditSide {
  type: 'TRANSFER' | 'WITHDRAWAL';
  category: 'P2P' | null;
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
  const credit = input.credit!;
  if (credit.instrumentType === 'ACCOUNT') {
    const other = otherUsersAccount(ctx, caller, credit.accountId);
    if (other) {
      if (input.creditRail) {
        throw errors.field('InvalidValue', 'creditRail', 'creditRail applies to beneficiary instruments; a transfer to another user of the programme is a book transfer without a rail');
      }
      // docs/money-out.md#p2p: the other user's account is credited when this transfer completes, through
      // an incoming TRANSFER of its own (transactions/p2p.ts); no fee, as between own accounts
      return {
        type: 'TRANSFER',
        category: 'P2P',
        creditAccountId: null,
        beneficiaryId: null,
        instrumentId: null,
        currency: other.currency,
        instrument: accountInstrument(other),
        party: p2pCreditParty(ctx, other.user_id),
        rail: null,
        railType: null,
        feeRail: null,
      };
    }
    const target = requireOwnAccount(ctx, caller, credit.accountId);
    if (target.id === debit.id) throw errors.field('InvalidValue', 'credit.accountId', 'credit.accountId must be another account than debitAccountId');
    if (input.creditRail) {
      throw errors.field('InvalidValue', 'creditRail', 'creditRail applies to beneficiary instruments; a transfer between own accounts is a book transfer without a rail');
    }
    return {
      type: 'TRANSFER',
      category: null,
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
    category: null,
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

/** Every column of a new intent that depends on its flow. */
interface IntentPlan {
  type: IntentRow['type'];
  category: IntentRow['category'];
  debitAccountId: string | null;
  creditAccountId: string | null;
  beneficiaryId: string | null;
  instrumentId: string | null;
  refundOf: string | null;
  debitAmountMinor: bigint;
  principalMinor: bigint;
  debitCurrency: string;
  creditAmountMinor: bigint;
  creditCurrency: string;
  debitInstrument: Instrument;
  creditInstrument: Instrument;
  debitParty: Party | null;
  debitRailType: string | null;
  creditParty: Party | null;
  fees: StoredFee[];
  exchangeRate: string;
  baseExchangeRate: string;
  fxSpread: string;
  creditRail: CreditRail | null;
  creditRailType: string | null;
  /** The amount the caller wrote, or null when the emulator chose it (docs/decisions.md#magic-amounts). */
  writtenAmount: 'DEBIT' | 'CREDIT' | null;
}

function exactlyOneAmount(input: CreateIntentInput): { hasDebit: boolean } {
  const hasDebit = input.debitAmount !== undefined && input.debitAmount !== null;
  const hasCredit = input.creditAmount !== undefined && input.creditAmount !== null;
  if (hasDebit === hasCredit) {
    const message = 'Send exactly one of debitAmount (total debit, fees included) and creditAmount (amount to credit)';
    throw errors.invalid(message, hasDebit ? [{ type: 'InvalidValue', fieldRef: 'creditAmount', message }] : [{ type: 'MissingValue', fieldRef: 'creditAmount', message }]);
  }
  return { hasDebit };
}

function storedFees(fees: Array<{ type: string; label: string; amountMinor: bigint; currency: string }>): StoredFee[] {
  return fees.map((fee) => ({ type: fee.type, label: fee.label, amountMinor: fee.amountMinor.toString(), currency: fee.currency }));
}

/** Own transfers, P2P transfers and payouts to beneficiaries: priced by quote() (docs/money-out.md#fees-and-fx). */
function planPayment(ctx: AppContext, caller: Caller, input: CreateIntentInput): IntentPlan {
  const { hasDebit } = exactlyOneAmount(input);
  const debit = requireOwnAccount(ctx, caller, input.debitAccountId!);
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
  // A credit to an account of the programme must fit the ledger (docs/decisions.md#amount-bounds).
  const creditedAccountId = creditedAccountOf(credit.creditAccountId, credit.category, credit.instrument);
  if (creditedAccountId !== null) assertCreditFits(ctx, creditedAccountId, priced.creditAmountMinor, hasDebit ? 'debitAmount' : 'creditAmount');
  return {
    type: credit.type,
    category: credit.category,
    debitAccountId: debit.id,
    creditAccountId: credit.creditAccountId,
    beneficiaryId: credit.beneficiaryId,
    instrumentId: credit.instrumentId,
    refundOf: null,
    debitAmountMinor: priced.debitAmountMinor,
    principalMinor: priced.principalMinor,
    debitCurrency: debit.currency,
    creditAmountMinor: priced.creditAmountMinor,
    creditCurrency: credit.currency,
    debitInstrument: accountInstrument(debit),
    creditInstrument: credit.instrument,
    debitParty: null,
    debitRailType: null,
    creditParty: credit.party,
    fees: storedFees(priced.fees),
    exchangeRate: priced.exchangeRate,
    baseExchangeRate: priced.baseExchangeRate,
    fxSpread: priced.fxSpread,
    creditRail: credit.rail,
    creditRailType: credit.railType,
    writtenAmount: amount.side,
  };
}

/**
 * docs/money-out.md#refunds: the refund of a COMPLETED deposit to its payer over the deposit's rail.
 * debitAmount is optional (default: what is still refundable); no fee is charged (docs/decisions.md#refund-fees).
 */
function planRefund(ctx: AppContext, caller: Caller, input: CreateIntentInput): IntentPlan {
  if (input.creditAmount !== undefined && input.creditAmount !== null) {
    throw errors.field('InvalidValue', 'creditAmount', 'A refund is sized by debitAmount (default: what is still refundable); creditAmount does not apply');
  }
  if (input.creditRail) throw errors.field('InvalidValue', 'creditRail', 'A refund goes back over the rail of the deposit it refunds; creditRail does not apply');
  const account = requireOwnAccount(ctx, caller, input.debitAccountId!);
  const { deposit, refundableMinor } = requireRefundableDeposit(ctx, caller, account, input.refundOf!);
  if (input.creditCurrency !== undefined && input.creditCurrency !== null && input.creditCurrency !== deposit.debit_currency) {
    throw errors.field('InvalidValue', 'creditCurrency', `creditCurrency ${input.creditCurrency} does not match the deposit, which was paid in ${deposit.debit_currency}`);
  }
  const written = input.debitAmount !== undefined && input.debitAmount !== null;
  const amountMinor = written ? parsePositiveAmount(ctx, input.debitAmount!, account.currency, 'debitAmount') : refundableMinor;
  if (amountMinor > refundableMinor) throw refundAmountError(ctx, account.currency, refundableMinor, deposit);
  // same-currency pricing: no fee rail, rate 1 (a stablecoin deposit paid in USDC_ETH is refunded 1:1 in USDC)
  const priced = quote(ctx, { debitCurrency: account.currency, creditCurrency: account.currency, feeRail: null, amount: { side: 'DEBIT', minor: amountMinor }, fieldRefs: { amount: 'debitAmount', currency: 'refundOf' } });
  const whole = amountMinor === BigInt(deposit.credit_amount_minor);
  return {
    type: whole ? 'REFUND' : 'PARTIAL_REFUND',
    category: null,
    debitAccountId: account.id,
    creditAccountId: null,
    beneficiaryId: null,
    instrumentId: null,
    refundOf: deposit.id,
    debitAmountMinor: amountMinor,
    principalMinor: amountMinor,
    debitCurrency: account.currency,
    creditAmountMinor: amountMinor,
    creditCurrency: deposit.debit_currency,
    debitInstrument: accountInstrument(account),
    creditInstrument: refundCreditInstrument(deposit),
    debitParty: null,
    debitRailType: null,
    creditParty: deposit.debit_party === null ? null : (JSON.parse(deposit.debit_party) as Party),
    fees: [],
    exchangeRate: priced.exchangeRate,
    baseExchangeRate: priced.baseExchangeRate,
    fxSpread: priced.fxSpread,
    creditRail: refundCreditRail(deposit.debit_rail),
    creditRailType: deposit.debit_rail,
    writtenAmount: written ? 'DEBIT' : null,
  };
}

/**
 * docs/money-out.md#direct-debits: a DEPOSIT pulled over ACH from the user's own US bank account
 * (a SELF beneficiary) into an own USD account. No fee (docs/decisions.md#direct-debit-fees).
 */
function planDirectDebit(ctx: AppContext, caller: Caller, input: CreateIntentInput): IntentPlan {
  const { hasDebit } = exactlyOneAmount(input);
  const credit = input.credit!;
  if (credit.instrumentType !== 'ACCOUNT') {
    throw errors.field('InvalidValue', 'credit.instrumentType', 'A direct debit credits an account of yours: send credit { instrumentType: "ACCOUNT", accountId }');
  }
  if (input.creditRail) throw errors.field('InvalidValue', 'creditRail', 'A direct debit is pulled over ACH into an account of yours; creditRail does not apply');
  const { instrument, debitInstrument, debitParty } = requireOwnBankAccount(ctx, caller, input.debit!);
  const account = requireOwnAccount(ctx, caller, credit.accountId);
  if (account.currency !== instrument.currency) {
    throw errors.field('InvalidValue', 'credit.accountId', `Account ${account.id} holds ${account.currency}; a direct debit over ACH credits a ${instrument.currency} account`);
  }
  if (input.creditCurrency !== undefined && input.creditCurrency !== null && input.creditCurrency !== account.currency) {
    throw errors.field('InvalidValue', 'creditCurrency', `creditCurrency ${input.creditCurrency} does not match the credit account, which is in ${account.currency}`);
  }
  const field = hasDebit ? 'debitAmount' : 'creditAmount';
  const amountMinor = parsePositiveAmount(ctx, (hasDebit ? input.debitAmount : input.creditAmount)!, account.currency, field);
  const priced = quote(ctx, { debitCurrency: account.currency, creditCurrency: account.currency, feeRail: null, amount: { side: 'DEBIT', minor: amountMinor }, fieldRefs: { amount: field, currency: 'credit' } });
  assertCreditFits(ctx, account.id, amountMinor, field); // docs/decisions.md#amount-bounds
  return {
    type: 'DEPOSIT',
    category: 'DIRECT_DEBIT',
    debitAccountId: null,
    creditAccountId: account.id,
    beneficiaryId: input.debit!.beneficiaryId,
    instrumentId: instrument.id,
    refundOf: null,
    debitAmountMinor: amountMinor,
    principalMinor: amountMinor,
    debitCurrency: instrument.currency,
    creditAmountMinor: amountMinor,
    creditCurrency: account.currency,
    debitInstrument,
    creditInstrument: accountInstrument(account),
    debitParty,
    debitRailType: DIRECT_DEBIT_RAIL,
    creditParty: null,
    fees: [],
    exchangeRate: priced.exchangeRate,
    baseExchangeRate: priced.baseExchangeRate,
    fxSpread: priced.fxSpread,
    creditRail: null,
    creditRailType: null,
    writtenAmount: hasDebit ? 'DEBIT' : 'CREDIT',
  };
}

/** The account of the programme an intent credits (docs/architecture.md#the-account-a-transaction-credits). */
function creditedAccountOf(creditAccountId: string | null, category: string | null, instrument: Instrument | null): string | null {
  if (creditAccountId !== null) return creditAccountId;
  if (category === 'P2P' && instrument?.instrumentType === 'ACCOUNT') return instrument.account.id;
  return null;
}

/**
 * docs/decisions.md#intent-idempotency: 201 with a new intent; the same key and body again returns it (created: false);
 * another body 409.
 */
export function createIntent(ctx: AppContext, caller: Caller, input: CreateIntentInput): { intent: TransactionIntent; created: boolean } {
  return ctx.db.transaction(() => createIntentNow(ctx, caller, input)).immediate();
}

function createIntentNow(ctx: AppContext, caller: Caller, input: CreateIntentInput): { intent: TransactionIntent; created: boolean } {
  const hash = requestHash(input);
  const existing = prepared<IntentRow>(ctx.db, 'SELECT * FROM transaction_intents WHERE user_id = ? AND idempotency_key = ?').get(
    caller.userId,
    input.idempotencyKey,
  );
  if (existing) {
    if (existing.request_hash !== hash) {
      throw errors.conflict(`idempotencyKey ${input.idempotencyKey} was already used for a different request (intent ${existing.id}); use a new key for a new intent`);
    }
    return { intent: serialize(ctx, expireIfDue(ctx, existing)), created: false };
  }

  const flow = flowOf(input);
  const plan = flow === 'REFUND' ? planRefund(ctx, caller, input) : flow === 'DIRECT_DEBIT' ? planDirectDebit(ctx, caller, input) : planPayment(ctx, caller, input);

  const id = ctx.ids.id('intent');
  const now = ctx.clock.nowMs();
  const createdAt = new Date(now).toISOString();
  const expiresAtMs = clampToClockRange(now + ctx.fixtures.timeline.intentExpiryMs); // docs/decisions.md#clock-range
  const expiresAt = new Date(expiresAtMs).toISOString();
  prepared(
    ctx.db,
    `INSERT INTO transaction_intents (id, programme_id, user_id, idempotency_key, request_hash, type, category, status, status_reason,
       debit_account_id, credit_account_id, beneficiary_id, beneficiary_instrument_id, refund_of_transaction_id, debit_amount_minor,
       principal_minor, debit_currency, credit_amount_minor, credit_currency, debit_instrument, credit_instrument, debit_party,
       debit_rail_type, credit_party, fees, exchange_rate, base_exchange_rate, fx_spread, credit_rail, credit_rail_type, debit_memo,
       purpose, amount_written, written_amount, related_transaction_id, expires_at, expires_at_ms, created_at, created_at_ms, updated_at, updated_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, 'CREATED', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?)`,
  ).run(
    id,
    caller.programmeId,
    caller.userId,
    input.idempotencyKey,
    hash,
    plan.type,
    plan.category,
    `Awaiting commit; expires at ${expiresAt}`,
    plan.debitAccountId,
    plan.creditAccountId,
    plan.beneficiaryId,
    plan.instrumentId,
    plan.refundOf,
    plan.debitAmountMinor,
    plan.principalMinor,
    plan.debitCurrency,
    plan.creditAmountMinor,
    plan.creditCurrency,
    JSON.stringify(plan.debitInstrument),
    JSON.stringify(plan.creditInstrument),
    plan.debitParty === null ? null : JSON.stringify(plan.debitParty),
    plan.debitRailType,
    plan.creditParty === null ? null : JSON.stringify(plan.creditParty),
    JSON.stringify(plan.fees),
    plan.exchangeRate,
    plan.baseExchangeRate,
    plan.fxSpread,
    plan.creditRail,
    plan.creditRailType,
    input.debitMemo ?? null,
    input.purpose ?? null,
    plan.writtenAmount !== null ? 1 : 0,
    plan.writtenAmount,
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
  return ctx.db.transaction(() => getIntentNow(ctx, caller, intentId))();
}

function getIntentNow(ctx: AppContext, caller: Caller, intentId: string): TransactionIntent {
  return serialize(ctx, expireIfDue(ctx, requireOwnIntent(ctx, caller, intentId)));
}

// Newest first (ties by id), like the transactions list's default: intents are short-lived previews.
export function listIntents(ctx: AppContext, caller: Caller, page: PageRequest): Page<TransactionIntent> {
  return ctx.db.transaction(() => listIntentsNow(ctx, caller, page))();
}

function listIntentsNow(ctx: AppContext, caller: Caller, page: PageRequest): Page<TransactionIntent> {
  const due = prepared<IntentRow>(ctx.db, "SELECT * FROM transaction_intents WHERE user_id = ? AND status = 'CREATED' AND expires_at_ms <= ?").all(
    caller.userId,
    ctx.clock.nowMs(),
  );
  for (const row of due) expireIfDue(ctx, row);
  return readPage<IntentRow, TransactionIntent>(
    ctx.db,
    { columns: '*', from: 'transaction_intents WHERE user_id = ?', orderBy: 'created_at_ms DESC, id DESC' },
    [caller.userId],
    page,
    (row) => serialize(ctx, row),
  );
}

/** docs/money-out.md#transaction-intents: CREATED -> CANCELED; any other state is a 409. */
export function cancelIntent(ctx: AppContext, caller: Caller, intentId: string): TransactionIntent {
  return ctx.db.transaction(() => cancelIntentNow(ctx, caller, intentId)).immediate();
}

function cancelIntentNow(ctx: AppContext, caller: Caller, intentId: string): TransactionIntent {
  const row = expireIfDue(ctx, requireOwnIntent(ctx, caller, intentId));
  if (row.status !== 'CREATED') throw errors.conflict(`Transaction intent ${row.id} is ${row.status}; only a CREATED intent can be canceled`);
  return serialize(ctx, transitionIntent(ctx, row, 'CANCELED', { statusReason: 'Canceled by the client' }));
}

/**
 * docs/money-out.md#transaction-intents, interface 4.4. The key must be the creation key (else 409). A committed (or
 * failed) intent is returned as it is, so a repeated commit never creates a second transaction; expired and canceled
 * intents are a 409. Not enough available funds: the intent is FAILED with the reason, no transaction.
 */
export function commitIntent(ctx: AppContext, caller: Caller, intentId: string, idempotencyKey: string): TransactionIntent {
  return ctx.db.transaction(() => commitIntentNow(ctx, caller, intentId, idempotencyKey)).immediate();
}

function commitIntentNow(ctx: AppContext, caller: Caller, intentId: string, idempotencyKey: string): TransactionIntent {
  let row = requireOwnIntent(ctx, caller, intentId);
  if (idempotencyKey !== row.idempotency_key) {
    throw errors.conflict(`idempotencyKey does not match the key this intent was created with; send the creation key to commit ${row.id}`);
  }
  row = expireIfDue(ctx, row);
  if (row.status === 'COMMITTED' || row.status === 'FAILED') return serialize(ctx, row);
  if (row.status === 'EXPIRED') throw errors.conflict(`Transaction intent ${row.id} expired at ${row.expires_at}; create a new intent`);
  if (row.status === 'CANCELED') throw errors.conflict(`Transaction intent ${row.id} was canceled; create a new intent`);

  assertEnrollmentActive(ctx, caller.userId); // activation gates money (docs/onboarding.md)

  const debitPrecision = precisionOf(ctx, row.debit_currency);
  const insufficient = (availableMinor: bigint) =>
    transitionIntent(ctx, row, 'FAILED', {
      statusReason: `Insufficient funds: available ${formatAmount(availableMinor, debitPrecision)} ${row.debit_currency} is less than the ${formatAmount(BigInt(row.debit_amount_minor), debitPrecision)} ${row.debit_currency} required`,
    });
  if (row.debit_account_id !== null) {
    const available = availableOf(ctx, row.debit_account_id);
    if (available < BigInt(row.debit_amount_minor)) return serialize(ctx, insufficient(available));
  }
  if (row.refund_of_transaction_id !== null) {
    // Another refund of the same deposit may have been committed since this intent was priced: refunds never
    // add up to more than the deposit (docs/money-out.md#refunds).
    const deposit = getTransactionRow(ctx, row.refund_of_transaction_id)!;
    const refundable = BigInt(deposit.credit_amount_minor) - refundedMinor(ctx, deposit.id);
    if (BigInt(row.debit_amount_minor) > refundable) {
      const reason = `Refund exceeds what is still refundable on deposit ${deposit.id}: ${formatAmount(refundable > 0n ? refundable : 0n, debitPrecision)} ${row.debit_currency}`;
      return serialize(ctx, transitionIntent(ctx, row, 'FAILED', { statusReason: reason }));
    }
  }

  // The credit was checked against the ledger's bound when the intent was priced; balances may have moved
  // since, so it is checked again before anything is written (docs/decisions.md#amount-bounds).
  const creditedAccountId = creditedAccountOf(
    row.credit_account_id,
    row.category,
    creditInstrumentOf(ctx, row),
  );
  if (creditedAccountId !== null) {
    assertCreditFits(ctx, creditedAccountId, BigInt(row.credit_amount_minor), row.written_amount === 'DEBIT' ? 'debitAmount' : 'creditAmount');
  }

  let transactionId: string;
  try {
    transactionId = createTransaction(ctx, transactionFor(ctx, row)).id;
  } catch (error) {
    if (error instanceof InsufficientFundsError) return serialize(ctx, insufficient(error.availableMinor));
    throw error;
  }
  return serialize(ctx, transitionIntent(ctx, row, 'COMMITTED', { statusReason: `Committed: transaction ${transactionId} created`, relatedTransactionId: transactionId }));
}

/**
 * Magic cents read only on the amount the caller wrote: the intent's debitAmount or creditAmount as written,
 * never the other side the emulator converted or derived, and never an amount the emulator chose (a refund
 * of what is still refundable) (docs/decisions.md#magic-amounts).
 */
function writtenRailBehaviour(ctx: AppContext, row: IntentRow): RailBehaviour {
  const side = row.written_amount ?? (row.amount_written === 0 ? null : row.refund_of_transaction_id !== null || row.category === 'DIRECT_DEBIT' ? 'DEBIT' : 'CREDIT');
  if (side === null) return 'NORMAL';
  return side === 'DEBIT'
    ? railBehaviourFor(BigInt(row.debit_amount_minor), precisionOf(ctx, row.debit_currency))
    : railBehaviourFor(BigInt(row.credit_amount_minor), precisionOf(ctx, row.credit_currency));
}

/** The transaction a committed intent creates, per flow (docs/money-out.md#intent-flows). */
function transactionFor(ctx: AppContext, row: IntentRow): NewTransaction {
  const common = {
    programmeId: row.programme_id,
    userId: row.user_id,
    debitAmountMinor: BigInt(row.debit_amount_minor),
    debitCurrency: row.debit_currency,
    debitInstrument: JSON.parse(row.debit_instrument) as Instrument,
    creditAmountMinor: BigInt(row.credit_amount_minor),
    creditCurrency: row.credit_currency,
    creditInstrument: creditInstrumentOf(ctx, row),
    exchangeRate: row.exchange_rate,
    baseExchangeRate: row.base_exchange_rate,
    fxSpread: row.fx_spread,
    purpose: row.purpose,
    intentId: row.id,
  };
  if (row.category === 'DIRECT_DEBIT') {
    const account = prepared<AccountRow>(ctx.db, 'SELECT * FROM accounts WHERE id = ?').get(row.credit_account_id!)!;
    // An incoming pull: credited when it completes on the incoming timeline; .91 cents come back
    // returned (FAILED, R01) instead (docs/money-out.md#direct-debits). An ACH debit carries no memo.
    const behaviour = writtenRailBehaviour(ctx, row);
    return {
      ...common,
      accountId: account.id,
      debitAccountId: null,
      creditAccountId: account.id,
      direction: 'INCOMING',
      type: 'DEPOSIT',
      category: 'DIRECT_DEBIT',
      netDebitAmountMinor: null,
      debitParty: row.debit_party === null ? null : (JSON.parse(row.debit_party) as Party),
      debitRail: row.debit_rail_type,
      debitReference: ctx.ids.digits(15),
      depositReconciliationId: account.deposit_reconciliation_id,
      railBehaviour: behaviour === 'REJECT' ? 'REJECT' : 'NORMAL',
    };
  }
  const outgoing = {
    ...common,
    accountId: row.debit_account_id!,
    debitAccountId: row.debit_account_id!,
    direction: 'OUTGOING' as const,
    debitMemo: row.debit_memo,
    fees: (JSON.parse(row.fees) as StoredFee[]).map((fee) => ({ ...fee, amountMinor: BigInt(fee.amountMinor) })),
    netDebitAmountMinor: BigInt(row.principal_minor),
    creditParty: row.credit_party === null ? null : (JSON.parse(row.credit_party) as Party),
    creditRail: row.credit_rail_type,
  };
  if (row.refund_of_transaction_id !== null) {
    return { ...outgoing, creditAccountId: null, type: row.type, relatedTransactionId: row.refund_of_transaction_id, railBehaviour: writtenRailBehaviour(ctx, row) };
  }
  // own transfer: the target is credited when the transaction completes (docs/decisions.md#ledger); P2P: the other
  // user's account is credited by its own incoming transfer (transactions/p2p.ts)
  return { ...outgoing, creditAccountId: row.credit_account_id, type: row.type, category: row.category ?? undefined, railBehaviour: writtenRailBehaviour(ctx, row) };
}
