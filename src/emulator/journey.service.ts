import { prepared } from '../db/connection.js';
import type { AppContext } from '../context.js';
import { precisionOf } from '../context.js';
import { errors } from '../core/errors.js';
import { formatAmount } from '../lib/money.js';
import type { AccountRow } from '../domains/accounts/accounts.schema.js';
import type { DepositInstructionRow } from '../domains/deposit-instructions/deposit-instructions.schema.js';
import type { EnrollmentRow } from '../domains/enrollment/enrollment.schema.js';
import type { InformationRequestRow } from '../domains/information-requests/information-requests.schema.js';
import { REVIEW_JOB } from '../domains/information-requests/information-requests.service.js';
import type { Fee, TransactionRow } from '../domains/transactions/transactions.schema.js';
import type { UserRow } from '../domains/users/users.schema.js';
import { JOURNEY_DEFAULT_LIMIT, type JourneyItem, type JourneyKind, type JourneyQuery, type UserJourney } from './journey.schema.js';

// A user's journey (docs/dashboard.md#the-journey-of-a-user), read from the tables that already record each step with
// its emulated time; nothing is written, so reading a journey changes nothing (not even a fixture user's lazily
// written enrollment rows). Where the records keep a time:
//   - the user: users.created_at;
//   - its information requests: created_at (DRAFT), submitted_at (PROCESSING_SUBMISSION), the creation of the review
//     job (PENDING_REVIEW: the job is scheduled at that very move), decided_at (COMPLETED) or updated_at (CANCELED);
//   - its enrollment: the decision's time (ACTIVE or ACTIVATION_REJECTED), updated_at for a revocation;
//   - accounts and deposit instructions: created_at;
//   - transactions: the events they recorded, one per status (as in the story, story.service.ts), or for seeded
//     history its creation with its last status.

/** Items at one instant keep the order in which they happen: onboarding, then accounts, then money. */
const KIND_RANK: Record<JourneyKind, number> = {
  USER_CREATED: 0,
  INFORMATION_REQUEST: 1,
  ENROLLMENT: 2,
  ACCOUNT_OPENED: 3,
  DEPOSIT_INSTRUCTION: 4,
  MONEY_IN: 5,
  MONEY_OUT: 5,
};

type Draft = Pick<JourneyItem, 'at' | 'kind' | 'status' | 'title' | 'resourceId'> & Partial<JourneyItem>;

function item(draft: Draft): JourneyItem {
  return {
    phase: draft.kind === 'ACCOUNT_OPENED' || draft.kind === 'DEPOSIT_INSTRUCTION' ? 'ACCOUNTS' : draft.kind === 'MONEY_IN' || draft.kind === 'MONEY_OUT' ? 'MONEY' : 'ONBOARDING',
    accountId: null,
    transactionId: null,
    transactionType: null,
    amount: null,
    currency: null,
    fees: null,
    statusCode: null,
    detail: null,
    ...draft,
  };
}

export function userCreatedItems(user: UserRow): JourneyItem[] {
  return [item({ at: user.created_at, kind: 'USER_CREATED', status: null, resourceId: user.id, title: `${user.name} created (${user.type})` })];
}

/** When a request reached PENDING_REVIEW: the review job is scheduled in the same move (advanceToReview). */
function pendingReviewAt(ctx: AppContext, requestId: string): string | null {
  const job = prepared<{ created_at_ms: number }>(
    ctx.db,
    "SELECT created_at_ms FROM jobs WHERE type = ? AND json_extract(payload, '$.informationRequestId') = ? ORDER BY id LIMIT 1",
  ).get(REVIEW_JOB, requestId);
  return job ? new Date(job.created_at_ms).toISOString() : null;
}

