import { prepared } from '../../db/connection.js';
import type { AppContext } from '../../context.js';
import { precisionOf } from '../../context.js';
import { availableOf, entriesOfTransaction, postEntry } from '../ledger/ledger.service.js';
import { formatAmount } from '../../lib/money.js';
import type { TransactionStatus } from './transactions.machine.js';
import { toTransaction, type Fee, type Instrument, type Party, type Transaction, type TransactionRow } from './transactions.schema.js';
import { emitTransactionEvent, precisionLookup } from './transactions.stored.js';
import { scheduleNextRailStep, type RailBehaviour } from './transactions.rail.js';

// Creating a transaction, with the ledger rules every caller must keep and the hold on its debit. It runs
// in its own SQLite transaction (a savepoint when the caller already has one), so a failure half-way
// leaves nothing behind.

export interface FeeInput {
  type: string;
  label: string;
  amountMinor: bigint;
  /** Fees are charged on the debit side (docs/decisions.md#fees): this must be the debit currency. */
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
  /**
   * Debit net of fees, when a net figure exists (interface 2.4: absent is not zero). Omitted (undefined)
   * with fees: debit minus fees. Explicit null: no net figure.
   */
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
  /**
   * How the sandbox rail treats the transaction (default NORMAL). The flow that knows which amount the caller
   * wrote passes `railBehaviourFor(thatAmount)`: magic cents are never read on a converted or derived amount
   * (docs/decisions.md#magic-amounts).
   */
  railBehaviour?: RailBehaviour;
  /** Fixture history only: a settled record with given instants, no events and no timeline. */
  history?: { status: 'COMPLETED' | 'FAILED'; createdAt: string; completedAt: string };
}

export class InsufficientFundsError extends Error {
  override name = 'InsufficientFundsError';

  constructor(
    readonly accountId: string,
    readonly availableMinor: bigint,
    readonly requiredMinor: bigint,
  ) {
    super(`Insufficient funds in ${accountId}: available ${availableMinor} minor units, required ${requiredMinor}`);
  }
}

/**
 * The rail of a debit leg that moves on the platform's own books (a payment out of an account, a funding
 * without an outside payer): `<COUNTRY>.<CURRENCY>.INTERNAL`, or `INTERNAL.<CURRENCY>` for an account without
 * a country (stablecoin). debitRail is never null (interface 2.4 types it as a string;
 * docs/decisions.md#debit-rail).
 */
function bookRailFrom(country: string | null, currency: string): string {
  return country ? `${country}.${currency}.INTERNAL` : `INTERNAL.${currency}`;
}

/** A caller of the core broke one of its rules (a programming error, not bad client input). */
export class LedgerRuleError extends Error {
  override name = 'LedgerRuleError';
}

interface LedgerAccountRow {
  id: string;
  user_id: string;
  programme_id: string;
  currency: string;
  parent_account_id: string | null;
  country: string | null;
}

/** Checks the rules and returns the accounts it read, by id, so the caller reads none of them again. */
function checkLedgerRules(ctx: AppContext, input: NewTransaction, feeTotal: bigint): Map<string, LedgerAccountRow> {
  const fail = (message: string) => {
    throw new LedgerRuleError(`createTransaction: ${message}`);
  };
  if (input.debitAmountMinor <= 0n) fail(`debitAmountMinor must be positive, got ${input.debitAmountMinor}`);
  if (input.creditAmountMinor <= 0n) fail(`creditAmountMinor must be positive, got ${input.creditAmountMinor}`);
  for (const fee of input.fees ?? []) {
    if (fee.amountMinor < 0n) fail(`fee ${fee.label} is negative`);
    if (fee.currency !== input.debitCurrency) fail(`fee ${fee.label} is in ${fee.currency}; fees are charged in the debit currency ${input.debitCurrency}`);
  }
  if (feeTotal > input.debitAmountMinor) fail(`fees ${feeTotal} exceed the debit amount ${input.debitAmountMinor}`);
  // An entry posted in another currency than its account's would make the balance meaningless.
  const read = new Map<string, LedgerAccountRow>();
  const accountOf = (id: string): LedgerAccountRow | undefined => {
    let account = read.get(id);
    if (!account) {
      account = prepared<LedgerAccountRow>(ctx.db, 'SELECT id, user_id, programme_id, currency, parent_account_id, country FROM accounts WHERE id = ?').get(id);
      if (account) read.set(id, account);
    }
    return account;
  };
  const listed = accountOf(input.accountId);
  if (!listed || listed.parent_account_id !== null || listed.user_id !== input.userId || listed.programme_id !== input.programmeId) {
    fail(`accountId ${input.accountId} must be a top-level account of user ${input.userId} in programme ${input.programmeId}`);
  }
  for (const [side, id, currency] of [
    ['debit', input.debitAccountId, input.debitCurrency],
    ['credit', input.creditAccountId, input.creditCurrency],
  ] as const) {
    if (!id) continue;
    const account = accountOf(id);
    if (!account) fail(`${side} account ${id} does not exist`);
    else {
      if (account.currency !== currency) fail(`${side} account ${id} holds ${account.currency}, not ${currency}`);
      if (account.programme_id !== input.programmeId) fail(`${side} account ${id} is not in programme ${input.programmeId}`);
      // Every ledger account a transaction moves belongs to its user: funds never leave or reach another
      // user's account through it.
      if (account.user_id !== input.userId) fail(`${side} account ${id} belongs to another user than ${input.userId}`);
    }
  }
  return read;
}

