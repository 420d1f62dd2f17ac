import { prepared } from '../db/connection.js';
import type { AppContext } from '../context.js';
import { precisionOf } from '../context.js';
import { errors } from '../core/errors.js';
import { MoneyFormatError, formatAmount, parseAmount } from '../lib/money.js';
import type { AccountRow } from '../domains/accounts/accounts.schema.js';
import { assertCreditFits } from '../domains/ledger/ledger.service.js';
import type { DepositInstructionRow } from '../domains/deposit-instructions/deposit-instructions.schema.js';
import { maskOf } from '../domains/beneficiaries/bank-validation.js';
import type { InjectTransactionBody, ReturnTransactionBody } from './transactions.schema.js';
import type { TransactionStatus } from '../domains/transactions/transactions.machine.js';
import { accountInstrument, type Instrument, type Party, type Transaction, type TransactionRow } from '../domains/transactions/transactions.schema.js';
import { InsufficientFundsError, createTransaction, type NewTransaction } from '../domains/transactions/transactions.create.js';
import { getTransactionRow, transactionJson } from '../domains/transactions/transactions.stored.js';
import { transitionTransaction } from '../domains/transactions/transactions.transition.js';
import { controlPlaneAccount } from './accounts.service.js';

// The control plane's transaction writes (docs/control-plane.md#transactions): injection of any
// transaction into an account, and returns of completed outgoing transactions. Both go through the one
// transaction core (createTransaction / transitionTransaction), so the ledger entries, the state machine,
// the rail timeline and the webhooks are exactly those of the live flows.

/** Amount rows are read back as JS numbers: an amount or balance must stay within 2^53 - 1 minor units. */
const MAX_MINOR = BigInt(Number.MAX_SAFE_INTEGER);

function parseMinor(ctx: AppContext, value: string, currency: string, fieldRef: string): bigint {
  const precision = precisionOf(ctx, currency);
  let minor: bigint;
  try {
    minor = parseAmount(value, precision);
  } catch (error) {
    if (error instanceof MoneyFormatError) throw errors.field('InvalidFormat', fieldRef, `${fieldRef} ${error.message}`);
    throw error;
  }
  if (minor <= 0n) throw errors.field('InvalidValue', fieldRef, `${fieldRef} must be greater than zero; got "${value}"`);
  if (minor > MAX_MINOR) {
    throw errors.field('InvalidValue', fieldRef, `${fieldRef} is larger than the ledger holds (at most ${formatAmount(MAX_MINOR, precision)} ${currency})`);
  }
  return minor;
}

/**
 * A deposit instruction as the instrument the funds arrived through (docs/decisions.md#virtual-account-instrument):
 * its bank account number, IBAN or wallet address, masked to the last four characters as every number
 * the API shows.
 */
export function virtualAccountInstrument(instruction: DepositInstructionRow, currency: string): Instrument {
  const fields = JSON.parse(instruction.fields) as Array<{ key: string; value: string }>;
  const number = fields.find((field) => field.key === 'accountNumber' || field.key === 'iban' || field.key === 'walletAddress')?.value ?? instruction.wallet_address ?? instruction.id;
  return { instrumentType: 'VIRTUAL_ACCOUNT', virtualAccount: { id: instruction.id, displayName: instruction.name, currency, mask: maskOf(number) } };
}

/** A party's name must say something: empty or whitespace-only names are refused (docs/decisions.md#blank-names). */
function requireNamedParty(party: Party | null | undefined, fieldRef: string): void {
  if (!party) return;
  const [ref, name] =
    party.partyType === 'PAYER'
      ? [`${fieldRef}.payer.displayName`, party.payer.displayName]
      : party.beneficiary.business
        ? [`${fieldRef}.beneficiary.business.name`, party.beneficiary.business.name]
        : [`${fieldRef}.beneficiary.person.name`, party.beneficiary.person?.name];
  if (name !== undefined && name.trim().length === 0) throw errors.field('InvalidValue', ref, `${ref} must not be empty or only spaces`);
}