export function informationRequestItems(ctx: AppContext, userId: string): JourneyItem[] {
  const requests = prepared<InformationRequestRow>(ctx.db, 'SELECT * FROM information_requests WHERE user_id = ? ORDER BY created_at_ms, id').all(userId);
  const items: JourneyItem[] = [];
  for (const request of requests) {
    const base = { kind: 'INFORMATION_REQUEST' as const, resourceId: request.id };
    items.push(item({ ...base, at: request.created_at, status: 'DRAFT', title: `Information request ${request.id} opened (${request.requirement_set} requirements)` }));
    if (request.submitted_at) items.push(item({ ...base, at: request.submitted_at, status: 'PROCESSING_SUBMISSION', title: `Information request ${request.id} submitted` }));
    const reviewAt = pendingReviewAt(ctx, request.id);
    if (reviewAt) items.push(item({ ...base, at: reviewAt, status: 'PENDING_REVIEW', title: `Information request ${request.id} under review`, detail: 'decision PENDING' }));
    if (request.status === 'COMPLETED' && request.decided_at) {
      items.push(item({ ...base, at: request.decided_at, status: 'COMPLETED', title: `Information request ${request.id} reviewed: ${request.decision}`, detail: `decision ${request.decision}` }));
    }
    if (request.status === 'CANCELED') items.push(item({ ...base, at: request.updated_at, status: 'CANCELED', title: `Information request ${request.id} canceled` }));
  }
  return items;
}

export function enrollmentItems(ctx: AppContext, user: UserRow): JourneyItem[] {
  const enrollment = prepared<EnrollmentRow>(ctx.db, 'SELECT * FROM enrollments WHERE user_id = ?').get(user.id);
  if (!enrollment) {
    // A fixture user onboarded before the records begin, whose enrollment rows are written on first read
    // (docs/onboarding.md#enrollment): its activation is the user's creation.
    if (user.enrollment_status !== 'ACTIVE') return [];
    return [item({ at: user.created_at, kind: 'ENROLLMENT', status: 'ACTIVE', resourceId: user.id, title: 'Enrollment ACTIVE (onboarded before the sandbox records begin)' })];
  }
  const request = prepared<InformationRequestRow>(ctx.db, 'SELECT * FROM information_requests WHERE id = ?').get(enrollment.information_request_id);
  const base = { kind: 'ENROLLMENT' as const, resourceId: enrollment.id };
  const items: JourneyItem[] = [];
  if (request?.decision === 'APPROVED' && request.decided_at) {
    items.push(item({ ...base, at: request.decided_at, status: 'ACTIVE', title: 'Enrollment ACTIVE: the user may move money' }));
  } else if (request?.decision === 'REJECTED' && request.decided_at) {
    items.push(item({ ...base, at: request.decided_at, status: 'ACTIVATION_REJECTED', title: 'Enrollment rejected (INACTIVE)', detail: enrollment.reason_detail }));
  } else if (enrollment.status === 'ACTIVE') {
    items.push(item({ ...base, at: enrollment.created_at, status: 'ACTIVE', title: 'Enrollment ACTIVE' }));
  }
  if (enrollment.reason === 'REVOKED') {
    items.push(item({ ...base, at: enrollment.updated_at, status: 'REVOKED', title: 'Enrollment revoked (INACTIVE)', detail: enrollment.reason_detail }));
  }
  return items;
}

export function accountItems(ctx: AppContext, userId: string): JourneyItem[] {
  const accounts = prepared<AccountRow>(ctx.db, 'SELECT * FROM accounts WHERE user_id = ? AND parent_account_id IS NULL ORDER BY created_at_ms, id').all(userId);
  const instructions = prepared<DepositInstructionRow>(
    ctx.db,
    `SELECT d.* FROM deposit_instructions d JOIN accounts a ON a.id = d.account_id
      WHERE a.user_id = ? AND a.parent_account_id IS NULL ORDER BY d.created_at_ms, d.id`,
  ).all(userId);
  return [
    ...accounts.map((account) =>
      item({
        at: account.created_at,
        kind: 'ACCOUNT_OPENED',
        status: account.status,
        resourceId: account.id,
        accountId: account.id,
        currency: account.currency,
        title: `${account.display_name ?? account.id} opened (${account.currency})`,
      }),
    ),
    ...instructions.map((instruction) =>
      item({
        at: instruction.created_at,
        kind: 'DEPOSIT_INSTRUCTION',
        status: instruction.status,
        resourceId: instruction.id,
        accountId: instruction.account_id,
        title: `Deposit instruction ${instruction.rail_label} issued on ${instruction.account_id}`,
        detail: instruction.name,
      }),
    ),
  ];
}

