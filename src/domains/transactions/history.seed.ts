import { prepared } from '../../db/connection.js';
import type { AppContext } from '../../context.js';
import { precisionOf } from '../../context.js';
import { parseAmount } from '../../lib/money.js';
import { FixturesError } from '../../fixtures/fixtures.loader.js';
import type { ProgrammeFixture } from '../../fixtures/fixtures.schema.js';
import { NETWORK_TOKEN_CURRENCY, RAILS } from '../deposit-instructions/rails.js';
import type { AccountRow } from '../accounts/accounts.schema.js';
import { SWEEP_EXCHANGE_RATE, SWEEP_FX_SPREAD } from './internal-sweep.js';
import type { HistoryEntry } from './history.schema.js';
import { createTransaction, InsufficientFundsError, type NewTransaction } from './transactions.create.js';
import { accountInstrument, type Instrument, type Party } from './transactions.schema.js';
import { incomingCredit } from './incoming-credit.js';

// Loads the fixtures' `history` through createTransaction's history mode: the same rows, entries and
// REST form as live transactions, with the fixture's instants, no events and no rail timeline. Entries
// are loaded in createdAt order and every debit is checked against the funds loaded before it, so a
// fixture that overdraws an account is rejected with the entry's id.

export function seedHistory(ctx: AppContext, programme: ProgrammeFixture): void {
  const entries = [...programme.history].sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt) || a.id.localeCompare(b.id));
  for (const entry of entries) {
    try {
      seedEntry(ctx, programme, entry);
    } catch (error) {
      if (error instanceof FixturesError) throw error;
      const reason = error instanceof InsufficientFundsError ? 'it debits more than the account holds at that point of the history' : (error as Error).message;
      throw new FixturesError(`invalid history ${entry.id}: ${reason}`);
    }
  }
}

function fail(entry: { id: string }, message: string): never {
  throw new FixturesError(`invalid history ${entry.id}: ${message}`);
}

function accountOf(ctx: AppContext, programme: ProgrammeFixture, entry: { id: string }, accountId: string): AccountRow {
  const row = prepared<AccountRow>(ctx.db, 'SELECT * FROM accounts WHERE id = ? AND programme_id = ?').get(accountId, programme.id);
  if (!row || row.parent_account_id !== null) fail(entry, `names unknown account ${accountId}`);
  return row;
}

function minor(ctx: AppContext, entry: { id: string }, value: string, currency: string, field: string): bigint {
  try {
    const result = parseAmount(value, precisionOf(ctx, currency));
    if (result <= 0n) fail(entry, `${field} must be greater than zero`);
    return result;
  } catch (error) {
    if (error instanceof FixturesError) throw error;
    return fail(entry, `${field}: ${(error as Error).message}`);
  }
}

function settled(entry: HistoryEntry): NewTransaction['history'] {
  if (Date.parse(entry.completedAt) < Date.parse(entry.createdAt)) fail(entry, 'completedAt is before createdAt');
  return { status: entry.status, createdAt: entry.createdAt, completedAt: entry.completedAt };
}