/** The rate the two amounts imply (credit per unit of debit), to 8 decimals, for a cross-currency injection. */
function impliedRate(debitMinor: bigint, debitPrecision: number, creditMinor: bigint, creditPrecision: number): string {
  const scale = 8;
  const units = (creditMinor * 10n ** BigInt(debitPrecision + scale)) / (debitMinor * 10n ** BigInt(creditPrecision));
  return formatAmount(units, scale).replace(/\.?0+$/, '') || '0';
}

/**
 * The legal steps from PENDING to a target status (transactions.machine.ts, docs/decisions.md#forced-status): outgoing
 * passes PROCESSING.
 */
function pathTo(direction: 'INCOMING' | 'OUTGOING', target: TransactionStatus): TransactionStatus[] {
  if (target === 'PENDING') return [];
  if (target === 'PROCESSING') return ['PROCESSING'];
  return direction === 'OUTGOING' ? ['PROCESSING', target] : [target];
}

/**
 * POST /_emulator/accounts/{accountId}/transactions. The transaction is created PENDING (transaction_created)
 * and then, when a target status is given, walked to it one legal transition at a time, each a status write
 * with its ledger effect and its transaction_status_updated event; it is then held there (no further rail
 * step; move it on with POST /_emulator/transactions/{id}/status). Without a target it follows the rail
 * timeline on the emulated clock like a live transaction (magic amounts never apply: the caller chose).
 */
