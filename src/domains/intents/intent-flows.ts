import { prepared } from '../../db/connection.js';
import type { AppContext } from '../../context.js';
import { precisionOf } from '../../context.js';
import { ServiceError, errors } from '../../core/errors.js';
import { formatAmount } from '../../lib/money.js';
import type { AccountRow } from '../accounts/accounts.schema.js';
import type { Caller } from '../../core/caller.js';
import { creditInstrumentFor, requireInstrument, requireOwnBeneficiary } from '../beneficiaries/beneficiaries.service.js';
import { beneficiaryName, type BeneficiaryInstrumentRow } from '../beneficiaries/beneficiaries.schema.js';
import { maskOf } from '../beneficiaries/bank-validation.js';
import { CREDIT_RAILS, type CreditRail } from '../fees-fx/fees-fx.schema.js';
import type { Instrument, Party, TransactionRow } from '../transactions/transactions.schema.js';
import type { CreateIntentInput } from './intents.schema.js';

// The intent flows beyond own transfers and payouts (docs/money-out.md#intent-flows, interface 2.3):
// a transfer to another user of the programme (P2P), the refund of a deposit to its payer (REFUND,
// PARTIAL_REFUND) and a pull from the user's own bank account (DEPOSIT, DIRECT_DEBIT). Each resolver checks
// its cross-field rules and names the offending field in the 400.

const present = <T>(value: T | null | undefined): value is T => value !== null && value !== undefined;

/**
 * Which flow a body asks for; the exactly-one rules between debitAccountId / debit and credit / refundOf
 * (docs/money-out.md#intent-flows).
 */
export function flowOf(input: CreateIntentInput): 'PAYMENT' | 'REFUND' | 'DIRECT_DEBIT' {
  const hasCredit = present(input.credit);
  const hasRefund = present(input.refundOf);
  if (hasCredit && hasRefund) {
    throw errors.field('InvalidValue', 'refundOf', 'Send exactly one of credit (where the funds go) and refundOf (the deposit to refund to its payer), not both');
  }
  if (!hasCredit && !hasRefund) throw errors.field('MissingValue', 'credit', 'credit is required (or refundOf, to refund a deposit)');
  const hasDebitAccount = present(input.debitAccountId);
  const hasDebit = present(input.debit);
  if (hasDebit && hasDebitAccount) {
    throw errors.field('InvalidValue', 'debit', 'Send exactly one of debitAccountId (an account of yours) and debit (your own bank account, pulled by direct debit), not both');
  }
  if (!hasDebit && !hasDebitAccount) throw errors.field('MissingValue', 'debitAccountId', 'debitAccountId is required (or debit, to pull from your own bank account)');
  if (hasDebit && hasRefund) throw errors.field('InvalidValue', 'debit', 'A refund is paid out of an account of yours: send debitAccountId with refundOf, not debit');
  if (hasRefund) return 'REFUND';
  return hasDebit ? 'DIRECT_DEBIT' : 'PAYMENT';
}

// ---- transfers to another user (P2P) ----

/**
 * The account named by `credit.accountId` when it belongs to another user of the caller's programme; the
 * caller's own account is undefined (an own transfer); another programme's or an unknown id is 404.
 */
export function otherUsersAccount(ctx: AppContext, caller: Caller, accountId: string): AccountRow | undefined {
  const row = prepared<AccountRow>(ctx.db, 'SELECT * FROM accounts WHERE id = ?').get(accountId);
  if (!row || row.programme_id !== caller.programmeId || row.parent_account_id !== null) throw errors.notFound(`Account ${accountId} not found`);
  return row.user_id === caller.userId ? undefined : row;
}

/**
 * docs/decisions.md#p2p-credit-party: the receiving user as a BENEFICIARY party (interface 2.5), its user id
 * and name under `business` or `person` by user type, the way a beneficiary is named on a payout.
 */
export function p2pCreditParty(ctx: AppContext, userId: string): Party {
  const user = prepared<{ id: string; type: 'PERSON' | 'BUSINESS'; name: string }>(ctx.db, 'SELECT id, type, name FROM users WHERE id = ?').get(userId)!;
  const who = { id: user.id, name: user.name };
  return user.type === 'BUSINESS'
    ? { partyType: 'BENEFICIARY', beneficiary: { beneficiaryType: 'BUSINESS', business: who } }
    : { partyType: 'BENEFICIARY', beneficiary: { beneficiaryType: 'PERSON', person: who } };
}

// ---- refunds ----

function refundOfError(message: string): ServiceError {
  return errors.field('InvalidValue', 'refundOf', message);
}

/** Sum of the refunds of a deposit that have not failed: completed and in flight alike. */
export function refundedMinor(ctx: AppContext, depositId: string): bigint {
  const row = prepared<{ total: number | null }>(
    ctx.db,
    "SELECT SUM(debit_amount_minor) AS total FROM transactions WHERE related_transaction_id = ? AND type IN ('REFUND', 'PARTIAL_REFUND') AND status <> 'FAILED'",
  ).get(depositId);
  return BigInt(row?.total ?? 0);
}

/**
 * The deposit a refund intent returns: a COMPLETED DEPOSIT listed under the debit account. An unknown id
 * or another programme's is 404; another account's, a non-deposit, an unsettled or a fully refunded
 * deposit is 400 on `refundOf`.
 */
