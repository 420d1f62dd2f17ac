import { prepared } from '../db/connection.js';
import { sqlFilter, whereClause } from '../db/filter.js';
import { listFaultRules } from '../faults/fault-rules.service.js';
import { getWebhookChaos } from '../faults/webhook-chaos.service.js';
import type { AppContext } from '../context.js';
import { precisionOf } from '../context.js';
import { errors } from '../core/errors.js';
import { formatAmount } from '../lib/money.js';
import type { AccountRow } from '../domains/accounts/accounts.schema.js';
import type { DepositInstructionRow } from '../domains/deposit-instructions/deposit-instructions.schema.js';
import { balancesOf } from '../domains/ledger/ledger.service.js';
import { getTransactionRow, precisionLookup } from '../domains/transactions/transactions.stored.js';
import { toTransaction } from '../domains/transactions/transactions.schema.js';
import type { TransactionRow } from '../domains/transactions/transactions.schema.js';
import type { UserRow } from '../domains/users/users.schema.js';
import { listDeliveries } from '../domains/webhooks/webhooks.views.js';
import { clockView } from './clock.service.js';
import { storyParts } from './story.service.js';
import type {
  DashboardState,
  DashboardStateQuery,
  EmulatorTransaction,
  EmulatorTransactionDetail,
  EmulatorTransactionsQuery,
  Overview,
} from './overview.schema.js';

// Control-plane read models (docs/dashboard.md#read-endpoints-behind-the-dashboard) across every programme: no user
// context, no credentials (the admin guard covers them when ADMIN_TOKEN is set). Sub-balances stay hidden, as in the
// public API.

interface ProgrammeRow {
  id: string;
  name: string;
  webhook_url: string | null;
}

export function getOverview(ctx: AppContext): Overview {
  const programmes = prepared<ProgrammeRow>(ctx.db, 'SELECT id, name, webhook_url FROM programmes ORDER BY rowid').all();
  const users = prepared<UserRow>(ctx.db, 'SELECT * FROM users ORDER BY programme_id, created_at_ms, id').all();
  const accounts = prepared<AccountRow>(ctx.db, 'SELECT * FROM accounts WHERE parent_account_id IS NULL ORDER BY user_id, created_at_ms, id').all();
  const instructions = prepared<DepositInstructionRow>(
    ctx.db,
    `SELECT d.* FROM deposit_instructions d JOIN accounts a ON a.id = d.account_id
      WHERE a.parent_account_id IS NULL ORDER BY d.account_id, d.created_at_ms, d.id`,
  ).all();

  const instructionsByAccount = groupBy(instructions, (row) => row.account_id);
  const accountsByUser = groupBy(accounts, (row) => row.user_id);
  const usersByProgramme = groupBy(users, (row) => row.programme_id);

  return {
    now: ctx.clock.nowIso(),
    programmes: programmes.map((programme) => ({
      id: programme.id,
      name: programme.name,
      webhookUrl: programme.webhook_url,
      users: (usersByProgramme.get(programme.id) ?? []).map((user) => ({
        id: user.id,
        externalId: user.external_id,
        name: user.name,
        type: user.type,
        enrollmentStatus: user.enrollment_status,
        enrollmentStatusReason: user.enrollment_status_reason,
        enrollmentStarted: user.enrollment_started_at !== null,
        accounts: (accountsByUser.get(user.id) ?? []).map((account) => {
          const precision = precisionOf(ctx, account.currency);
          const balances = balancesOf(ctx, account.id);
          return {
            id: account.id,
            displayName: account.display_name,
            currency: account.currency,
            kind: account.kind === 'STABLECOIN' ? ('STABLECOIN' as const) : ('FIAT' as const),
            status: account.status,
            providerReady: account.provider_ready === 1,
            balances: {
              current: formatAmount(balances.currentMinor, precision),
              available: formatAmount(balances.availableMinor, precision),
            },
            depositInstructions: (instructionsByAccount.get(account.id) ?? []).map((instruction) => ({
              id: instruction.id,
              name: instruction.name,
              status: instruction.status,
              rail: { type: instruction.rail_type, label: instruction.rail_label },
            })),
          };
        }),
      })),
    })),
  };
}

function toEmulatorTransaction(ctx: AppContext, row: TransactionRow): EmulatorTransaction {
  return { ...toTransaction(row, precisionLookup(ctx)), userId: row.user_id, programmeId: row.programme_id, accountId: row.account_id };
}

/**
 * Newest first (createdAt, then id) across programmes; each filter narrows. The WHERE clause names only the
 * filters given, so SQLite can use the account or user index (one prepared statement per combination).
 * The page's ids are chosen first and only those rows read whole: sorting whole rows of a large table
 * costs about 15 times more than sorting (createdAt, id) pairs.
 */
export function listEmulatorTransactions(ctx: AppContext, query: EmulatorTransactionsQuery): EmulatorTransaction[] {
  const filter = sqlFilter([
    ['account_id = ?', query.accountId],
    ['user_id = ?', query.userId],
    ['programme_id = ?', query.programmeId],
  ]);
  const rows = prepared<TransactionRow>(
    ctx.db,
    // CROSS JOIN keeps the page as the outer loop (SQLite does not reorder it), so each row is one key lookup.
    `SELECT t.* FROM (SELECT id FROM transactions ${whereClause(filter)} ORDER BY created_at_ms DESC, id DESC LIMIT +?) page
      CROSS JOIN transactions t ON t.id = page.id
      ORDER BY t.created_at_ms DESC, t.id DESC`,
  ).all(...filter.params, query.limit);
  return rows.map((row) => toEmulatorTransaction(ctx, row));
}

export function getEmulatorTransaction(ctx: AppContext, transactionId: string): EmulatorTransactionDetail {
  const row = getTransactionRow(ctx, transactionId);
  if (!row) throw errors.notFound(`Transaction ${transactionId} not found`);
  return { transaction: toTransaction(row, precisionLookup(ctx)), userId: row.user_id, programmeId: row.programme_id, accountId: row.account_id };
}

// The most deliveries one transaction can have in the feed (one per event; a transaction has a handful).
const MAX_DELIVERIES = 200;

/** Everything the dashboard draws, in one read: it polls this once a second. */
export function getDashboardState(ctx: AppContext, query: DashboardStateQuery): DashboardState {
  const { selected, ...transactionsQuery } = query;
  const clock = clockView(ctx);
  return {
    overview: getOverview(ctx),
    clock: { now: clock.now, mode: clock.mode },
    transactions: listEmulatorTransactions(ctx, transactionsQuery),
    selected:
      selected === undefined
        ? null
        : {
            id: selected,
            detail: getTransactionRow(ctx, selected) ? getEmulatorTransaction(ctx, selected) : null,
            deliveries: listDeliveries(ctx, { transactionId: selected, sortDirection: 'ASC', pageIndex: 0, pageSize: MAX_DELIVERIES }).data,
            story: storyParts(ctx, selected),
          },
    faults: { rules: listFaultRules(ctx), chaos: getWebhookChaos(ctx) },
  };
}

function groupBy<T>(rows: T[], key: (row: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const row of rows) {
    const group = out.get(key(row));
    if (group) group.push(row);
    else out.set(key(row), [row]);
  }
  return out;
}
