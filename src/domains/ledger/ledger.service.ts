import { sql } from '../../db/connection.js';
import type { AppContext } from '../../context.js';

// Contract 4's ledger: signed entries in minor units. `current` counts entries of COMPLETED
// transactions; `available` counts every posted entry, so in-flight debits are held. Nothing else stores a
// balance.

export type EntryKind = 'PRINCIPAL' | 'FEE' | 'REVERSAL';

export interface EntryInput {
  accountId: string;
  transactionId: string;
  kind: EntryKind;
  amountMinor: bigint;
  currency: string;
  isFee: boolean;
  description: string;
  postedAt?: string;
}

export function postEntry(ctx: AppContext, entry: EntryInput): void {
  const postedAt = entry.postedAt ?? ctx.clock.nowIso();
  sql(
    ctx.db,
    `INSERT INTO ledger_entries (account_id, transaction_id, kind, amount_minor, currency, is_fee, description, posted_at, posted_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    entry.accountId,
    entry.transactionId,
    entry.kind,
    entry.amountMinor,
    entry.currency,
    entry.isFee ? 1 : 0,
    entry.description,
    postedAt,
    Date.parse(postedAt),
  );
}

export interface Balances {
  currentMinor: bigint;
  availableMinor: bigint;
}

export function balancesOf(ctx: AppContext, accountId: string): Balances {
  const row = sql<{ available: bigint; current: bigint }>(
    ctx.db,
    `SELECT COALESCE(SUM(e.amount_minor), 0) AS available,
            COALESCE(SUM(CASE WHEN t.status = 'COMPLETED' THEN e.amount_minor ELSE 0 END), 0) AS current
       FROM ledger_entries e JOIN transactions t ON t.id = e.transaction_id
      WHERE e.account_id = ?`,
  )
    .safeIntegers(true)
    .get(accountId)!;
  return { currentMinor: BigInt(row.current), availableMinor: BigInt(row.available) };
}

/** Entries of one transaction posted against one account (used to reverse holds). */
export function entriesOfTransaction(ctx: AppContext, transactionId: string): Array<{ account_id: string; kind: EntryKind; amount_minor: number; currency: string; is_fee: number; description: string }> {
  return sql<{ account_id: string; kind: EntryKind; amount_minor: number; currency: string; is_fee: number; description: string }>(
    ctx.db,
    'SELECT account_id, kind, amount_minor, currency, is_fee, description FROM ledger_entries WHERE transaction_id = ? ORDER BY id',
  ).all(transactionId);
}