/**
 * Create a transaction. An outgoing one holds its debit (amount and each fee as separate entries) at once;
 * if `available` cannot cover it, InsufficientFundsError is thrown and nothing is written, unless
 * `failOnInsufficientFunds` is set, in which case the transaction is recorded FAILED with
 * statusCode INSUFFICIENT_FUNDS and no entries (docs/decisions.md#payout-insufficient-funds). The balance check and the
 * hold are one IMMEDIATE SQLite transaction, so no other writer (another request, or another process on the same
 * database file) can spend the same funds in between: `available` never goes below zero.
 */
export function createTransaction(ctx: AppContext, input: NewTransaction, options: { failOnInsufficientFunds?: boolean } = {}): TransactionRow {
  return ctx.db.transaction(() => createTransactionNow(ctx, input, options)).immediate();
}

function createTransactionNow(ctx: AppContext, input: NewTransaction, options: { failOnInsufficientFunds?: boolean }): TransactionRow {
  const fees = input.fees ?? [];
  const feeTotal = fees.reduce((sum, fee) => sum + fee.amountMinor, 0n);
  const accounts = checkLedgerRules(ctx, input, feeTotal);
  const id = input.id ?? ctx.ids.id('transaction');
  const createdAt = input.history?.createdAt ?? ctx.clock.nowIso();
  let status: TransactionStatus = input.history?.status ?? 'PENDING';
  let statusCode = input.statusCode ?? null;
  let statusReason = input.statusReason ?? null;

  if (input.debitAccountId) {
    const availableMinor = availableOf(ctx, input.debitAccountId);
    if (availableMinor < input.debitAmountMinor) {
      // Fixture history must be consistent too: a history debit that overdraws is a fixtures error.
      if (input.history || !options.failOnInsufficientFunds) throw new InsufficientFundsError(input.debitAccountId, availableMinor, input.debitAmountMinor);
      status = 'FAILED';
      statusCode = 'INSUFFICIENT_FUNDS';
      const precision = precisionOf(ctx, input.debitCurrency);
      statusReason = `Insufficient funds: available ${formatAmount(availableMinor, precision)} ${input.debitCurrency} is less than the ${formatAmount(input.debitAmountMinor, precision)} ${input.debitCurrency} required`;
    }
  }

  const netDebitAmountMinor = input.netDebitAmountMinor !== undefined ? input.netDebitAmountMinor : fees.length > 0 ? input.debitAmountMinor - feeTotal : null;
  const railBehaviour: RailBehaviour = input.history
    ? 'NONE'
    : (input.railBehaviour ?? 'NORMAL');
  const feesJson: Fee[] = fees.map((fee) => ({
    type: fee.type,
    label: fee.label,
    amount: formatMinor(ctx, fee.amountMinor, fee.currency),
    currency: fee.currency,
  }));
  const completedAt = status === 'COMPLETED' ? (input.history?.completedAt ?? createdAt) : null;
  const updatedAt = input.history ? (input.history.completedAt ?? createdAt) : createdAt;
  // The row as the INSERT writes it, with its REST form stored by the same INSERT (docs/architecture.md#row-to-json):
  // one write of the row, no second UPDATE and read back. Amounts are numbers here, as `SELECT *` returns them, so the
  // stored text is what a rebuild from the read row gives (test/domains/transactions/stored-json.test.ts).
  const row: TransactionRow = {
    id,
    programme_id: input.programmeId,
    user_id: input.userId,
    account_id: input.accountId,
    debit_account_id: input.debitAccountId,
    credit_account_id: input.creditAccountId,
    direction: input.direction,
    type: input.type,
    status,
    status_reason: statusReason,
    status_code: statusCode,
    category: input.category ?? null,
    reference_number: ctx.ids.reference(),
    external_id: input.externalId ?? null,
    deposit_reconciliation_id: input.depositReconciliationId ?? null,
    related_transaction_id: input.relatedTransactionId ?? null,
    debit_amount_minor: Number(input.debitAmountMinor),
    net_debit_amount_minor: netDebitAmountMinor === null ? null : Number(netDebitAmountMinor),
    debit_currency: input.debitCurrency,
    debit_party: json(input.debitParty),
    debit_rail: input.debitRail ?? bookRailFrom(accounts.get(input.debitAccountId ?? input.accountId)?.country ?? null, input.debitCurrency),
    debit_memo: input.debitMemo ?? null,
    debit_reference: input.debitReference ?? null,
    debit_entry_descriptor: input.debitEntryDescriptor ?? null,
    debit_instrument: json(input.debitInstrument),
    credit_amount_minor: Number(input.creditAmountMinor),
    credit_currency: input.creditCurrency,
    credit_party: json(input.creditParty),
    credit_rail: input.creditRail ?? null,
    credit_instrument: json(input.creditInstrument),
    fees: JSON.stringify(feesJson),
    exchange_rate: input.exchangeRate ?? null,
    base_exchange_rate: input.baseExchangeRate ?? null,
    fx_spread: input.fxSpread ?? null,
    tags: '[]',
    purpose: input.purpose ?? null,
    rail_behaviour: railBehaviour,
    intent_id: input.intentId ?? null,
    created_at: createdAt,
    created_at_ms: Date.parse(createdAt),
    updated_at: updatedAt,
    updated_at_ms: Date.parse(updatedAt),
    completed_at: completedAt,
  };
  const transaction = toTransaction(row, precisionLookup(ctx));
  const restJson = JSON.stringify(transaction);
  prepared(
    ctx.db,
    `INSERT INTO transactions (
      id, programme_id, user_id, account_id, debit_account_id, credit_account_id, direction, type, status, status_reason,
      status_code, category, reference_number, external_id, deposit_reconciliation_id, related_transaction_id,
      debit_amount_minor, net_debit_amount_minor, debit_currency, debit_party, debit_rail, debit_memo, debit_reference,
      debit_entry_descriptor, debit_instrument, credit_amount_minor, credit_currency, credit_party, credit_rail,
      credit_instrument, fees, exchange_rate, base_exchange_rate, fx_spread, tags, purpose, rail_behaviour, intent_id,
      created_at, created_at_ms, updated_at, updated_at_ms, completed_at, rest_json
    ) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    row.id,
    row.programme_id,
    row.user_id,
    row.account_id,
    row.debit_account_id,
    row.credit_account_id,
    row.direction,
    row.type,
    row.status,
    row.status_reason,
    row.status_code,
    row.category,
    row.reference_number,
    row.external_id,
    row.deposit_reconciliation_id,
    row.related_transaction_id,
    input.debitAmountMinor, // the exact integer (the row's number is what a read returns)
    netDebitAmountMinor,
    row.debit_currency,
    row.debit_party,
    row.debit_rail,
    row.debit_memo,
    row.debit_reference,
    row.debit_entry_descriptor,
    row.debit_instrument,
    input.creditAmountMinor,
    row.credit_currency,
    row.credit_party,
    row.credit_rail,
    row.credit_instrument,
    row.fees,
    row.exchange_rate,
    row.base_exchange_rate,
    row.fx_spread,
    row.tags,
    row.purpose,
    row.rail_behaviour,
    row.intent_id,
    row.created_at,
    row.created_at_ms,
    row.updated_at,
    row.updated_at_ms,
    row.completed_at,
    restJson,
  );

  // A transaction recorded FAILED for insufficient funds never held anything.
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

  // the row as a read would now return it: `SELECT *` carries rest_json, which the row type leaves out
  const stored = { ...row, rest_json: restJson } as TransactionRow;
  if (!input.history) {
    emitTransactionEvent(ctx, stored, transaction, 'transaction_created');
    if (status !== 'FAILED') scheduleNextRailStep(ctx, stored);
  }
  return stored;
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

/** docs/decisions.md#ledger: a failed transaction's hold is released by posting the reversal of each debit entry. */
export function reverseHold(ctx: AppContext, transactionId: string, postedAt?: string): void {
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

export function typeLabel(type: Transaction['type'], category: Transaction['category'] | undefined): string {
  if (category === 'INTERNAL_SWEEP') return 'Internal sweep';
  return type.charAt(0) + type.slice(1).toLowerCase().replace('_', ' ');
}

function describe(input: NewTransaction): string {
  const counterparty =
    input.direction === 'INCOMING'
      ? input.debitParty?.partyType === 'PAYER'
        ? input.debitParty.payer.displayName
        : null
      : input.creditParty?.partyType === 'BENEFICIARY'
        ? (input.creditParty.beneficiary.business?.name ?? input.creditParty.beneficiary.person?.name ?? null)
        : input.creditParty?.partyType === 'PAYER'
          ? input.creditParty.payer.displayName // a refund names the payer it returns to (docs/money-out.md#refunds)
          : null;
  const label = typeLabel(input.type, input.category);
  return counterparty ? `${label} ${input.direction === 'INCOMING' ? 'from' : 'to'} ${counterparty}` : label;
}

function formatMinor(ctx: AppContext, minor: bigint, currency: string): string {
  return formatAmount(minor, precisionOf(ctx, currency));
}

function json(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}