interface EventRow {
  resource_id: string;
  event_type: string;
  occurred_at: string;
  payload: string;
}

const TYPE_WORDS: Record<string, string> = { DEPOSIT: 'Deposit', WITHDRAWAL: 'Payout', TRANSFER: 'Transfer', REFUND: 'Refund', PARTIAL_REFUND: 'Partial refund' };

/** Who is on the other side, from the transaction's parties (payer of a deposit, beneficiary of a payout). */
function counterpartyOf(row: TransactionRow): string | null {
  type PartyJson = { payer?: { displayName?: unknown }; beneficiary?: { business?: { name?: unknown }; person?: { name?: unknown } } } | null;
  const parse = (text: string | null): PartyJson => {
    try {
      return text ? (JSON.parse(text) as PartyJson) : null;
    } catch {
      return null;
    }
  };
  const payer = parse(row.debit_party)?.payer?.displayName;
  const beneficiary = parse(row.credit_party)?.beneficiary;
  const name = beneficiary?.business?.name ?? beneficiary?.person?.name ?? parse(row.credit_party)?.payer?.displayName;
  if (row.direction === 'INCOMING' && typeof payer === 'string') return `from ${payer}`;
  if (row.direction === 'OUTGOING' && typeof name === 'string') return `to ${name}`;
  return null;
}

// The order of money items, newest first: the JS order of orderJourney (time, then the order read: a transaction's
// creation and id, then its events' seq) reversed. A seeded transaction without events is one item at its creation.
const EVENT_MS = "CAST(ROUND((julianday(o.occurred_at) - 2440587.5) * 86400000) AS INTEGER)";

/**
 * The newest `count` money items of the user, read in SQL: which transactions and which of their events. Before, every
 * transaction and event of the user was read and built before the answer was cut to `limit` (20,000 transactions: 7 s
 * a GET, whatever the limit: docs/dashboard.md#the-journey-of-a-user).
 */
function newestMoney(ctx: AppContext, userId: string, count: number): { transactions: TransactionRow[]; events: EventRow[]; found: number } {
  const keys = prepared<{ transaction_id: string; seq: number | null }>(
    ctx.db,
    `SELECT t.id AS transaction_id, o.seq AS seq FROM transactions t
       LEFT JOIN outbox o ON o.resource_id = t.id AND o.resource_type = 'transaction'
      WHERE t.user_id = ?
      ORDER BY COALESCE(${EVENT_MS}, t.created_at_ms) DESC, t.created_at_ms DESC, t.id DESC, o.seq DESC
      LIMIT +?`, // docs/benchmarks.md#uncached-reads: a bound LIMIT keeps its plan
  ).all(userId, count);
  const ids = JSON.stringify([...new Set(keys.map((key) => key.transaction_id))]);
  const seqs = JSON.stringify(keys.flatMap((key) => (key.seq === null ? [] : [key.seq])));
  const transactions = prepared<TransactionRow>(ctx.db, 'SELECT * FROM transactions WHERE id IN (SELECT value FROM json_each(?)) ORDER BY created_at_ms, id').all(ids);
  const events = prepared<EventRow>(
    ctx.db,
    'SELECT resource_id, event_type, occurred_at, payload FROM outbox WHERE seq IN (SELECT value FROM json_each(?)) ORDER BY seq',
  ).all(seqs);
  return { transactions, events, found: keys.length };
}

/** Every money item of the user (the whole journey: tests compare the cut answer with it). */
export function moneyItems(ctx: AppContext, userId: string): JourneyItem[] {
  const transactions = prepared<TransactionRow>(ctx.db, 'SELECT * FROM transactions WHERE user_id = ? ORDER BY created_at_ms, id').all(userId);
  const events = prepared<EventRow>(
    ctx.db,
    `SELECT o.resource_id, o.event_type, o.occurred_at, o.payload FROM outbox o JOIN transactions t ON t.id = o.resource_id
      WHERE t.user_id = ? AND o.resource_type = 'transaction' ORDER BY o.seq`,
  ).all(userId);
  return moneyItemsOf(ctx, transactions, events);
}

