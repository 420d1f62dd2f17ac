import { isCalendarDay, utcMs } from '../../lib/calendar.js';
import { DEFAULT_SEED } from '../../config.js';
import { prepared } from '../../db/connection.js';
import { stateReplacements, writeAfterWait } from '../../scheduler/scheduler.js';
import type { AppContext } from '../../context.js';
import { precisionOf } from '../../context.js';
import { errors, type ValidationError } from '../../core/errors.js';
import { formatAmount } from '../../lib/money.js';
import { clampToClockRange } from '../../lib/clock.js';
import { hexDigestsEqual, hmacSha256Hex } from '../../lib/hmac.js';
import { depositInstructionsOf, requireOwnAccount } from '../accounts/accounts.service.js';
import type { Caller } from '../../core/caller.js';
import { toDepositInstruction } from '../deposit-instructions/deposit-instructions.schema.js';
import { TRANSACTION_TYPES } from '../transactions/transactions.machine.js';
import { renderStatementCsv } from './statement-csv.renderer.js';
import { estimatePdfPages, renderStatementPdf } from './statement-pdf.renderer.js';
import {
  DATE_PATTERN,
  STATEMENT_FORMATS,
  type Statement,
  type StatementDay,
  type StatementEntry,
  type StatementEntryRow,
  type StatementFileRow,
  type StatementFormat,
  type StatementLink,
  type StatementQuery,
  type StatementSummaryLine,
} from './statements.schema.js';

// Account statements (docs/statements.md, interface 2.8, 4.3). The statement follows the posted-entries ledger of
// docs/decisions.md#statement-ledger (the `available` view): every ledger entry of the account is a statement line, so
// an outgoing payment's hold (principal and each fee) shows when it is created and, if it fails, its
// reversal shows when it fails. Balances are running sums of those entries, so
// opening + credits - debits = closing holds by construction.

/** Interface 4.3 / 8: balance history is recorded from this day; earlier periods are rejected. */
export const STATEMENT_HISTORY_START = '2026-01-01';
/** docs/decisions.md#statement-query: a period covers at most this many days (both ends inclusive). */
export const MAX_PERIOD_DAYS = 366;
/** docs/decisions.md#statement-query, interface 7.1: PDF_PAGE_LIMIT_EXCEEDED above this many pages. */
export const PDF_PAGE_LIMIT = 500;
/** Stored files beyond this total are dropped oldest first (their links then answer 404). */
export const MAX_STORED_BYTES = 256 * 1024 * 1024;

const DAY_MS = 86_400_000;

export interface StatementPeriod {
  from: string;
  to: string;
  format: StatementFormat;
  fromMs: number;
  /** Midnight UTC after `to`: the period is [fromMs, toExclusiveMs). */
  toExclusiveMs: number;
}

/** Epoch ms of a real calendar day at midnight UTC, or null for 2026-02-30 and the like. */
function parseDay(value: string): number | null {
  if (!DATE_PATTERN.test(value)) return null;
  const [year, month, day] = [Number(value.slice(0, 4)), Number(value.slice(5, 7)), Number(value.slice(8, 10))];
  return isCalendarDay(year, month, day) ? utcMs(year, month, day) : null;
}

/**
 * The rules of docs/decisions.md#statement-query that zod's shape check cannot express: real calendar days, the history
 * start, order, "not after today" on the emulated clock (UTC), the 366-day span and the case-insensitive format.
 * All failures are reported together, each naming its parameter.
 */
