import { prepared } from '../../db/connection.js';
import type { AppContext } from '../../context.js';

// The ledger (docs/decisions.md#ledger): signed entries in minor units (credits positive, debits negative).
// - `available` = every posted entry, so in-flight debits are held;
// - `current`   = entries of COMPLETED transactions.
// Nothing stores a balance apart from the entries. Each entry carries the account's running total after it
// (`available_after_minor`, written in the same statement as the entry), so `available` is the running
// total of the account's last entry: one index lookup, whatever the number of entries.
// `current` is `available` minus the entries of in-flight (PENDING/PROCESSING) transactions: a FAILED
// transaction's entries net to zero on every account (its hold is reversed in full) and an incoming credit
// is only posted at COMPLETED, so this equals the sum over COMPLETED transactions; the ledger test checks
// both identities against plain sums.

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

export interface Balances {
  currentMinor: bigint;
  availableMinor: bigint;
}

/** The sum of every entry posted to the account (`available`, docs/decisions.md#ledger). */
export function availableOf(ctx: AppContext, accountId: string): bigint {
  const last = prepared<{ available_after_minor: bigint | null }>(
    ctx.db,
    'SELECT available_after_minor FROM ledger_entries WHERE account_id = ? ORDER BY id DESC LIMIT 1',
  )
    .safeIntegers(true)
    .get(accountId);
  if (!last) return 0n;
  if (last.available_after_minor !== null) return BigInt(last.available_after_minor);
  // An entry written without a running total (by code that bypassed postEntry): fall back to the sum.
  return sumOfEntries(ctx, accountId);
}

/** The plain sum of an account's entries (the definition; used as a fallback and by tests). */
export function sumOfEntries(ctx: AppContext, accountId: string): bigint {
  const row = prepared<{ total: bigint }>(ctx.db, 'SELECT COALESCE(SUM(amount_minor), 0) AS total FROM ledger_entries WHERE account_id = ?')
    .safeIntegers(true)
    .get(accountId)!;
  return BigInt(row.total);
}

/** Post one entry; returns the account's running total after it. Runs in the caller's SQLite transaction. */
export function postEntry(ctx: AppContext, entry: EntryInput): bigint {
  const postedAt = entry.postedAt ?? ctx.clock.nowIso();
  const availableAfter = availableOf(ctx, entry.accountId) + entry.amountMinor;
  prepared(
    ctx.db,
    `INSERT INTO ledger_entries (account_id, transaction_id, kind, amount_minor, currency, is_fee, description, posted_at, posted_at_ms, available_after_minor)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
    availableAfter,
  );
  return availableAfter;
}

export function balancesOf(ctx: AppContext, accountId: string): Balances {
  const availableMinor = availableOf(ctx, accountId);
  // In-flight transactions are found through the owner's (user_id, status) index, so this stays cheap
  // however many settled transactions the account has.
  const inFlight = prepared<{ total: bigint }>(
    ctx.db,
    `SELECT COALESCE(SUM(e.amount_minor), 0) AS total
       FROM accounts a
       JOIN transactions t ON t.user_id = a.user_id AND t.status IN ('PENDING', 'PROCESSING')
       JOIN ledger_entries e ON e.transaction_id = t.id AND e.account_id = a.id
      WHERE a.id = ?`,
  )
    .safeIntegers(true)
    .get(accountId)!;
  return { currentMinor: availableMinor - BigInt(inFlight.total), availableMinor };
}

export interface LedgerEntryRow {
  id: number;
  account_id: string;
  kind: EntryKind;
  amount_minor: number;
  currency: string;
  is_fee: number;
  description: string;
}

/** Entries of one transaction, in posting order (used to reverse holds). */
export function entriesOfTransaction(ctx: AppContext, transactionId: string): LedgerEntryRow[] {
  return prepared<LedgerEntryRow>(
    ctx.db,
    'SELECT id, account_id, kind, amount_minor, currency, is_fee, description FROM ledger_entries WHERE transaction_id = ? ORDER BY id',
  ).all(transactionId);
}