/** The items of these transactions (in the order read: creation, id) from these of their events (by seq). */
function moneyItemsOf(ctx: AppContext, transactions: TransactionRow[], events: EventRow[]): JourneyItem[] {
  const eventsOf = new Map<string, EventRow[]>();
  for (const event of events) {
    const list = eventsOf.get(event.resource_id);
    if (list) list.push(event);
    else eventsOf.set(event.resource_id, [event]);
  }

  const items: JourneyItem[] = [];
  for (const row of transactions) {
    const incoming = row.direction === 'INCOMING';
    const currency = incoming ? row.credit_currency : row.debit_currency;
    const amount = formatAmount(BigInt(incoming ? row.credit_amount_minor : row.debit_amount_minor), precisionOf(ctx, currency));
    const fees = JSON.parse(row.fees) as Fee[];
    const what = `${TYPE_WORDS[row.type] ?? row.type} ${amount} ${currency}`;
    const memo = [counterpartyOf(row), row.debit_memo ?? row.debit_reference].filter(Boolean).join(' · ') || null;
    const money = {
      kind: incoming ? ('MONEY_IN' as const) : ('MONEY_OUT' as const),
      resourceId: row.id,
      accountId: row.account_id,
      transactionId: row.id,
      transactionType: row.type,
      amount,
      currency,
      fees,
      detail: memo,
    };
    const steps = eventsOf.get(row.id) ?? [];
    if (steps.length === 0) {
      // seeded history records no events: its creation, with the status it was seeded in
      items.push(item({ ...money, at: row.created_at, status: row.status, statusCode: row.status_code ?? null, title: `${what} (${row.status}, from the fixtures' history)` }));
      continue;
    }
    for (const step of steps) {
      let payload: { status?: unknown; statusCode?: unknown } = {};
      try {
        payload = JSON.parse(step.payload) as typeof payload;
      } catch {
        // a payload is always JSON; a damaged one still leaves the step's time
      }
      const status = typeof payload.status === 'string' ? payload.status : 'UNKNOWN';
      const created = step.event_type === 'transaction_created';
      items.push(
        item({
          ...money,
          at: step.occurred_at,
          status,
          statusCode: typeof payload.statusCode === 'string' ? payload.statusCode : null,
          title: created ? `${what} created (${status})` : `${what} ${status}`,
        }),
      );
    }
  }
  return items;
}

/** Every item, oldest first: by time, then onboarding before accounts before money, then in the order read. */
export function orderJourney(items: JourneyItem[]): JourneyItem[] {
  return items
    .map((entry, index) => ({ entry, index, ms: Date.parse(entry.at) }))
    .sort((a, b) => a.ms - b.ms || KIND_RANK[a.entry.kind] - KIND_RANK[b.entry.kind] || a.index - b.index)
    .map(({ entry }) => entry);
}

export function getUserJourney(ctx: AppContext, userId: string, query: JourneyQuery): UserJourney {
  return ctx.db
    .transaction(() => {
      const user = prepared<UserRow>(ctx.db, 'SELECT * FROM users WHERE id = ?').get(userId);
      if (!user) throw errors.notFound(`User ${userId} not found`);
      const limit = query.limit ?? JOURNEY_DEFAULT_LIMIT;
      // only the newest `limit` money items can be among the newest `limit` items; one more says whether there are more
      const money = newestMoney(ctx, user.id, limit + 1);
      const all = orderJourney([
        ...userCreatedItems(user),
        ...informationRequestItems(ctx, user.id),
        ...enrollmentItems(ctx, user),
        ...accountItems(ctx, user.id),
        ...moneyItemsOf(ctx, money.transactions, money.events),
      ]);
      // more than `limit` money items found: certainly cut; else `all` holds every item
      const truncated = money.found > limit || all.length > limit;
      return {
        userId: user.id,
        programmeId: user.programme_id,
        name: user.name,
        type: user.type,
        enrollmentStatus: user.enrollment_status,
        enrollmentStatusReason: user.enrollment_status_reason,
        now: ctx.clock.nowIso(),
        items: all.length > limit ? all.slice(-limit) : all,
        truncated,
      };
    })
    .deferred();
}
