import { prepared } from '../db/connection.js';
import type { AppContext } from '../context.js';
import { precisionOf } from '../context.js';
import { errors } from '../core/errors.js';
import { formatAmount } from '../lib/money.js';
import { getTransactionRow } from '../domains/transactions/transactions.stored.js';
import { transactionTransitions, type TransactionStatus } from '../domains/transactions/transactions.machine.js';
import { listDeliveries } from '../domains/webhooks/webhooks.views.js';
import type { StoryLedgerEntry, StoryStep, TransactionStory } from './story.schema.js';

// A transaction's story (docs/dashboard.md#the-story-of-a-transaction): its status changes on the emulated clock, the
// ledger entries it posted and its webhook deliveries. The status steps are read from the events the transaction
// recorded (every creation and status change records one), so the story needs no table of its own;
// a fixture transaction seeded without events gets its creation and its last status from the row.

interface EventRow {
  event_id: string;
  event_type: string;
  occurred_at: string;
  payload: string;
}

interface LedgerRow {
  id: number;
  account_id: string;
  kind: string;
  amount_minor: number;
  currency: string;
  is_fee: number;
  description: string;
  posted_at: string;
}

// The most deliveries one transaction can have in the story (one per event; a transaction has a handful).
const MAX_DELIVERIES = 200;

export function storySteps(ctx: AppContext, transactionId: string): StoryStep[] {
  const events = prepared<EventRow>(
    ctx.db,
    "SELECT event_id, event_type, occurred_at, payload FROM outbox WHERE resource_id = ? AND resource_type = 'transaction' ORDER BY seq",
  ).all(transactionId);
  const steps: StoryStep[] = [];
  for (const event of events) {
    let payload: { status?: unknown; statusCode?: unknown } = {};
    try {
      payload = JSON.parse(event.payload) as typeof payload;
    } catch {
      // a payload is always JSON; a damaged one still leaves the step's time
    }
    steps.push({
      at: event.occurred_at,
      status: typeof payload.status === 'string' ? payload.status : 'UNKNOWN',
      statusCode: typeof payload.statusCode === 'string' ? payload.statusCode : null,
      kind: event.event_type === 'transaction_created' ? 'CREATED' : 'STATUS',
      eventId: event.event_id,
    });
  }
  return steps;
}

export function storyLedgerEntries(ctx: AppContext, transactionId: string): StoryLedgerEntry[] {
  const rows = prepared<LedgerRow>(
    ctx.db,
    'SELECT id, account_id, kind, amount_minor, currency, is_fee, description, posted_at FROM ledger_entries WHERE transaction_id = ? ORDER BY posted_at_ms, id',
  ).all(transactionId);
  return rows.map((row) => ({
    id: row.id,
    accountId: row.account_id,
    kind: row.kind as StoryLedgerEntry['kind'],
    amount: formatAmount(BigInt(row.amount_minor), precisionOf(ctx, row.currency)),
    currency: row.currency,
    fee: row.is_fee === 1,
    description: row.description,
    postedAt: row.posted_at,
  }));
}

/** The status steps and ledger entries of a transaction (deliveries are read by the caller or the feed). */
export function storyParts(ctx: AppContext, transactionId: string): Pick<TransactionStory, 'steps' | 'ledgerEntries' | 'final'> | null {
  const row = getTransactionRow(ctx, transactionId);
  if (!row) return null;
  let steps = storySteps(ctx, transactionId);
  const created = new Date(row.created_at_ms).toISOString();
  if (steps.length === 0) {
    // seeded history: no events were recorded, the row tells the creation and the last status
    steps = [{ at: created, status: row.status, statusCode: row.status_code ?? null, kind: 'CREATED', eventId: null }];
  }
  const final = transactionTransitions[row.status as TransactionStatus]?.length === 0;
  return { steps, ledgerEntries: storyLedgerEntries(ctx, transactionId), final };
}

export function getTransactionStory(ctx: AppContext, transactionId: string): TransactionStory {
  return ctx.db
    .transaction(() => {
      const row = getTransactionRow(ctx, transactionId);
      const parts = storyParts(ctx, transactionId);
      if (!row || !parts) throw errors.notFound(`Transaction ${transactionId} not found`);
      return {
        transactionId,
        status: row.status,
        ...parts,
        deliveries: listDeliveries(ctx, { transactionId, sortDirection: 'ASC', pageIndex: 0, pageSize: MAX_DELIVERIES }).data,
      };
    })
    .deferred();
}