export function requireRefundableDeposit(ctx: AppContext, caller: Caller, account: AccountRow, depositId: string): { deposit: TransactionRow; refundableMinor: bigint } {
  const deposit = prepared<TransactionRow>(ctx.db, 'SELECT * FROM transactions WHERE id = ?').get(depositId);
  if (!deposit || deposit.programme_id !== caller.programmeId) {
    const message = `Transaction ${depositId} not found`;
    throw errors.notFound(message, [{ type: 'NotFound', fieldRef: 'refundOf', message }]);
  }
  if (deposit.account_id !== account.id) throw refundOfError(`Transaction ${depositId} is not a transaction of account ${account.id}; refund it from the account it was deposited to`);
  if (deposit.type !== 'DEPOSIT' || deposit.direction !== 'INCOMING') throw refundOfError(`Transaction ${depositId} is a ${deposit.type}; only a DEPOSIT can be refunded`);
  if (deposit.status !== 'COMPLETED') throw refundOfError(`Deposit ${depositId} is ${deposit.status}; only a COMPLETED deposit can be refunded`);
  const refundableMinor = BigInt(deposit.credit_amount_minor) - refundedMinor(ctx, deposit.id);
  if (refundableMinor <= 0n) throw refundOfError(`Deposit ${depositId} is already refunded in full (completed and in-flight refunds count)`);
  return { deposit, refundableMinor };
}

/** The interface 2.3 `creditRail` of a refund: the deposit's rail (`US.USD.FEDWIRE` -> WIRE, `ETHEREUM.USDC` -> ETHEREUM). */
export function refundCreditRail(depositRail: string | null): CreditRail | null {
  if (!depositRail) return null;
  const parts = depositRail.split('.');
  const name = parts.length === 3 ? parts[2]! : parts[0]!;
  const rail = name === 'FEDWIRE' ? 'WIRE' : name;
  return (CREDIT_RAILS as readonly string[]).includes(rail) ? (rail as CreditRail) : null;
}

/**
 * The interface 2.3 `creditInstrument` of a refund, never null (docs/decisions.md#refund-party): the deposit's
 * debit instrument, or, for a deposit that names only its payer (simulated, seeded or injected), the payer's
 * instrument made from the deposit: an `EXTERNAL_WALLET` on an on-chain rail (`ETHEREUM.USDC`), else a
 * `BANK_ACCOUNT`; its id is the deposit's, the one record of that instrument. The transaction carries the same.
 */
export function refundCreditInstrument(deposit: TransactionRow): Instrument {
  if (deposit.debit_instrument !== null) return JSON.parse(deposit.debit_instrument) as Instrument;
  const party = deposit.debit_party === null ? null : (JSON.parse(deposit.debit_party) as Party);
  const payer = party?.partyType === 'PAYER' ? party.payer : undefined;
  const common = { id: deposit.id, displayName: payer?.displayName ?? null, currency: deposit.debit_currency };
  const rail = (deposit.debit_rail ?? '').split('.');
  if (rail.length === 2) {
    return { instrumentType: 'EXTERNAL_WALLET', externalWallet: { ...common, network: rail[0]!, address: payer?.walletAddress ?? '' } };
  }
  return { instrumentType: 'BANK_ACCOUNT', bankAccount: { ...common, mask: maskOf(payer?.accountNumber ?? deposit.id) } };
}

export function refundAmountError(ctx: AppContext, currency: string, refundableMinor: bigint, deposit: TransactionRow): ServiceError {
  const precision = precisionOf(ctx, currency);
  return errors.field(
    'InvalidValue',
    'debitAmount',
    `debitAmount is more than what is still refundable on deposit ${deposit.id}: ${formatAmount(refundableMinor, precision)} ${currency} of ${formatAmount(BigInt(deposit.credit_amount_minor), precision)} ${currency} (completed and in-flight refunds count)`,
  );
}

// ---- direct debits ----

/** The sandbox's ACH rail of a direct debit (docs/money-out.md#direct-debits). */
export const DIRECT_DEBIT_RAIL = 'US.USD.ACH';

/**
 * The bank account a direct debit pulls from: an instrument of the caller's beneficiary whose
 * relationshipToUser is SELF, a US dollar account with a routing number (ACH).
 */
export function requireOwnBankAccount(
  ctx: AppContext,
  caller: Caller,
  debit: NonNullable<CreateIntentInput['debit']>,
): { instrument: BeneficiaryInstrumentRow; debitInstrument: Instrument; debitParty: Party } {
  const beneficiary = requireOwnBeneficiary(ctx, caller, debit.beneficiaryId);
  if (beneficiary.relationship_to_user !== 'SELF') {
    throw errors.field(
      'InvalidValue',
      'debit.beneficiaryId',
      `Beneficiary ${beneficiary.id} has relationshipToUser ${beneficiary.relationship_to_user ?? 'unset'}; a direct debit pulls only from the user's own bank account (relationshipToUser SELF)`,
    );
  }
  const instrument = requireInstrument(ctx, beneficiary, debit.instrumentId);
  if (instrument.type !== 'BANK_ACCOUNT' || instrument.country !== 'US' || instrument.currency !== 'USD' || instrument.routing_number === null) {
    throw errors.field('InvalidValue', 'debit.instrumentId', `Instrument ${instrument.id} is not a US dollar bank account with a routing number; a direct debit is pulled over ACH`);
  }
  const accountNumber = instrument.account_number ?? '';
  const debitParty: Party = {
    partyType: 'PAYER',
    payer: { displayName: instrument.account_holder_name ?? beneficiaryName(beneficiary), accountNumber: `****${accountNumber.slice(-4)}`, bankCode: instrument.routing_number },
  };
  return { instrument, debitInstrument: creditInstrumentFor(instrument), debitParty };
}
