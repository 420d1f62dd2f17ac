import { createContext } from '../../src/create-context.js';
import type { AppContext } from '../../src/context.js';
import { createClock } from '../../src/lib/clock.js';
import { balancesOf, sumOfEntries } from '../../src/domains/ledger/ledger.service.js';
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
  }
  return ok;
}

