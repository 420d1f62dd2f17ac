import { createContext } from '../../src/create-context.js';
import type { AppContext } from '../../src/context.js';
import { createClock } from '../../src/lib/clock.js';
import { balancesOf, reachableBalanceOf, sumOfEntries } from '../../src/domains/ledger/ledger.service.js';
import type { TransactionStatus } from '../../src/domains/transactions/transactions.machine.js';
import { START } from '../helper.js';

// The ledger model (docs/decisions.md#ledger) for the ledger tests: balances derived from the transactions' amounts and
// statuses alone, compared with the ledger's entries.

export function freshContext(dbPath = ':memory:'): AppContext {
  return createContext({ config: { db: dbPath, logLevel: 'silent' }, clock: createClock({ mode: 'frozen', atMs: Date.parse(START) }) });
}

interface TxnRow {
  id: string;
  status: TransactionStatus;
  debit_account_id: string | null;
  credit_account_id: string | null;
  debit_amount_minor: number;
  credit_amount_minor: number;
}

/** Balances of every ledger account from the transactions table alone (the model). */
export function modelBalances(ctx: AppContext): Map<string, { available: bigint; current: bigint }> {
  const out = new Map<string, { available: bigint; current: bigint }>();
  const of = (id: string) => {
    if (!out.has(id)) out.set(id, { available: 0n, current: 0n });
    return out.get(id)!;
  };
  for (const account of ctx.db.prepare('SELECT id FROM accounts').all() as Array<{ id: string }>) of(account.id);
  for (const row of ctx.db.prepare('SELECT id, status, debit_account_id, credit_account_id, debit_amount_minor, credit_amount_minor FROM transactions').all() as TxnRow[]) {
    // A debit is held from creation unless the transaction failed (its hold reversed, or never posted);
    // a credit posts on completion.
    if (row.debit_account_id && row.status !== 'FAILED') of(row.debit_account_id).available -= BigInt(row.debit_amount_minor);
    if (row.debit_account_id && row.status === 'COMPLETED') of(row.debit_account_id).current -= BigInt(row.debit_amount_minor);
    if (row.credit_account_id && row.status === 'COMPLETED') {
      of(row.credit_account_id).available += BigInt(row.credit_amount_minor);
      of(row.credit_account_id).current += BigInt(row.credit_amount_minor);
    }
  }
  return out;
}

/** Reports through `fail` (a tap test, or a recorder); returns whether every account matched. */
export function checkLedger(t: { fail(message: string): unknown }, ctx: AppContext, label: string): boolean {
  let ok = true;
  for (const [accountId, model] of modelBalances(ctx)) {
    const ledger = balancesOf(ctx, accountId);
    const sum = sumOfEntries(ctx, accountId);
    const completed = BigInt(
      (ctx.db
        .prepare("SELECT COALESCE(SUM(e.amount_minor), 0) AS n FROM ledger_entries e JOIN transactions t ON t.id = e.transaction_id WHERE e.account_id = ? AND t.status = 'COMPLETED'")
        .safeIntegers(true)
        .get(accountId) as { n: bigint }).n,
    );
    const good =
      ledger.availableMinor === model.available &&
      ledger.currentMinor === model.current &&
      sum === ledger.availableMinor &&
      completed === ledger.currentMinor &&
      ledger.availableMinor >= 0n &&
      ledger.currentMinor >= 0n;
    if (!good) {
      ok = false;
      t.fail(`${label}: ${accountId} ledger ${ledger.availableMinor}/${ledger.currentMinor}, sum ${sum}, completed ${completed}, model ${model.available}/${model.current}`);
    }
    const reachable = reachableBalanceOf(ctx, accountId);
    const plainReachable = plainReachableBalance(ctx, accountId);
    if (reachable !== plainReachable) {
      ok = false;
      t.fail(`${label}: ${accountId} reachable balance ${reachable}, by the plain definition ${plainReachable}`);
    }
  }
  const wrong = wrongInFlightFlags(ctx);
  if (wrong.length > 0) {
    ok = false;
    t.fail(`${label}: ${wrong.length} ledger entries whose in_flight flag is not their transaction's status (first: ${JSON.stringify(wrong[0])})`);
  }
  return ok;
}

/**
 * Entries whose `in_flight` flag disagrees with its definition: 1 exactly when the entry's transaction is PENDING
 * or PROCESSING (docs/decisions.md#ledger). Empty when the flag is right everywhere.
 */
export function wrongInFlightFlags(ctx: AppContext): Array<{ id: number; in_flight: number; status: string }> {
  return ctx.db
    .prepare(
      `SELECT e.id, e.in_flight, t.status FROM ledger_entries e JOIN transactions t ON t.id = e.transaction_id
        WHERE e.in_flight IS NOT (CASE WHEN t.status IN ('PENDING', 'PROCESSING') THEN 1 ELSE 0 END)`,
    )
    .all() as Array<{ id: number; in_flight: number; status: string }>;
}

/**
 * The largest balance an account can reach (docs/decisions.md#amount-bounds) by the plain definition, through full
 * scans: the entries of its account and sub-balances whose transaction is not in flight, plus the credit amount of
 * every in-flight transaction crediting one of them or transferring to it from another user.
 */
export function plainReachableBalance(ctx: AppContext, accountId: string): bigint {
  const row = ctx.db
    .prepare(
      `WITH ids AS (SELECT id FROM accounts WHERE id = :account OR parent_account_id = :account)
       SELECT
         (SELECT COALESCE(SUM(e.amount_minor), 0) FROM ledger_entries e JOIN transactions t ON t.id = e.transaction_id
           WHERE e.account_id IN (SELECT id FROM ids) AND t.status NOT IN ('PENDING', 'PROCESSING'))
       + (SELECT COALESCE(SUM(credit_amount_minor), 0) FROM transactions NOT INDEXED
           WHERE status IN ('PENDING', 'PROCESSING')
             AND (credit_account_id IN (SELECT id FROM ids)
                  OR (category = 'P2P' AND direction = 'OUTGOING' AND json_extract(credit_instrument, '$.account.id') = :account))) AS n`,
    )
    .safeIntegers(true)
    .get({ account: accountId }) as { n: bigint };
  return BigInt(row.n);
}

