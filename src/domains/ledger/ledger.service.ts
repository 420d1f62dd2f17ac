import { prepared } from '../../db/connection.js';
import { precisionOf, type AppContext } from '../../context.js';
import { errors } from '../../core/errors.js';
import { formatAmount } from '../../lib/money.js';

// The ledger (docs/decisions.md#ledger): signed entries in minor units (credits positive, debits negative).
// - `available` = every posted entry, so in-flight debits are held;
// - `current`   = entries of COMPLETED transactions.
// Nothing stores a balance apart from the entries (in_flight_credits sums credits that are not entries yet, for
// reachableBalanceOf below). Each entry carries the account's running total after it
// (`available_after_minor`, written in the same statement as the entry), so `available` is the running
// total of the account's last entry: one index lookup, whatever the number of entries.
// `current` is `available` minus the entries of in-flight (PENDING/PROCESSING) transactions: a FAILED
// transaction's entries net to zero on every account (its hold is reversed in full) and an incoming credit
// is only posted at COMPLETED, so this equals the sum over COMPLETED transactions; the ledger test checks
// both identities against plain sums. An entry carries `in_flight` = 1 exactly while its transaction is
// PENDING or PROCESSING (written here from the transaction's status, kept by a trigger on every status write:
// migration 012), so the in-flight part is one partial-index range of the account's in-flight entries,
// whatever the number of transactions in flight elsewhere.

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
  // in_flight from the transaction's status as it stands now: a hold posted at creation is in flight, a credit
  // posted at COMPLETED or a reversal posted at FAILED is not (the status is written before them)
  prepared(
    ctx.db,
    `INSERT INTO ledger_entries (account_id, transaction_id, kind, amount_minor, currency, is_fee, description, posted_at, posted_at_ms, available_after_minor, in_flight)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, COALESCE((SELECT status IN ('PENDING', 'PROCESSING') FROM transactions WHERE id = ?), 0))`,
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
    entry.transactionId,
  );
  return availableAfter;
}

export function balancesOf(ctx: AppContext, accountId: string): Balances {
  const availableMinor = availableOf(ctx, accountId);
  return { currentMinor: availableMinor - inFlightOf(ctx, accountId), availableMinor };
}

/** The sum of the account's entries whose transaction is PENDING or PROCESSING (a covering partial index). */
function inFlightOf(ctx: AppContext, accountId: string): bigint {
  const row = prepared<{ total: bigint }>(
    ctx.db,
    'SELECT COALESCE(SUM(amount_minor), 0) AS total FROM ledger_entries WHERE account_id = ? AND in_flight = 1',
  )
    .safeIntegers(true)
    .get(accountId)!;
  return BigInt(row.total);
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

/**
 * The most an account may hold, in minor units: amounts and balances are read back as JS numbers in places
 * (docs/decisions.md#amount-bounds), so nothing may take a balance past 2^53 - 1.
 */
export const LEDGER_MAX_MINOR = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * The largest balance an account (with its network sub-balances, whose funds are swept into it) reaches if
 * every credit still in flight towards it lands: its settled balances plus the credit amounts of PENDING and
 * PROCESSING transactions that will credit it (docs/architecture.md#the-account-a-transaction-credits). In-flight
 * debits only lower it.
 */
export function reachableBalanceOf(ctx: AppContext, accountId: string): bigint {
  const ids = [accountId, ...prepared<{ id: string }>(ctx.db, 'SELECT id FROM accounts WHERE parent_account_id = ?').all(accountId).map((row) => row.id)];
  let total = 0n;
  for (const id of ids) total += balancesOf(ctx, id).currentMinor;
  // The credits in flight towards these accounts, kept per account by triggers on transactions (migration 012,
  // docs/architecture.md#sql-triggers): one row per account, however many are in flight. No programme filter is
  // needed: an account id names one account of one programme.
  const placeholders = ids.map(() => '?').join(', ');
  const pending = prepared<{ total: bigint }>(
    ctx.db,
    `SELECT COALESCE(SUM(amount_minor), 0) AS total FROM in_flight_credits WHERE account_id IN (${placeholders})`,
  )
    .safeIntegers(true)
    .get(...ids)!;
  return total + BigInt(pending.total);
}

/**
 * Refuse, at request time, a credit that would take the account past what the ledger holds, counting every
 * credit still in flight towards it: a 400 InvalidValue on the caller's amount field, before anything is
 * written, so no accepted transaction can fail to settle later (docs/decisions.md#amount-bounds).
 */
export function assertCreditFits(ctx: AppContext, accountId: string, amountMinor: bigint, fieldRef: string): void {
  const reachable = reachableBalanceOf(ctx, accountId);
  if (reachable + amountMinor <= LEDGER_MAX_MINOR) return;
  const currency = prepared<{ currency: string }>(ctx.db, 'SELECT currency FROM accounts WHERE id = ?').get(accountId)!.currency;
  const precision = precisionOf(ctx, currency);
  const room = LEDGER_MAX_MINOR - reachable > 0n ? LEDGER_MAX_MINOR - reachable : 0n;
  throw errors.field(
    'InvalidValue',
    fieldRef,
    `${fieldRef} would take the balance of account ${accountId} beyond what the ledger holds (${formatAmount(LEDGER_MAX_MINOR, precision)} ${currency}, counting credits still in flight); at most ${formatAmount(room, precision)} ${currency} more can be credited`,
  );
}
