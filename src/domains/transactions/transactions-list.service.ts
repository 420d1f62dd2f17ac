import { prepared } from '../../db/connection.js';
import { readCacheOf } from '../../db/read-cache.js';
import { sqlFilter } from '../../db/filter.js';
import type { AppContext } from '../../context.js';
import type { StateSlot } from '../../runtime/sandbox-runtime.js';
import { errors } from '../../core/errors.js';
import type { CallerScope } from '../../core/caller.js';
import { requireOwnAccount, requireProgrammeAccount } from '../accounts/accounts.service.js';
import { transactionJson } from './transactions.stored.js';
import type { ListTransactionsQuery, TransactionSortField } from './transactions.schema.js';

// GET /v1/transactions and GET /v1/transactions/{id} (docs/money-in.md#transactions, interface 4.5, 4.6).
//
// Scope (docs/money-in.md#programme-wide-transactions): a call acts for one user (docs/decisions.md#user-context), and
// then "every transaction in the programme" (interface 4.5) is every transaction of that user across all of
// their accounts; a MULTI_USER key without X-Service-User-Id acts for the whole programme, every user's
// transactions. `accountId` narrows either to one account (the caller's own, or any account of the
// programme at programme scope), sub-balances included (migration 002 `transaction_accounts`).
//
// Speed with 1,000,000 rows (migrations 002, 007 and 013): each sort of each scope is one index range
// (ORDER BY key, id in the same direction), filters on type/status have their own indexes, the page is
// the stored REST JSON of each row concatenated, and `totalRecords` comes from counters kept by triggers:
// `transaction_counts` (scope x type x status) and `transaction_time_counts` (scope x hour of createdAt or
// updatedAt), a scope being 'user:<id>', 'account:<id>' or 'programme:<id>'. A time bound with a type or status
// filter, bounds on both createdAt and updatedAt, or a time bound with a filter on the account scope count the
// query's own index range (the (scope, type or status, time) indexes; docs/decisions.md#list-counters).

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

// One read transaction per list request, so the count and the page see the same snapshot. The wrapper is
// made once per database handle: better-sqlite3 builds a new one (four functions and their properties)
// on every `db.transaction(fn)` call, which showed up in the list's profile. It is a runtime slot of the sandbox
// (docs/architecture.md#runtime), made on the first list.
export const listReaderSlot: StateSlot<{ run: ((work: () => string) => string) | null }> = {
  name: 'transactions.listReader',
  create: () => ({ run: null }),
  reset: 'keep', // bound to the database handle, which a reset keeps
  carriedBySnapshots: false,
  newSession: 'fresh',
};

function inReadTransaction(ctx: AppContext, work: () => string): string {
  const reader = ctx.runtime.get(listReaderSlot);
  reader.run ??= ctx.db.transaction((fn: () => string) => fn());
  return reader.run(work);
}

// Pages are kept as UTF-8 bytes while the database is unchanged (db/read-cache.ts): a repeated request
// costs one marker read instead of the page query, and the bytes go to the socket without re-encoding.
// 256 pages or 16 MiB at most (a page of 25 is about 25 KB).
const PAGE_CACHE = { maxEntries: 256, maxBytes: 16 * 1024 * 1024 };

/** The list envelope of interface 2 as JSON bytes, from the page cache when nothing changed since. */
export function listTransactionsPage(ctx: AppContext, caller: CallerScope, query: ListTransactionsQuery): Buffer | string {
  // Built for one answer only: the text goes to the socket as is (encoded once, in the write), no Buffer copy first.
  if (ctx.config.readCache === 'off') return listTransactionsJson(ctx, caller, query);
  const cache = readCacheOf<Buffer>(ctx.db, 'transactions-list', PAGE_CACHE, (page) => page.length);
  // A programme page and a user's page of the same query are different answers: keyed apart.
  const who = caller.userId === null ? 'programme' : `user:${caller.userId}`;
  const key = `${caller.programmeId}\n${who}\n${JSON.stringify(query)}`;
  return cache.get(key, () => Buffer.from(listTransactionsJson(ctx, caller, query)));
}