export function injectTransaction(ctx: AppContext, accountId: string, body: InjectTransactionBody): Transaction {
  return ctx.db.transaction(() => {
    const account = controlPlaneAccount(ctx, accountId);
    const incoming = body.direction === 'INCOMING';
    const ownSide = incoming ? 'credit' : 'debit';
    const otherSide = incoming ? 'debit' : 'credit';
    const ownCurrency = (incoming ? body.creditCurrency : body.debitCurrency) ?? account.currency;
    if (ownCurrency !== account.currency) {
      throw errors.field('InvalidValue', `${ownSide}Currency`, `${ownSide}Currency must be ${account.currency}, the currency of account ${account.id} (the ${ownSide} side of an ${body.direction} transaction is the account)`);
    }
    const ownText = incoming ? body.creditAmount : body.debitAmount;
    if (ownText === undefined) {
      throw errors.field('MissingValue', `${ownSide}Amount`, `${ownSide}Amount is required: the amount ${incoming ? 'credited to' : 'debited from'} account ${account.id}, in ${account.currency}`);
    }
    const ownMinor = parseMinor(ctx, ownText, account.currency, `${ownSide}Amount`);
    const otherCurrency = (incoming ? body.debitCurrency : body.creditCurrency) ?? account.currency;
    precisionOf(ctx, otherCurrency, `${otherSide}Currency`);
    const otherText = incoming ? body.debitAmount : body.creditAmount;
    if (otherText === undefined && otherCurrency !== account.currency) {
      throw errors.field('MissingValue', `${otherSide}Amount`, `${otherSide}Amount is required when ${otherSide}Currency (${otherCurrency}) differs from the account currency ${account.currency}`);
    }
    const otherMinor = otherText === undefined ? ownMinor : parseMinor(ctx, otherText, otherCurrency, `${otherSide}Amount`);
    const [debitMinor, debitCurrency, creditMinor, creditCurrency] = incoming
      ? [otherMinor, otherCurrency, ownMinor, account.currency]
      : [ownMinor, account.currency, otherMinor, otherCurrency];
    if (incoming) assertCreditFits(ctx, account.id, ownMinor, 'creditAmount'); // docs/decisions.md#amount-bounds

    let instruction: DepositInstructionRow | undefined;
    if (body.depositInstructionId !== undefined) {
      if (!incoming) throw errors.field('InvalidValue', 'depositInstructionId', 'depositInstructionId applies to INCOMING transactions only (the instruction the funds arrived through)');
      instruction = prepared<DepositInstructionRow>(ctx.db, 'SELECT * FROM deposit_instructions WHERE id = ? AND account_id = ?').get(body.depositInstructionId, account.id);
      if (!instruction) {
        const message = `depositInstructionId ${body.depositInstructionId} is not a deposit instruction of account ${account.id}`;
        throw errors.field('NotFound', 'depositInstructionId', message);
      }
    }
    if (body.relatedTransactionId !== undefined) {
      const related = getTransactionRow(ctx, body.relatedTransactionId);
      if (!related || related.programme_id !== account.programme_id) {
        const message = `relatedTransactionId ${body.relatedTransactionId} is not a transaction of programme ${account.programme_id}`;
        throw errors.field('NotFound', 'relatedTransactionId', message);
      }
    }
    if (body.statusCode !== undefined && body.status === undefined) {
      throw errors.field('InvalidValue', 'statusCode', 'statusCode is recorded with a target status: send status too (e.g. "FAILED")');
    }

    requireNamedParty(body.debitParty, 'debitParty');
    requireNamedParty(body.creditParty, 'creditParty');

    const country = account.country ?? null;
    const debitRail =
      body.debitRail ?? instruction?.rail_type ?? (country ? `${country}.${debitCurrency}.INTERNAL` : `INTERNAL.${debitCurrency}`);
    // interface 2.4: debitMemo is absent on ACH (docs/decisions.md#ach-debit-memo)
    if (body.debitMemo !== undefined && /\.ACH$/.test(debitRail)) {
      throw errors.field('InvalidValue', 'debitMemo', `debitMemo does not travel on ACH (debitRail ${debitRail}): an ACH debit carries no remittance memo; use debitReference or debitEntryDescriptor`);
    }
    const exchangeRate =
      body.exchangeRate ?? (debitCurrency === creditCurrency ? '1' : impliedRate(debitMinor, precisionOf(ctx, debitCurrency), creditMinor, precisionOf(ctx, creditCurrency)));
    const input: NewTransaction = {
      programmeId: account.programme_id,
      userId: account.user_id,
      accountId: account.id,
      debitAccountId: incoming ? null : account.id,
      creditAccountId: incoming ? account.id : null,
      direction: body.direction,
      type: body.type,
      category: body.category ?? null,
      debitAmountMinor: debitMinor,
      netDebitAmountMinor: null,
      debitCurrency,
      debitParty: body.debitParty ?? null,
      debitRail,
      debitMemo: body.debitMemo ?? null,
      debitReference: body.debitReference ?? null,
      debitEntryDescriptor: body.debitEntryDescriptor ?? null,
      debitInstrument: body.debitInstrument !== undefined ? body.debitInstrument : incoming ? null : accountInstrument(account),
      creditAmountMinor: creditMinor,
      creditCurrency,
      creditParty: body.creditParty ?? null,
      creditRail: body.creditRail ?? null,
      creditInstrument:
        body.creditInstrument !== undefined
          ? body.creditInstrument
          : incoming
            ? instruction
              ? virtualAccountInstrument(instruction, account.currency)
              : accountInstrument(account)
            : null,
      exchangeRate,
      baseExchangeRate: exchangeRate,
      fxSpread: '0',
      purpose: body.purpose ?? null,
      externalId: body.externalId ?? null,
      depositReconciliationId: incoming && body.type === 'DEPOSIT' ? account.deposit_reconciliation_id : null,
      relatedTransactionId: body.relatedTransactionId ?? null,
      // Held at PENDING, the code and reason are part of the creation (and of transaction_created).
      statusCode: body.status === 'PENDING' ? (body.statusCode ?? null) : null,
      statusReason: body.status === 'PENDING' || body.status === undefined ? (body.statusReason ?? null) : null,
      // A target status holds the transaction there; without one the rail timeline runs.
      railBehaviour: body.status === undefined ? 'NORMAL' : 'NONE',
    };
    let row: TransactionRow;
    try {
      row = createTransaction(ctx, input);
    } catch (error) {
      if (error instanceof InsufficientFundsError) {
        const precision = precisionOf(ctx, account.currency);
        throw errors.conflict(
          `Account ${account.id} has ${formatAmount(error.availableMinor, precision)} ${account.currency} available, less than the ${formatAmount(error.requiredMinor, precision)} ${account.currency} to debit; nothing was written`,
        );
      }
      throw error;
    }
    const steps = pathTo(body.direction, body.status ?? 'PENDING');
    steps.forEach((status, index) => {
      const last = index === steps.length - 1;
      const details: { statusCode?: string | null; statusReason?: string | null } = {};
      if (last && body.statusCode !== undefined) details.statusCode = body.statusCode;
      if (last && body.statusReason !== undefined) details.statusReason = body.statusReason;
      row = transitionTransaction(ctx, row.id, status, details);
    });
    return JSON.parse(transactionJson(ctx, getTransactionRow(ctx, row.id)!)) as Transaction;
  }).immediate();
}