export function validateStatementQuery(ctx: AppContext, query: StatementQuery): StatementPeriod {
  const problems: ValidationError[] = [];
  const fail = (type: ValidationError['type'], fieldRef: string, message: string) => problems.push({ type, fieldRef, message });

  const format = (query.format ?? 'json').toLowerCase();
  if (!(STATEMENT_FORMATS as readonly string[]).includes(format)) {
    fail('InvalidValue', 'format', `format "${query.format}" is not supported; use json, csv or pdf (case-insensitive)`);
  }
  const fromMs = parseDay(query.startDate);
  const toMs = parseDay(query.endDate);
  if (fromMs === null) fail('InvalidFormat', 'startDate', `startDate "${query.startDate}" is not a calendar date YYYY-MM-DD`);
  if (toMs === null) fail('InvalidFormat', 'endDate', `endDate "${query.endDate}" is not a calendar date YYYY-MM-DD`);
  if (fromMs !== null && query.startDate < STATEMENT_HISTORY_START) {
    fail('InvalidValue', 'startDate', `startDate must not be earlier than ${STATEMENT_HISTORY_START}, the first day of recorded balance history`);
  }
  const today = ctx.clock.nowIso().slice(0, 10);
  if (toMs !== null) {
    if (fromMs !== null && toMs < fromMs) {
      fail('InvalidValue', 'endDate', `endDate ${query.endDate} is before startDate ${query.startDate}`);
    } else if (query.endDate > today) {
      fail('InvalidValue', 'endDate', `endDate ${query.endDate} is in the future; today is ${today} (UTC, emulated clock)`);
    } else if (fromMs !== null && (toMs - fromMs) / DAY_MS + 1 > MAX_PERIOD_DAYS) {
      fail('InvalidValue', 'endDate', `The period spans ${(toMs - fromMs) / DAY_MS + 1} days; at most ${MAX_PERIOD_DAYS} days are allowed`);
    }
  }
  if (problems.length > 0) {
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
    throw errors.invalid(`Invalid request: ${problems[0]!.message}${more}`, problems);
  }
  return { from: query.startDate, to: query.endDate, format: format as StatementFormat, fromMs: fromMs!, toExclusiveMs: toMs! + DAY_MS };
}

// Summary lines (interface 2.8 "grouped by transaction type with fees as their own line"). A type whose
// entries go against its natural direction (transfers both ways) gets one line per direction.
const TYPE_LABELS: Record<string, string> = {
  DEPOSIT: 'Deposits',
  WITHDRAWAL: 'Withdrawals',
  TRANSFER: 'Transfers',
  REFUND: 'Refunds',
  PARTIAL_REFUND: 'Partial refunds',
};
const NATURAL_DIRECTION: Record<string, 'CREDIT' | 'DEBIT'> = {
  DEPOSIT: 'CREDIT',
  REFUND: 'CREDIT',
  PARTIAL_REFUND: 'CREDIT',
  WITHDRAWAL: 'DEBIT',
};
export const FEES_LABEL = 'Fees';
export const REVERSALS_LABEL = 'Reversals of failed transactions';

// Money in first, then money out, then fees and reversals.
const SUMMARY_ORDER = ['DEPOSIT:CREDIT', 'TRANSFER:CREDIT', 'REFUND:CREDIT', 'PARTIAL_REFUND:CREDIT', 'WITHDRAWAL:DEBIT', 'TRANSFER:DEBIT'];

function summaryKey(row: StatementEntryRow, direction: 'CREDIT' | 'DEBIT'): { key: string; label: string; rank: number } {
  if (row.kind === 'REVERSAL') return { key: 'REVERSAL', label: REVERSALS_LABEL, rank: 1001 };
  if (row.is_fee === 1n) return { key: 'FEE', label: FEES_LABEL, rank: 1000 };
  const key = `${row.type}:${direction}`;
  const base = TYPE_LABELS[row.type] ?? row.type.charAt(0) + row.type.slice(1).toLowerCase().replaceAll('_', ' ');
  const label = NATURAL_DIRECTION[row.type] === direction ? base : `${base} ${direction === 'CREDIT' ? 'in' : 'out'}`;
  const known = SUMMARY_ORDER.indexOf(key);
  // anything unforeseen (a debit deposit, a new type) after the known lines, in a stable order
  const rank = known >= 0 ? known : 100 + Math.max(0, (TRANSACTION_TYPES as readonly string[]).indexOf(row.type)) * 2 + (direction === 'CREDIT' ? 0 : 1);
  return { key, label, rank };
}

/**
 * A transfer's principal entries name the other account, "to" it on the debit account and "from" it on the
 * credit account, so each side of a transfer between two accounts reads on its own (docs/decisions.md#statement-transfer-counterparty).
 * Fee lines keep their label.
 */
function entryDescription(row: StatementEntryRow): string {
  if (row.other_account_id === null || row.is_fee === 1n) return row.description;
  const other = row.other_account_name ? `${row.other_account_name} (${row.other_account_id})` : row.other_account_id;
  return `${row.description} ${row.is_debit_account === 1n ? 'to' : 'from'} ${other}`;
}

