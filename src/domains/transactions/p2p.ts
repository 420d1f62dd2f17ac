import { prepared } from '../../db/connection.js';
import type { AppContext } from '../../context.js';
import type { AccountRow } from '../accounts/accounts.schema.js';
import { createTransaction } from './transactions.create.js';
import type { TransactionStatus } from './transactions.machine.js';
import type { Instrument, TransactionRow } from './transactions.schema.js';
import { incomingCredit } from './incoming-credit.js';

// Transfers to another user of the programme (docs/money-out.md#p2p). The sender's TRANSFER (category
// P2P) holds its debit at creation like any outgoing transaction and names the receiver as creditParty.
// When it completes, the receiver gets a TRANSFER of its own (category P2P, INCOMING, the sender as
// debitParty, relatedTransactionId the sender's transaction), created and completed in the same SQLite
// transaction: the receiver's account is credited at the moment the sender's debit settles, with its own
// transaction_created and transaction_status_updated events for the receiving user. A failed transfer
// credits no one (its hold is released as for any outgoing transaction).

/**
 * Called by transitionTransaction after every status write: when a P2P transfer has just completed, create
 * the receiver's transfer (PENDING, no timeline) and return it; the caller completes it at once.
 */
export function createP2pCredit(ctx: AppContext, row: TransactionRow, previousStatus: TransactionStatus): TransactionRow | undefined {
  if (row.status !== 'COMPLETED' || previousStatus === 'COMPLETED') return undefined;
  if (row.category !== 'P2P' || row.direction !== 'OUTGOING' || row.credit_instrument === null) return undefined;
  const instrument = JSON.parse(row.credit_instrument) as Instrument;
  if (instrument.instrumentType !== 'ACCOUNT') return undefined;
  const account = prepared<AccountRow>(ctx.db, 'SELECT * FROM accounts WHERE id = ?').get(instrument.account.id);
  if (!account) return undefined;
  return createReceiverTransfer(ctx, row, account);
}

function createReceiverTransfer(ctx: AppContext, sent: TransactionRow, account: AccountRow): TransactionRow {
  const sender = prepared<{ name: string }>(ctx.db, 'SELECT name FROM users WHERE id = ?').get(sent.user_id)!;
  const transfer = {
    account,
    type: 'TRANSFER',
    amountMinor: BigInt(sent.credit_amount_minor),
    currency: sent.credit_currency,
    payer: { displayName: sender.name },
    rail: sent.debit_rail,
  } as const;
  return createTransaction(
    ctx,
    incomingCredit(transfer, {
      category: 'P2P',
      netDebitAmountMinor: null,
      debitMemo: sent.debit_memo,
      exchangeRate: '1',
      baseExchangeRate: '1',
      fxSpread: '0',
      purpose: sent.purpose,
      relatedTransactionId: sent.id,
      // no timeline of its own: it settles with the sender's transfer (transitionTransaction completes it)
      railBehaviour: 'NONE',
    }),
  );
}
