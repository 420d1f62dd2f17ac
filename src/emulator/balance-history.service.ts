import { prepared } from '../db/connection.js';
import type { AppContext } from '../context.js';
import { precisionOf } from '../context.js';
import { errors } from '../core/errors.js';
import { formatAmount } from '../lib/money.js';
import { clampToClockRange } from '../lib/clock.js';
import { controlPlaneAccount } from './accounts.service.js';
import { MAX_POINTS, type BalanceHistory, type BalanceHistoryQuery } from './balance-history.schema.js';

// Balance over time (docs/dashboard.md#balance-over-time): an account's `current` and `available` balances at every
// moment they changed, rebuilt from its ledger entries. `available` counts every posted entry from its posting time;
// `current` counts an entry only once its transaction has left PENDING and PROCESSING (balancesOf in
// ledger.service.ts), so a hold, and the reversal that undoes a failed one, show as the gap between the two lines.

const DAY_MS = 86_400_000;
/** The longest period one request may cover. */
const MAX_SPAN_MS = 400 * DAY_MS;

interface EntryRow {
  amount_minor: bigint;
  posted_at_ms: bigint;
  status: string;
  completed_at: string | null;
  updated_at_ms: bigint;
}

export function getBalanceHistory(ctx: AppContext, accountId: string, query: BalanceHistoryQuery): BalanceHistory {
  const account = controlPlaneAccount(ctx, accountId);
  const toMs = query.to === undefined ? ctx.clock.nowMs() : Date.parse(query.to);
  // docs/decisions.md#clock-range: the default window starts no earlier than the clock's range does
  const fromMs = query.from === undefined ? clampToClockRange(toMs - 7 * DAY_MS) : Date.parse(query.from);
  // a default window at the range's first instant is empty, not an error: the client asked for no bound
  if (fromMs >= toMs && query.from !== undefined) throw errors.field('InvalidValue', 'from', 'from must be earlier than to');
  if (toMs - fromMs > MAX_SPAN_MS) throw errors.field('InvalidValue', 'from', 'The period may cover at most 400 days');
  const precision = precisionOf(ctx, account.currency);

  const rows = prepared<EntryRow>(
    ctx.db,
    `SELECT e.amount_minor, e.posted_at_ms, t.status, t.completed_at, t.updated_at_ms
       FROM ledger_entries e JOIN transactions t ON t.id = e.transaction_id
      WHERE e.account_id = ? AND e.posted_at_ms <= ?
      ORDER BY e.posted_at_ms, e.id`,
  )
    .safeIntegers(true)
    .all(accountId, toMs);

  // Each entry moves `available` when posted and `current` when its transaction settles (COMPLETED or FAILED: a
  // failed one's hold and reversal then net out), never before it is posted.
  const changes = new Map<number, { available: bigint; current: bigint }>();
  const add = (at: number, field: 'available' | 'current', amount: bigint) => {
    const change = changes.get(at) ?? { available: 0n, current: 0n };
    change[field] += amount;
    changes.set(at, change);
  };
  for (const row of rows) {
    const posted = Number(row.posted_at_ms);
    add(posted, 'available', row.amount_minor);
    const settledAt =
      row.status === 'COMPLETED' ? (row.completed_at ? Date.parse(row.completed_at) : Number(row.updated_at_ms)) : row.status === 'FAILED' ? Number(row.updated_at_ms) : null;
    if (settledAt !== null && settledAt <= toMs) add(Math.max(posted, settledAt), 'current', row.amount_minor);
  }

  let available = 0n;
  let current = 0n;
  const times = [...changes.keys()].sort((a, b) => a - b);
  const point = (at: number) => ({ at: new Date(at).toISOString(), current: formatAmount(current, precision), available: formatAmount(available, precision) });
  const inside: Array<ReturnType<typeof point>> = [];
  let startPoint: ReturnType<typeof point> | null = null;
  for (const at of times) {
    if (at > toMs) break;
    if (at > fromMs && startPoint === null) startPoint = point(fromMs);
    const change = changes.get(at)!;
    available += change.available;
    current += change.current;
    if (at > fromMs) inside.push(point(at));
  }
  startPoint ??= point(fromMs);
  const truncated = inside.length > MAX_POINTS;
  const kept = truncated ? inside.slice(-MAX_POINTS) : inside;
  const last = kept[kept.length - 1];
  const points = [startPoint, ...kept];
  if (Date.parse((last ?? startPoint).at) < toMs) points.push(point(toMs));
  return { accountId, currency: account.currency, from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString(), points, truncated };
}