// ---------------------------------------------------------------------------------------------------------
// Returns (docs/control-plane.md#returns)

const RETURN_REASONS: Record<string, string> = {
  R01: 'Insufficient funds',
  R02: 'Account closed',
  R03: 'No account / unable to locate account',
  R04: 'Invalid account number',
  R16: 'Account frozen',
  R20: 'Non-transaction account',
  AC01: 'Incorrect account number',
  AC04: 'Closed account number',
  AC06: 'Blocked account',
  AM04: 'Insufficient funds',
  BE04: 'Missing creditor address',
  MD07: 'End customer deceased',
  MS03: 'Reason not specified',
};

/**
 * What a completed outgoing transaction can give back: the amount sent, in the debit currency (fees are not returned).
 */
function returnableMinor(row: TransactionRow): bigint {
  return BigInt(row.net_debit_amount_minor ?? row.debit_amount_minor);
}

function returnedMinor(ctx: AppContext, original: TransactionRow): bigint {
  const sum = prepared<{ total: number | null }>(
    ctx.db,
    `SELECT SUM(credit_amount_minor) AS total FROM transactions
     WHERE related_transaction_id = ? AND direction = 'INCOMING' AND type IN ('REFUND', 'PARTIAL_REFUND') AND status <> 'FAILED'`,
  ).get(original.id)!;
  return BigInt(sum.total ?? 0);
}

function returnedParty(original: TransactionRow): Party | null {
  // The payee of the original pays the funds back: its party moves to the debit side.
  return original.credit_party ? (JSON.parse(original.credit_party) as Party) : null;
}

/**
 * POST /_emulator/transactions/{id}/return: a COMPLETED OUTGOING transaction is returned by the receiving
 * bank. An INCOMING REFUND (the whole amount sent, in one go) or PARTIAL_REFUND credits the account back on
 * the incoming timeline; statusCode is the return reason code, purpose RETURN_OF_FUNDS, and
 * relatedTransactionId names the original. Returns never add up to more than the amount sent.
 */