function entryDirection(row: StatementEntryRow): 'CREDIT' | 'DEBIT' {
  if (row.amount_minor > 0n) return 'CREDIT';
  if (row.amount_minor < 0n) return 'DEBIT';
  // a zero entry (a zero fee): the side it was posted on
  return row.kind === 'REVERSAL' || row.direction === 'INCOMING' ? 'CREDIT' : 'DEBIT';
}

/**
 * When the entry's transaction reached a final state: COMPLETED at `completedAt`; FAILED when its hold
 * was reversed (the first REVERSAL entry), or its last update when it never held anything.
 */
function finalAtMs(row: StatementEntryRow): number | null {
  if (row.status === 'COMPLETED') return row.completed_at ? Date.parse(row.completed_at) : Number(row.updated_at_ms);
  if (row.status === 'FAILED') return Number(row.failed_at_ms ?? row.updated_at_ms);
  return null;
}

function holderNameOf(ctx: AppContext, userId: string): string {
  return prepared<{ name: string }>(ctx.db, 'SELECT name FROM users WHERE id = ?').get(userId)?.name ?? '';
}

/** Build the statement of interface 2.8 for the caller's account (synchronous reads only). */
export function buildStatement(ctx: AppContext, caller: Caller, accountId: string, period: StatementPeriod): Statement {
  const account = requireOwnAccount(ctx, caller, accountId);
  const precision = precisionOf(ctx, account.currency);
  const money = (minor: bigint) => formatAmount(minor, precision);
  const nowMs = ctx.clock.nowMs();
  // Settlement is judged at the end of the period, or now when the period ends today.
  const asOfMs = Math.min(period.toExclusiveMs - 1, nowMs);

  const opening = prepared<{ total: bigint }>(
    ctx.db,
    'SELECT COALESCE(SUM(amount_minor), 0) AS total FROM ledger_entries WHERE account_id = ? AND posted_at_ms < ?',
  )
    .safeIntegers(true)
    .get(account.id, period.fromMs)!.total;

  // Chronological, ties broken by entry id (the order entries were posted in).
  const rows = prepared<StatementEntryRow>(
    ctx.db,
    `SELECT e.id, e.kind, e.amount_minor, e.is_fee, e.description, e.posted_at_ms,
            t.type, t.direction, t.status, t.reference_number, t.completed_at, t.updated_at_ms,
            CASE WHEN t.status = 'FAILED'
                 THEN (SELECT MIN(r.posted_at_ms) FROM ledger_entries r WHERE r.transaction_id = t.id AND r.kind = 'REVERSAL')
            END AS failed_at_ms,
            o.id AS other_account_id, o.display_name AS other_account_name, t.debit_account_id IS e.account_id AS is_debit_account
       FROM ledger_entries e JOIN transactions t ON t.id = e.transaction_id
       LEFT JOIN accounts o ON t.type = 'TRANSFER'
                           AND o.id = CASE WHEN t.debit_account_id = e.account_id THEN t.credit_account_id ELSE t.debit_account_id END
      WHERE e.account_id = ? AND e.posted_at_ms >= ? AND e.posted_at_ms < ?
      ORDER BY e.posted_at_ms, e.id`,
  )
    .safeIntegers(true)
    .all(account.id, period.fromMs, period.toExclusiveMs);

  let balance = BigInt(opening);
  let credits = 0n;
  let debits = 0n;
  const days: StatementDay[] = [];
  const summary = new Map<string, { label: string; rank: number; count: number; totalMinor: bigint }>();
  let day: StatementDay | null = null;
  for (const row of rows) {
    const amountMinor = BigInt(row.amount_minor);
    const direction = entryDirection(row);
    const occurredAt = new Date(Number(row.posted_at_ms)).toISOString();
    const date = occurredAt.slice(0, 10);
    if (!day || day.date !== date) {
      day = { date, openingBalance: money(balance), closingBalance: money(balance), entries: [] };
      days.push(day);
    }
    const balanceBefore = balance;
    balance += amountMinor;
    if (amountMinor > 0n) credits += amountMinor;
    else debits -= amountMinor;
    const settledAt = finalAtMs(row);
    const entry: StatementEntry = {
      occurredAt,
      description: entryDescription(row),
      reference: row.reference_number,
      direction,
      amount: money(amountMinor < 0n ? -amountMinor : amountMinor),
      balanceBefore: money(balanceBefore),
      balanceAfter: money(balance),
      isFee: row.is_fee === 1n,
      statusAsOfPeriodEnd: settledAt !== null && settledAt <= asOfMs ? 'SETTLED' : 'IN_FLIGHT',
    };
    day.entries.push(entry);
    day.closingBalance = entry.balanceAfter;

    const group = summaryKey(row, direction);
    const line = summary.get(group.key) ?? { label: group.label, rank: group.rank, count: 0, totalMinor: 0n };
    line.count += 1;
    line.totalMinor += amountMinor;
    summary.set(group.key, line);
  }

  const summaryLines: StatementSummaryLine[] = [...summary.values()]
    .sort((a, b) => a.rank - b.rank)
    .map((line) => ({ label: line.label, count: line.count, total: money(line.totalMinor) }));

  return {
    accountId: account.id,
    accountDisplayName: account.display_name,
    holderName: holderNameOf(ctx, account.user_id),
    currency: account.currency,
    from: period.from,
    to: period.to,
    generatedAt: ctx.clock.nowIso(),
    // Only instructions that can receive funds: a PENDING one is still being provisioned.
    depositInstructions: depositInstructionsOf(ctx, account.id)
      .filter((row) => row.status === 'ACTIVE')
      .map(toDepositInstruction),
    openingBalance: money(BigInt(opening)),
    closingBalance: money(balance),
    totalCredits: money(credits),
    totalDebits: money(debits),
    summary: summaryLines,
    days,
  };
}

