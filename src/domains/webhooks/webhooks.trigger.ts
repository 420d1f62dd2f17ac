import { z } from 'zod';
import type { AppContext } from '../../context.js';
import { errors } from '../../core/errors.js';
import { getTransactionRow, precisionLookup } from '../transactions/transactions.stored.js';
import { toWebhookTransaction, toTransaction } from '../transactions/transactions.schema.js';
import { recordEvent } from './outbox.js';
import { WEBHOOK_EVENT_TYPES } from '../../core/webhook-events.js';

// `POST /_emulator/webhooks/trigger` (docs/test-kit.md#triggering-a-webhook): re-send the current state of a
// transaction as an event (the way Stripe's trigger and Plaid's fire_webhook help people test their handlers). It goes
// through the outbox like a real event, so signing, retries and the delivery log are the same.
export const triggerEventBody = z
  .object({
    transactionId: z.string().min(1).max(128),
    eventType: z.enum(WEBHOOK_EVENT_TYPES),
  })
  .strict();

export function triggerWebhookEvent(ctx: AppContext, input: z.infer<typeof triggerEventBody>): string {
  return ctx.db.transaction(() => triggerWebhookEventNow(ctx, input)).immediate();
}

function triggerWebhookEventNow(ctx: AppContext, input: z.infer<typeof triggerEventBody>): string {
  const row = getTransactionRow(ctx, input.transactionId);
  if (!row) throw errors.notFound(`Transaction ${input.transactionId} not found`);
  return recordEvent(ctx, {
    programmeId: row.programme_id,
    userId: row.user_id,
    resourceType: 'transaction',
    resourceId: row.id,
    eventType: input.eventType,
    payload: toWebhookTransaction(toTransaction(row, precisionLookup(ctx))),
  });
}