function seedEntry(ctx: AppContext, programme: ProgrammeFixture, entry: HistoryEntry): void {
  const account = accountOf(ctx, programme, entry, entry.accountId);
  // what every entry records as given; an outgoing entry names its programme, user and account too (an incoming
  // credit takes them from the account: incoming-credit.ts)
  const recorded = { id: entry.id, externalId: entry.externalId ?? null, purpose: entry.purpose ?? null, history: settled(entry) };
  const base = { ...recorded, programmeId: programme.id, userId: account.user_id, accountId: account.id };

  switch (entry.type) {
    case 'DEPOSIT': {
      const rail = RAILS[entry.rail];
      if (!rail) fail(entry, `unknown rail ${entry.rail}; known: ${Object.keys(RAILS).join(', ')}`);
      if (rail.kind === 'STABLECOIN') {
        if (account.kind !== 'STABLECOIN') fail(entry, `rail ${entry.rail} needs a stablecoin account`);
        if (!entry.sweep) fail(entry, 'a stablecoin deposit needs its sweep { id, completedAt }');
        const network = rail.network!;
        const token = NETWORK_TOKEN_CURRENCY[network]!;
        const sub = `${account.id}_${network.toLowerCase()}`;
        const amountMinor = minor(ctx, entry, entry.amount, account.currency, 'amount');
        const deposit = { account, ledgerAccountId: sub, type: 'DEPOSIT', amountMinor, currency: token, payer: entry.payer, rail: rail.type } as const;
        createTransaction(
          ctx,
          incomingCredit(deposit, {
            ...recorded,
            debitReference: entry.reference ?? `0x${ctx.ids.hex(64)}`,
            debitMemo: entry.memo ?? null,
            depositReconciliationId: account.deposit_reconciliation_id,
            relatedTransactionId: entry.sweep.id,
          }),
        );
        if (Date.parse(entry.sweep.completedAt) < Date.parse(entry.completedAt)) fail(entry, 'the sweep completes before its deposit');
        createTransaction(ctx, {
          id: entry.sweep.id,
          programmeId: programme.id,
          userId: account.user_id,
          accountId: account.id,
          debitAccountId: sub,
          creditAccountId: account.id,
          direction: 'INCOMING',
          type: 'TRANSFER',
          category: 'INTERNAL_SWEEP',
          debitAmountMinor: amountMinor,
          netDebitAmountMinor: null,
          debitCurrency: token,
          debitRail: rail.type,
          debitInstrument: accountInstrument(account, token),
          creditAmountMinor: amountMinor,
          creditCurrency: account.currency,
          creditInstrument: accountInstrument(account),
          exchangeRate: SWEEP_EXCHANGE_RATE,
          baseExchangeRate: SWEEP_EXCHANGE_RATE,
          fxSpread: SWEEP_FX_SPREAD,
          relatedTransactionId: entry.id,
          history: { status: 'COMPLETED', createdAt: entry.completedAt, completedAt: entry.sweep.completedAt },
        });
        return;
      }
      if (rail.currency !== account.currency) fail(entry, `rail ${entry.rail} carries ${rail.currency}, the account holds ${account.currency}`);
      if (entry.sweep) fail(entry, 'only stablecoin deposits have a sweep');
      const amountMinor = minor(ctx, entry, entry.amount, account.currency, 'amount');
      const deposit = { account, type: 'DEPOSIT', amountMinor, currency: account.currency, payer: entry.payer, rail: rail.type } as const;
      createTransaction(
        ctx,
        incomingCredit(deposit, {
          ...recorded,
          debitReference: entry.reference ?? null,
          debitMemo: entry.memo ?? null,
          depositReconciliationId: account.deposit_reconciliation_id,
        }),
      );
      return;
    }

    case 'WITHDRAWAL': {
      if (!entry.bankAccount === !entry.wallet) fail(entry, 'a withdrawal names exactly one of bankAccount or wallet');
      if (entry.status === 'COMPLETED' && (entry.statusCode || entry.statusReason)) fail(entry, 'statusCode/statusReason belong to a FAILED withdrawal');
      const amountMinor = minor(ctx, entry, entry.amount, account.currency, 'amount');
      const feeMinor = entry.fee ? minor(ctx, entry, entry.fee.amount, account.currency, 'fee.amount') : 0n;
      const creditParty: Party = {
        partyType: 'BENEFICIARY',
        beneficiary:
          entry.beneficiary.type === 'BUSINESS'
            ? { beneficiaryType: 'BUSINESS', business: { id: entry.beneficiary.id, name: entry.beneficiary.name } }
            : { beneficiaryType: 'PERSON', person: { id: entry.beneficiary.id, name: entry.beneficiary.name } },
      };
      const creditInstrument: Instrument = entry.bankAccount
        ? { instrumentType: 'BANK_ACCOUNT', bankAccount: { ...entry.bankAccount, currency: account.currency } }
        : { instrumentType: 'EXTERNAL_WALLET', externalWallet: { ...entry.wallet!, currency: account.currency } };
      createTransaction(ctx, {
        ...base,
        debitAccountId: account.id,
        creditAccountId: null,
        direction: 'OUTGOING',
        type: 'WITHDRAWAL',
        debitAmountMinor: amountMinor + feeMinor,
        netDebitAmountMinor: amountMinor,
        debitCurrency: account.currency,
        debitInstrument: accountInstrument(account),
        debitMemo: entry.memo ?? null,
        creditAmountMinor: amountMinor,
        creditCurrency: account.currency,
        creditParty,
        creditRail: entry.rail,
        creditInstrument,
        fees: entry.fee ? [{ type: entry.fee.type, label: entry.fee.label, amountMinor: feeMinor, currency: account.currency }] : [],
        statusCode: entry.status === 'FAILED' ? (entry.statusCode ?? 'RAIL_REJECTED') : null,
        statusReason: entry.status === 'FAILED' ? (entry.statusReason ?? 'Rejected by the receiving rail') : null,
      });
      return;
    }

    case 'REFUND':
    case 'PARTIAL_REFUND': {
      const related = prepared<{ account_id: string }>(ctx.db, 'SELECT account_id FROM transactions WHERE id = ?').get(entry.relatedTransactionId);
      if (!related) fail(entry, `relatedTransactionId ${entry.relatedTransactionId} is not an earlier history entry`);
      const amountMinor = minor(ctx, entry, entry.amount, account.currency, 'amount');
      const refund = { account, type: entry.type, amountMinor, currency: account.currency, payer: entry.payer, rail: entry.rail };
      createTransaction(ctx, incomingCredit(refund, { ...recorded, debitReference: entry.reference ?? null, relatedTransactionId: entry.relatedTransactionId }));
      return;
    }

    case 'TRANSFER': {
      const credit = accountOf(ctx, programme, entry, entry.creditAccountId);
      if (credit.user_id !== account.user_id) fail(entry, 'a transfer moves funds between two accounts of the same user');
      if (credit.id === account.id) fail(entry, 'a transfer needs two different accounts');
      createTransaction(ctx, {
        ...base,
        debitAccountId: account.id,
        creditAccountId: credit.id,
        direction: 'OUTGOING',
        type: 'TRANSFER',
        debitAmountMinor: minor(ctx, entry, entry.amount, account.currency, 'amount'),
        netDebitAmountMinor: null,
        debitCurrency: account.currency,
        debitInstrument: accountInstrument(account),
        creditAmountMinor: minor(ctx, entry, entry.creditAmount, credit.currency, 'creditAmount'),
        creditCurrency: credit.currency,
        creditInstrument: accountInstrument(credit),
        exchangeRate: entry.exchangeRate,
        baseExchangeRate: entry.baseExchangeRate ?? null,
        fxSpread: entry.fxSpread ?? null,
      });
      return;
    }
  }
}