// ---- files and signed links (docs/statements.md#links-and-stored-files) ----

/** `statement-<account>-<from>-<to>.<ext>` (Content-Disposition filename). */
export function statementFileName(statement: Pick<Statement, 'accountId' | 'from' | 'to'>, format: 'csv' | 'pdf'): string {
  return `statement-${statement.accountId}-${statement.from}-${statement.to}.${format}`;
}

const CONTENT_TYPES = { csv: 'text/csv; charset=utf-8', pdf: 'application/pdf' } as const;

/**
 * The link secret is derived from the seed, so the same seed, fixtures, clock and requests give
 * byte-identical links (docs/decisions.md#determinism). It protects against tampering in a sandbox; it is not a
 * production secret (anyone who knows the seed can sign a link).
 */
function linkSecret(ctx: AppContext): string {
  return hmacSha256Hex(ctx.config.seed ?? DEFAULT_SEED, 'service-sandbox/statement-file-links/v1');
}

export function signStatementLink(ctx: AppContext, fileId: string, expiresMs: number): string {
  return hmacSha256Hex(linkSecret(ctx), `${fileId}:${expiresMs}`);
}

export interface StoredStatementFile {
  fileId: string;
  expiresAtMs: number;
}

/** Store a rendered file; drop expired files, then the oldest ones beyond MAX_STORED_BYTES. */
export function storeStatementFile(
  ctx: AppContext,
  caller: Caller,
  statement: Statement,
  format: 'csv' | 'pdf',
  content: Buffer,
): StoredStatementFile {
  return ctx.db.transaction(() => {
    const nowMs = ctx.clock.nowMs();
    prepared(ctx.db, 'DELETE FROM statement_files WHERE expires_at_ms <= ?').run(nowMs);
    const fileId = ctx.ids.id('statementFile');
    const expiresAtMs = clampToClockRange(nowMs + ctx.fixtures.timeline.statementLinkMs); // docs/decisions.md#clock-range
    prepared(
      ctx.db,
      `INSERT INTO statement_files (id, programme_id, user_id, account_id, format, file_name, content_type, content, size_bytes,
         created_at, created_at_ms, expires_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      fileId,
      caller.programmeId,
      caller.userId,
      statement.accountId,
      format,
      statementFileName(statement, format),
      CONTENT_TYPES[format],
      content,
      content.length,
      ctx.clock.nowIso(),
      nowMs,
      expiresAtMs,
    );
    let stored = prepared<{ total: number }>(ctx.db, 'SELECT COALESCE(SUM(size_bytes), 0) AS total FROM statement_files').get()!.total;
    while (stored > MAX_STORED_BYTES) {
      const oldest = prepared<{ id: string; size_bytes: number }>(
        ctx.db,
        'SELECT id, size_bytes FROM statement_files WHERE id <> ? ORDER BY created_at_ms, rowid LIMIT 1',
      ).get(fileId);
      if (!oldest) break;
      prepared(ctx.db, 'DELETE FROM statement_files WHERE id = ?').run(oldest.id);
      stored -= oldest.size_bytes;
    }
    return { fileId, expiresAtMs };
  })();
}

export function statementLink(ctx: AppContext, baseUrl: string, file: StoredStatementFile): StatementLink {
  const signature = signStatementLink(ctx, file.fileId, file.expiresAtMs);
  return {
    url: `${baseUrl}/v1/statement-files/${encodeURIComponent(file.fileId)}?expires=${file.expiresAtMs}&signature=${signature}`,
    expiresAt: new Date(file.expiresAtMs).toISOString(),
  };
}

/**
 * docs/decisions.md#statement-links: the signed link is the only credential. A missing, altered or expired part gives
 * 403; a well-signed, unexpired link to a file that is no longer stored (reset, purge) gives 404.
 */
export function openStatementFile(ctx: AppContext, fileId: string, expires: unknown, signature: unknown): StatementFileRow {
  if (typeof expires !== 'string' || typeof signature !== 'string' || !expires || !signature) {
    throw errors.forbidden('The statement link is incomplete or malformed: it needs exactly one expires and one signature; request a new link');
  }
  if (!/^\d{1,16}$/.test(expires) || !hexDigestsEqual(signStatementLink(ctx, fileId, Number(expires)), signature)) {
    throw errors.forbidden('The statement link signature does not match; use the URL exactly as returned, or request a new link');
  }
  const expiresMs = Number(expires);
  if (expiresMs <= ctx.clock.nowMs()) {
    throw errors.forbidden(`The statement link expired at ${new Date(expiresMs).toISOString()}; request a new link`);
  }
  const row = prepared<StatementFileRow>(ctx.db, 'SELECT * FROM statement_files WHERE id = ?').get(fileId);
  if (!row || row.expires_at_ms !== expiresMs) {
    throw errors.notFound(`Statement file ${fileId} is no longer stored; request a new link`);
  }
  return row;
}

/**
 * GET /v1/accounts/{accountId}/statement. JSON is answered inline; CSV and PDF are rendered from the
 * same statement outside any SQLite transaction, stored, and answered with a signed link.
 */
export async function requestStatement(
  ctx: AppContext,
  caller: Caller,
  accountId: string,
  query: StatementQuery,
  baseUrl: string,
): Promise<Statement | StatementLink> {
  for (;;) {
    const before = stateReplacements(ctx);
    const period = validateStatementQuery(ctx, query);
    const statement = buildStatement(ctx, caller, accountId, period);
    if (period.format === 'json') return statement;
    const { format } = period;
    let content: Buffer;
    if (format === 'pdf') {
      // Counted with the renderer's own layout, without drawing, so an oversized statement costs no rendering.
      const pages = estimatePdfPages(statement);
      if (pages > PDF_PAGE_LIMIT) {
        throw errors.rejected(
          'PDF_PAGE_LIMIT_EXCEEDED',
          `The PDF statement would have ${pages} pages; the limit is ${PDF_PAGE_LIMIT}. Request a shorter period, or format=csv or json`,
        );
      }
      content = await renderStatementPdf(statement);
    } else {
      content = await renderStatementCsv(statement);
    }
    // docs/statements.md#links-and-stored-files, docs/control-plane.md#a-write-after-a-wait: stored once no save, restore or reset of
    // the sandbox is under way; one that replaced the state while this rendered makes it a statement of another state,
    // so it is built and rendered again from the state as it is now (each round needs a whole restore or reset)
    const file = await writeAfterWait(ctx, 'its statement was rendered', () =>
      stateReplacements(ctx) === before ? storeStatementFile(ctx, caller, statement, format, content) : null,
    );
    if (file) return statementLink(ctx, baseUrl, file);
  }
}