/** The list envelope of interface 2, as JSON text (the rows' stored REST JSON is spliced in as is). */
export function listTransactionsJson(ctx: AppContext, caller: CallerScope, query: ListTransactionsQuery): string {
  return inReadTransaction(ctx, () => {
    const byAccount = query.accountId !== undefined;
    const programmeWide = caller.userId === null;
    const scopeId = byAccount
      ? (programmeWide
          ? requireProgrammeAccount(ctx, caller.programmeId, query.accountId!)
          : requireOwnAccount(ctx, { programmeId: caller.programmeId, userId: caller.userId! }, query.accountId!)
        ).id
      : (caller.userId ?? caller.programmeId);
    const scopeKey: Listing['key'] = byAccount ? 'account_id' : programmeWide ? 'programme_id' : 'user_id';

    // The SQL of the scope's table: transactions itself (user, programme; alias t) or transaction_accounts
    // (account; alias m, joined to t for the stored JSON). Filter and sort columns are read with `columnPrefix`.
    const scopeSql = byAccount
      ? {
          from: 'transaction_accounts m CROSS JOIN transactions t ON t.id = m.transaction_id',
          keyColumn: 'm.account_id',
          columnPrefix: 'm.',
          idColumn: 'm.transaction_id',
        }
      : { from: 'transactions t', keyColumn: `t.${scopeKey}`, columnPrefix: 't.', idColumn: 't.id' };
    const prefix = scopeSql.columnPrefix;
    const { sql: whereSql, params } = sqlFilter([
      [`${scopeSql.keyColumn} = ?`, scopeId],
      [`${prefix}type = ?`, query.type],
      [`${prefix}status = ?`, query.status],
      [`${prefix}updated_at_ms >= ?`, query.minUpdatedAt],
      [`${prefix}updated_at_ms <= ?`, query.maxUpdatedAt],
      [`${prefix}created_at_ms >= ?`, query.minCreatedAt],
    ]);
    const timeBound = query.minUpdatedAt !== undefined || query.maxUpdatedAt !== undefined || query.minCreatedAt !== undefined;

    const countScope = `${byAccount ? 'account' : programmeWide ? 'programme' : 'user'}:${scopeId}`;
    const createdBound = query.minCreatedAt !== undefined;
    const updatedBound = query.minUpdatedAt !== undefined || query.maxUpdatedAt !== undefined;
    let totalRecords: number;
    if (!timeBound) {
      totalRecords = countFromCounters(ctx, countScope, query.type, query.status);
    } else if (createdBound !== updatedBound && query.type === undefined && query.status === undefined) {
      const field = createdBound ? 'created' : 'updated';
      const listing: Listing = { table: byAccount ? 'transaction_accounts' : 'transactions', key: scopeKey, scopeId, countScope };
      totalRecords = createdBound
        ? countInRange(ctx, listing, field, query.minCreatedAt, undefined)
        : countInRange(ctx, listing, field, query.minUpdatedAt, query.maxUpdatedAt);
    } else {
      // Time bounds combined with other filters: count the index range of the query itself.
      const countFrom = byAccount ? 'transaction_accounts m' : 'transactions t';
      totalRecords = prepared<{ n: number }>(ctx.db, `SELECT COUNT(*) AS n FROM ${countFrom} WHERE ${whereSql}`).get(...params)!.n;
    }

    const offset = query.pageIndex * query.pageSize;
    let items = '';
    // Past the last page there is nothing to read; skipping the query avoids walking an OFFSET to the end.
    if (offset < totalRecords) {
      const direction = query.sortDirection;
      // One text column per row (plucked: no row objects): the stored REST JSON, or the id when it is stale
      // (NULL, migration 002). Stored JSON always starts with "{" and an id never does.
      // Not `readPage` (src/db/page.ts): the count comes from counters and the page is concatenated text.
      // `LIMIT +?` as readPage has: a bare `LIMIT ?` is prepared again on every run (docs/benchmarks.md#uncached-reads);
      // the plans of every list shape are checked by test/domains/transactions/transactions-list-plans.test.ts.
      const values = prepared(
        ctx.db,
        `SELECT IFNULL(t.rest_json, t.id) FROM ${scopeSql.from} WHERE ${whereSql}
         ORDER BY ${scopeSql.columnPrefix}${SORT_COLUMN[query.sortBy]} ${direction}, ${scopeSql.idColumn} ${direction} LIMIT +? OFFSET +?`,
      )
        .pluck()
        .all(...params, query.pageSize, offset) as string[];
      for (let index = 0; index < values.length; index += 1) {
        const value = values[index]!;
        if (value.charCodeAt(0) !== 123 /* { */) values[index] = transactionJson(ctx, { id: value });
      }
      items = values.join(',');
    }
    return `{"data":[${items}],"pageIndex":${query.pageIndex},"pageSize":${query.pageSize},"totalRecords":${totalRecords}}`;
  });
}

function countFromCounters(ctx: AppContext, scope: string, type?: string, status?: string): number {
  const filter = sqlFilter([
    ['scope = ?', scope],
    ['type = ?', type],
    ['status = ?', status],
  ]);
  return prepared<{ n: number }>(ctx.db, `SELECT COALESCE(SUM(n), 0) AS n FROM transaction_counts WHERE ${filter.sql}`).get(...filter.params)!.n;
}

// Exact counts over a time range from the hourly counters of migration 002 (transaction_time_counts):
// whole hours are summed, and only the hour a bound falls in is counted row by row, from whichever side
// of the bound is smaller (a probe of PROBE rows decides), so even a million rows sharing one instant
// (a frozen clock) count in a few milliseconds.
const BUCKET_MS = 3_600_000;
const PROBE = 2_000;

interface Listing {
  table: 'transactions' | 'transaction_accounts';
  key: 'user_id' | 'account_id' | 'programme_id';
  scopeId: string;
  countScope: string;
}

