import { prepared } from '../../db/connection.js';
import type { AppContext } from '../../context.js';
import { precisionOf } from '../../context.js';
import { errors } from '../../core/errors.js';
import { formatAmount } from '../../lib/money.js';
import type { Caller } from '../../core/caller.js';
import type { Page } from '../../core/page.js';
import { readPage, type PageRequest } from '../../db/page.js';
import { readCacheOf } from '../../db/read-cache.js';
import { balancesOf } from '../ledger/ledger.service.js';
import { toDepositInstruction, type DepositInstructionRow } from '../deposit-instructions/deposit-instructions.schema.js';
import { ACCOUNT_COLUMNS, toAccount, type Account, type AccountDetail, type AccountRow } from './accounts.schema.js';

/**
 * The caller's own top-level account. docs/decisions.md#status-codes: an id of another programme (or no such id) is
 * 404; an account of another user of the same programme is 403.
 */
export function requireOwnAccount(ctx: AppContext, caller: Caller, accountId: string): AccountRow {
  const row = requireProgrammeAccount(ctx, caller.programmeId, accountId);
  if (row.user_id !== caller.userId) throw errors.forbidden(`Account ${accountId} belongs to another user`);
  return row;
}

/**
 * A top-level account of any user of the programme; 404 otherwise, as for one user (docs/decisions.md#status-codes).
 */
export function requireProgrammeAccount(ctx: AppContext, programmeId: string, accountId: string): AccountRow {
  const row = prepared<AccountRow>(ctx.db, 'SELECT * FROM accounts WHERE id = ?').get(accountId);
  if (!row || row.programme_id !== programmeId || row.parent_account_id !== null) {
    throw errors.notFound(`Account ${accountId} not found`);
  }
  return row;
}

// A page is kept while the database is unchanged (docs/architecture.md#the-read-cache): a client polling its accounts
// is answered without SQL. The answers are shared, so nothing may change one (the serializer only reads it).
const PAGE_CACHE = { maxEntries: 256, maxBytes: 256 };

// docs/decisions.md#accounts-list: createdAt ascending, then id. Only the 8 columns the list answers
// (docs/benchmarks.md#uncached-reads).
export function listAccounts(ctx: AppContext, caller: Caller, page: PageRequest): Page<Account> {
  const build = () =>
    readPage<AccountRow, Account>(
      ctx.db,
      { columns: ACCOUNT_COLUMNS, from: 'accounts WHERE user_id = ? AND parent_account_id IS NULL', orderBy: 'created_at_ms, id' },
      [caller.userId],
      page,
      toAccount,
    );
  if (ctx.config.readCache === 'off') return build();
  return readCacheOf<Page<Account>>(ctx.db, 'accounts-list', PAGE_CACHE, () => 1).get(`${caller.userId}\n${page.pageIndex}\n${page.pageSize}`, build);
}

export function depositInstructionsOf(ctx: AppContext, accountId: string): DepositInstructionRow[] {
  return prepared<DepositInstructionRow>(ctx.db, 'SELECT * FROM deposit_instructions WHERE account_id = ? ORDER BY created_at_ms, id').all(accountId);
}

export function getAccountDetail(ctx: AppContext, caller: Caller, accountId: string): AccountDetail {
  const row = requireOwnAccount(ctx, caller, accountId);
  const precision = precisionOf(ctx, row.currency);
  const balances = balancesOf(ctx, row.id);
  return {
    ...toAccount(row),
    depositInstructions: depositInstructionsOf(ctx, row.id).map(toDepositInstruction),
    balances: {
      current: formatAmount(balances.currentMinor, precision),
      available: formatAmount(balances.availableMinor, precision),
    },
  };
}
