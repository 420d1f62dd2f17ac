import type { AccountRow } from '../accounts/accounts.schema.js';
import type { NewTransaction } from './transactions.create.js';
import { accountInstrument, type Party } from './transactions.schema.js';

// An INCOMING transaction that credits an account of the emulator from outside its ledger (debitAccountId null): a
// deposit (simulated, docs/money-in.md#simulated-deposits, or from the fixtures' history), a refund in the history,
// or the receiving side of a P2P transfer (docs/money-out.md#p2p). The same amount and currency on both sides, an
// external payer as debitParty, the account as creditInstrument; what differs between them comes as `details`.

export type Payer = Extract<Party, { partyType: 'PAYER' }>['payer'];

export interface IncomingCredit {
  /** The top-level account: the transaction is listed under it, and the credit instrument names it. */
  account: AccountRow;
  /** The ledger account credited: the account itself (default), or its network sub-balance (a stablecoin deposit). */
  ledgerAccountId?: string;
  type: 'DEPOSIT' | 'TRANSFER' | 'REFUND' | 'PARTIAL_REFUND';
  amountMinor: bigint;
  /** The currency of both amounts and of the credit instrument: the account's, or a sub-balance's token. */
  currency: string;
  payer: Payer;
  rail: string | null;
}

/** What the caller adds: references, memo, ids, the rail behaviour, the fixture history's instants... */
export type IncomingCreditDetails = Omit<Partial<NewTransaction>, keyof ReturnType<typeof creditCore>>;

function creditCore(credit: IncomingCredit) {
  return {
    programmeId: credit.account.programme_id,
    userId: credit.account.user_id,
    accountId: credit.account.id,
    debitAccountId: null,
    creditAccountId: credit.ledgerAccountId ?? credit.account.id,
    direction: 'INCOMING' as const,
    type: credit.type,
    debitAmountMinor: credit.amountMinor,
    debitCurrency: credit.currency,
    debitParty: { partyType: 'PAYER' as const, payer: credit.payer },
    debitRail: credit.rail,
    creditAmountMinor: credit.amountMinor,
    creditCurrency: credit.currency,
    creditInstrument: accountInstrument(credit.account, credit.currency),
  };
}

/** The `createTransaction` input of an incoming credit. */
export function incomingCredit(credit: IncomingCredit, details: IncomingCreditDetails = {}): NewTransaction {
  return { ...creditCore(credit), ...details };
}