function countInRange(ctx: AppContext, listing: Listing, field: 'created' | 'updated', minMs: number | undefined, maxMs: number | undefined): number {
  // A narrow range (the tail a change sync polls) is cheaper to count row by row, up to PROBE rows.
  const column = `${field}_at_ms`;
  const scope = { where: `${listing.key} = ?`, params: [listing.scopeId] };
  const direct = prepared<{ n: number }>(
    ctx.db,
    `SELECT COUNT(*) AS n FROM (SELECT 1 FROM ${listing.table} WHERE ${scope.where} AND ${column} >= ? AND ${column} <= ? LIMIT +?)`,
  ).get(...scope.params, minMs ?? Number.MIN_SAFE_INTEGER, maxMs ?? Number.MAX_SAFE_INTEGER, PROBE)!.n;
  if (direct < PROBE) return direct;
  const total = countFromCounters(ctx, listing.countScope);
  const upper = maxMs === undefined ? total : countBelow(ctx, listing, field, maxMs + 1, total);
  const lower = minMs === undefined ? 0 : countBelow(ctx, listing, field, minMs, total);
  return upper - lower;
}

/** Rows of the scope whose `field` is before `x` (epoch ms). */
function countBelow(ctx: AppContext, listing: Listing, field: 'created' | 'updated', x: number, total: number): number {
  const column = `${field}_at_ms`;
  const scope = { where: `${listing.key} = ?`, params: [listing.scopeId] };
  const rows = (from: number, to: number, limit?: number) =>
    prepared<{ n: number }>(
      ctx.db,
      limit === undefined
        ? `SELECT COUNT(*) AS n FROM ${listing.table} WHERE ${scope.where} AND ${column} >= ? AND ${column} < ?`
        : `SELECT COUNT(*) AS n FROM (SELECT 1 FROM ${listing.table} WHERE ${scope.where} AND ${column} >= ? AND ${column} < ? LIMIT +?)`,
    ).get(...scope.params, from, to, ...(limit === undefined ? [] : [limit]))!.n;
  const counters = { table: 'transaction_time_counts', where: 'scope = ? AND field = ?', params: [listing.countScope] };
  if (x <= 0) return rows(Number.MIN_SAFE_INTEGER, x);
  const fieldCode = field === 'created' ? 'c' : 'u';
  const bucket = Math.floor(x / BUCKET_MS);
  const bucketStart = bucket * BUCKET_MS;
  // Three index seeks (one aggregate with MIN and MAX together would scan every hour of the scope).
  const edge = (order: 'ASC' | 'DESC') =>
    prepared<{ bucket: number }>(ctx.db, `SELECT bucket FROM ${counters.table} WHERE ${counters.where} ORDER BY bucket ${order} LIMIT 1`).get(
      ...counters.params,
      fieldCode,
    )?.bucket;
  const lowest = edge('ASC');
  const highest = edge('DESC');
  if (lowest === undefined || highest === undefined || bucket < lowest) return 0;
  if (bucket > highest) return total;
  const inBucket =
    prepared<{ n: number }>(ctx.db, `SELECT n FROM ${counters.table} WHERE ${counters.where} AND bucket = ?`).get(...counters.params, fieldCode, bucket)?.n ?? 0;
  // Whole hours before the bound's hour: summed from the nearer end of the range of hours.
  const before =
    bucket - lowest <= highest - bucket
      ? prepared<{ n: number }>(ctx.db, `SELECT COALESCE(SUM(n), 0) AS n FROM ${counters.table} WHERE ${counters.where} AND bucket < ?`).get(
          ...counters.params,
          fieldCode,
          bucket,
        )!.n
      : total -
        inBucket -
        prepared<{ n: number }>(ctx.db, `SELECT COALESCE(SUM(n), 0) AS n FROM ${counters.table} WHERE ${counters.where} AND bucket > ?`).get(
          ...counters.params,
          fieldCode,
          bucket,
        )!.n;
  const probe = rows(bucketStart, x, PROBE);
  const partial = probe < PROBE ? probe : inBucket - rows(x, bucketStart + BUCKET_MS);
  return before + partial;
}

/**
 * GET /v1/transactions/{id}: 404 unknown or another programme's; 403 another user's (docs/decisions.md#status-codes),
 * unless the call acts for the whole programme (docs/money-in.md#programme-wide-transactions).
 */
export function getTransactionJson(ctx: AppContext, caller: CallerScope, transactionId: string): string {
  const row = prepared<PageRow & { programme_id: string; user_id: string }>(
    ctx.db,
    'SELECT id, programme_id, user_id, rest_json FROM transactions WHERE id = ?',
  ).get(transactionId);
  if (!row || row.programme_id !== caller.programmeId) throw errors.notFound(`Transaction ${transactionId} not found`);
  if (caller.userId !== null && row.user_id !== caller.userId) throw errors.forbidden(`Transaction ${transactionId} belongs to another user`);
  return transactionJson(ctx, row);
}
