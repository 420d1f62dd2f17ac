import { sql } from '../../db/connection.js';
import type { AppContext } from '../../context.js';
import { errors } from '../../http/errors.js';
import { requireOwnAccount, type Caller } from '../accounts/accounts.service.js';
import { transactionJson } from './transactions.service.js';
import type { ListTransactionsQuery, TransactionSortField } from './transactions.schema.js';

// GET /v1/transactions and GET /v1/transactions/{id} (interface 4.5, 4.6; contract 4).
//
// Scope: every call acts for one user (contract 2), so "every transaction in the programme" is, for that
// caller, every transaction of that user across all of their accounts; `accountId` narrows it to one
// account, sub-balances included (migration 002 `transaction_accounts`).
//
// Speed with 1,000,000 rows (migration 002): each sort of each scope is one index range
// (ORDER BY key, id in the same direction), filters on type/status have their own indexes, the page is
// the stored REST JSON of each row concatenated, and `totalRecords` comes from `transaction_counts`
// unless a time bound applies (then it is a COUNT over the index range of that bound).

const SORT_COLUMN: Record<TransactionSortField, string> = {
  CREATED_AT: 'created_at_ms',
  UPDATED_AT: 'updated_at_ms',
  STATUS: 'status',
  TYPE: 'type',
};

interface PageRow {
  id: string;
  rest_json: string | null;
}

/** The list envelope of interface 2, as JSON text (the rows' stored REST JSON is spliced in as is). */
export function listTransactionsJson(ctx: AppContext, caller: Caller, query: ListTransactionsQuery): string {
  // One read transaction: the count and the page see the same snapshot.
  return ctx.db.transaction(() => {
    const byAccount = query.accountId !== undefined;
    const scopeId = byAccount ? requireOwnAccount(ctx, caller, query.accountId!).id : caller.userId;

    // Column names of the scope's table: transactions itself (user) or transaction_accounts (account).
    const t = byAccount
      ? { from: 'transaction_accounts m CROSS JOIN transactions t ON t.id = m.transaction_id', key: 'm.account_id', col: 'm.', id: 'm.transaction_id' }
      : { from: 'transactions t', key: 't.user_id', col: 't.', id: 't.id' };
    const where = [`${t.key} = ?`];
    const params: Array<string | number> = [scopeId];
    if (query.type !== undefined) {
      where.push(`${t.col}type = ?`);
      params.push(query.type);
    }
    if (query.status !== undefined) {
      where.push(`${t.col}status = ?`);
      params.push(query.status);
    }
    const timeBound = query.minUpdatedAt !== undefined || query.maxUpdatedAt !== undefined || query.minCreatedAt !== undefined;
    if (query.minUpdatedAt !== undefined) {
      where.push(`${t.col}updated_at_ms >= ?`);
      params.push(query.minUpdatedAt);
    }
    if (query.maxUpdatedAt !== undefined) {
      where.push(`${t.col}updated_at_ms <= ?`);
      params.push(query.maxUpdatedAt);
    }
    if (query.minCreatedAt !== undefined) {
      where.push(`${t.col}created_at_ms >= ?`);
      params.push(query.minCreatedAt);
    }
    const whereSql = where.join(' AND ');

    let totalRecords: number;
    if (timeBound) {
      const countFrom = byAccount ? 'transaction_accounts m' : 'transactions t';
      totalRecords = sql<{ n: number }>(ctx.db, `SELECT COUNT(*) AS n FROM ${countFrom} WHERE ${whereSql}`).get(...params)!.n;
    } else {
      const countWhere = ['scope = ?'];
      const countParams: string[] = [`${byAccount ? 'account' : 'user'}:${scopeId}`];
      if (query.type !== undefined) {
        countWhere.push('type = ?');
        countParams.push(query.type);
      }
      if (query.status !== undefined) {
        countWhere.push('status = ?');
        countParams.push(query.status);
      }
      totalRecords = sql<{ n: number }>(ctx.db, `SELECT COALESCE(SUM(n), 0) AS n FROM transaction_counts WHERE ${countWhere.join(' AND ')}`).get(
        ...countParams,
      )!.n;
    }

    const offset = query.pageIndex * query.pageSize;
    let items: string[] = [];
    // Past the last page there is nothing to read; skipping the query avoids walking an OFFSET to the end.
    if (offset < totalRecords) {
      const direction = query.sortDirection;
      const rows = sql<PageRow>(
        ctx.db,
        `SELECT t.id, t.rest_json FROM ${t.from} WHERE ${whereSql}
         ORDER BY ${t.col}${SORT_COLUMN[query.sortBy]} ${direction}, ${t.id} ${direction} LIMIT ? OFFSET ?`,
      ).all(...params, query.pageSize, offset);
      items = rows.map((row) => transactionJson(ctx, row));
    }
    return `{"data":[${items.join(',')}],"pageIndex":${query.pageIndex},"pageSize":${query.pageSize},"totalRecords":${totalRecords}}`;
  })();
}

/** GET /v1/transactions/{id}: 404 unknown or another programme's; 403 another user's (contract 1). */
export function getTransactionJson(ctx: AppContext, caller: Caller, transactionId: string): string {
  const row = sql<PageRow & { programme_id: string; user_id: string }>(
    ctx.db,
    'SELECT id, programme_id, user_id, rest_json FROM transactions WHERE id = ?',
  ).get(transactionId);
  if (!row || row.programme_id !== caller.programmeId) throw errors.notFound(`Transaction ${transactionId} not found`);
  if (row.user_id !== caller.userId) throw errors.forbidden(`Transaction ${transactionId} belongs to another user`);
  return transactionJson(ctx, row);
}
