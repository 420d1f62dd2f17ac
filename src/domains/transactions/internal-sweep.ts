import { prepared } from '../../db/connection.js';
import type { AppContext } from '../../context.js';
import type { AccountRow } from '../accounts/accounts.schema.js';
import { createTransaction } from './transactions.create.js';
import { refreshStoredTransaction } from './transactions.stored.js';
import type { TransactionStatus } from './transactions.machine.js';
import { accountInstrument, type TransactionRow } from './transactions.schema.js';

// docs/decisions.md#stablecoin-sweep, interface 2.4: a stablecoin deposit lands in the account's network sub-balance;
// when it completes, a TRANSFER with category INTERNAL_SWEEP moves it to the parent account. The two are linked
// both ways by relatedTransactionId (the sweep names its deposit at creation; the deposit names its sweep
// from the same SQLite transaction on, i.e. from its completion). Both are listed under the parent.
// The sweep holds the sub-balance at creation and credits the parent at completion, so the parent's
// balance moves only once the sweep completes.

/**
 * The 1:1 rate between a network token (USDC_ETH ...) and the account's USDC, written as the intents write a
 * same-currency rate: exchangeRate "1", baseExchangeRate "1", fxSpread "0".
 */
export const SWEEP_EXCHANGE_RATE = '1';
export const SWEEP_FX_SPREAD = '0';

/**
 * Called by transitionTransaction after every status write: sweeps a sub-balance deposit that has just completed.
 * Returns whether it swept (then `row` was written again: its relatedTransactionId names the sweep).
 */
export function sweepCompletedDeposit(ctx: AppContext, row: TransactionRow, previousStatus: TransactionStatus): boolean {
  if (row.status !== 'COMPLETED' || previousStatus === 'COMPLETED') return false;
  if (row.type !== 'DEPOSIT' || !row.credit_account_id) return false;
  const sub = prepared<AccountRow>(ctx.db, 'SELECT * FROM accounts WHERE id = ?').get(row.credit_account_id);
  if (!sub || sub.kind !== 'SUB_BALANCE' || !sub.parent_account_id) return false;
  const parent = prepared<AccountRow>(ctx.db, 'SELECT * FROM accounts WHERE id = ?').get(sub.parent_account_id)!;
  const sweep = createTransaction(ctx, {
    programmeId: row.programme_id,
    userId: row.user_id,
    accountId: parent.id,
    debitAccountId: sub.id,
    creditAccountId: parent.id,
    // INCOMING from the parent's point of view: the timeline completes it after sweepCompletionMs.
    direction: 'INCOMING',
    type: 'TRANSFER',
    category: 'INTERNAL_SWEEP',
    debitAmountMinor: BigInt(row.credit_amount_minor),
    netDebitAmountMinor: null,
    debitCurrency: sub.currency,
    debitRail: row.debit_rail,
    debitInstrument: accountInstrument(parent, sub.currency),
    creditAmountMinor: BigInt(row.credit_amount_minor),
    creditCurrency: parent.currency,
    creditInstrument: accountInstrument(parent),
    exchangeRate: SWEEP_EXCHANGE_RATE,
    baseExchangeRate: SWEEP_EXCHANGE_RATE,
    fxSpread: SWEEP_FX_SPREAD,
    relatedTransactionId: row.id,
    railBehaviour: 'NORMAL',
  });
  prepared(ctx.db, 'UPDATE transactions SET related_transaction_id = ? WHERE id = ?').run(sweep.id, row.id);
  refreshStoredTransaction(ctx, row.id);
  return true;
}
