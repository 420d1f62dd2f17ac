import { prepared } from '../../db/connection.js';
import type { AppContext } from '../../context.js';
import { precisionOf } from '../../context.js';
import { errors } from '../../core/errors.js';
import { recordEvent } from '../webhooks/outbox.js';
import { toTransaction, toWebhookTransaction, type Transaction, type TransactionRow } from './transactions.schema.js';

// A transaction's JSON forms: the REST object stored with its row (migration 002 `rest_json`), read back
// by the list and detail routes, and the same object as the webhook payload, so REST and events never drift.

export function precisionLookup(ctx: AppContext): (currency: string) => number {
  return (currency) => precisionOf(ctx, currency);
}

export function getTransactionRow(ctx: AppContext, id: string): TransactionRow | undefined {
  return prepared<TransactionRow>(ctx.db, 'SELECT * FROM transactions WHERE id = ?').get(id);
}

/**
 * Store the REST form of a row (migration 002 `rest_json`) and return the object. Call after any write
 * to a transaction row; a write that skips this only leaves the stored form stale, never wrong.
 */
export function refreshStoredTransaction(ctx: AppContext, id: string): Transaction {
  return storeTransactionJson(ctx, id).transaction;
}

/**
 * refreshStoredTransaction, also returning the row as it now stands (the row it read, with the `rest_json` it wrote),
 * so a writer that goes on with the row need not read it again (docs/architecture.md#row-to-json).
 */
export function storeTransactionJson(ctx: AppContext, id: string): { row: TransactionRow; transaction: Transaction } {
  const row = getTransactionRow(ctx, id);
  if (!row) throw errors.notFound(`Transaction ${id} not found`);
  const transaction = toTransaction(row, precisionLookup(ctx));
  const text = JSON.stringify(transaction);
  prepared(ctx.db, 'UPDATE transactions SET rest_json = ? WHERE id = ?').run(text, id);
  // the row as a read would now return it: `SELECT *` carries rest_json, which the row type leaves out
  return { row: { ...row, rest_json: text } as TransactionRow, transaction };
}

/** The REST JSON text of a row: the stored form, or rebuilt from the row when it is stale. */
export function transactionJson(ctx: AppContext, row: Pick<TransactionRow, 'id'> & { rest_json?: string | null }): string {
  if (row.rest_json) return row.rest_json;
  const full = getTransactionRow(ctx, row.id);
  if (!full) throw errors.notFound(`Transaction ${row.id} not found`);
  return JSON.stringify(toTransaction(full, precisionLookup(ctx)));
}

/** Record a transaction event in the outbox (same SQLite transaction) with the webhook form of `transaction`. */
export function emitTransactionEvent(
  ctx: AppContext,
  row: TransactionRow,
  transaction: Transaction,
  eventType: 'transaction_created' | 'transaction_status_updated',
): string {
  return recordEvent(ctx, {
    programmeId: row.programme_id,
    userId: row.user_id,
    resourceType: 'transaction',
    resourceId: row.id,
    eventType,
    payload: toWebhookTransaction(transaction),
  });
}