export function returnTransaction(ctx: AppContext, transactionId: string, body: ReturnTransactionBody): Transaction {
  return ctx.db.transaction(() => {
    const original = getTransactionRow(ctx, transactionId);
    if (!original) throw errors.notFound(`Transaction ${transactionId} not found`);
    if (original.direction !== 'OUTGOING' || !original.debit_account_id) {
      throw errors.conflict(`Transaction ${original.id} is an incoming ${original.type}; only an outgoing transaction (a payout, withdrawal or transfer out) can be returned`);
    }
    // A transfer into an account of the emulator (own account, P2P) reached no outside bank: nothing could
    // send it back, and crediting the sender again would create money the receiver still holds.
    if (original.credit_account_id !== null || original.category === 'P2P') {
      throw errors.conflict(`Transaction ${original.id} moved funds between accounts of the programme; only a payment to an outside bank or wallet can be returned`);
    }
    if (original.status !== 'COMPLETED') {
      throw errors.conflict(`Transaction ${original.id} is ${original.status}; only a COMPLETED transaction can be returned`);
    }
    const account = controlPlaneAccount(ctx, original.account_id);
    const ledgerAccount = prepared<AccountRow>(ctx.db, 'SELECT * FROM accounts WHERE id = ?').get(original.debit_account_id)!;
    const currency = original.debit_currency;
    const precision = precisionOf(ctx, currency);
    const total = returnableMinor(original);
    const remaining = total - returnedMinor(ctx, original);
    if (remaining <= 0n) {
      throw errors.conflict(`Transaction ${original.id} has been returned in full (${formatAmount(total, precision)} ${currency}); nothing is left to return`);
    }
    const amount = body.amount === undefined ? remaining : parseMinor(ctx, body.amount, currency, 'amount');
    if (amount > remaining) {
      throw errors.field(
        'InvalidValue',
        'amount',
        `amount ${formatAmount(amount, precision)} ${currency} is more than the ${formatAmount(remaining, precision)} ${currency} still returnable on transaction ${original.id}`,
      );
    }
    assertCreditFits(ctx, original.account_id, amount, 'amount'); // docs/decisions.md#amount-bounds
    const type = amount === total ? 'REFUND' : 'PARTIAL_REFUND';
    const reason = RETURN_REASONS[body.reasonCode];
    // The ledger account the original left (a sub-balance, when it was sent from one) under the display
    // name of its top-level account.
    const ownInstrument = accountInstrument({ ...ledgerAccount, display_name: account.display_name });
    const row = createTransaction(ctx, {
      programmeId: original.programme_id,
      userId: original.user_id,
      accountId: original.account_id,
      debitAccountId: null,
      creditAccountId: original.debit_account_id,
      direction: 'INCOMING',
      type,
      category: null,
      debitAmountMinor: amount,
      netDebitAmountMinor: null,
      debitCurrency: currency,
      debitParty: returnedParty(original),
      // The funds come back over the rail they were sent on (debitRail is never null, interface 2.4).
      debitRail: original.credit_rail ?? original.debit_rail ?? `INTERNAL.${currency}`,
      debitReference: original.reference_number,
      debitInstrument: original.credit_instrument ? (JSON.parse(original.credit_instrument) as Instrument) : null,
      creditAmountMinor: amount,
      creditCurrency: currency,
      creditRail: original.credit_rail,
      creditInstrument: ownInstrument,
      exchangeRate: '1',
      baseExchangeRate: '1',
      fxSpread: '0',
      purpose: 'RETURN_OF_FUNDS',
      externalId: original.external_id,
      relatedTransactionId: original.id,
      statusCode: body.reasonCode,
      statusReason: body.statusReason ?? `Returned by the receiving bank: ${body.reasonCode}${reason ? ` (${reason})` : ''}`,
      railBehaviour: 'NORMAL',
    });
    return JSON.parse(transactionJson(ctx, row)) as Transaction;
  }).immediate();
}

/**
 * Control plane (docs/decisions.md#forced-status): force a legal transition (an illegal one is the transition table's
 * 409). The regular effects apply: ledger, event, next rail step, sweep.
 */
export function forceTransactionStatus(
  ctx: AppContext,
  id: string,
  input: { status: TransactionStatus; statusCode?: string; statusReason?: string },
): Transaction {
  return ctx.db.transaction(() => {
    if (!getTransactionRow(ctx, id)) throw errors.notFound(`Transaction ${id} not found`);
    const details: { statusCode?: string | null; statusReason?: string | null } = {};
    if (input.statusCode !== undefined) details.statusCode = input.statusCode;
    if (input.statusReason !== undefined) details.statusReason = input.statusReason;
    const row = transitionTransaction(ctx, id, input.status, details);
    return JSON.parse(transactionJson(ctx, row)) as Transaction;
  }).immediate();
}

