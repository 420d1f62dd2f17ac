import { z } from 'zod';
import { instant } from '../http/formats.js';
import { webhookDeliverySchema } from '../domains/webhooks/webhooks.schema.js';

// A transaction's story (docs/dashboard.md#the-story-of-a-transaction): status steps, ledger entries and webhook
// deliveries on the emulated clock.

export const storyStepSchema = z
  .object({
    at: instant().describe('Emulated time of the step'),
    kind: z.enum(['CREATED', 'STATUS']).describe('CREATED: the transaction was created with this status; STATUS: it moved to this status'),
    status: z.string(),
    statusCode: z.string().nullable(),
    eventId: z.string().nullable().describe('The webhook event the step recorded (null for seeded history, which records none)'),
  })
  .meta({ id: 'StoryStep' });
export type StoryStep = z.infer<typeof storyStepSchema>;

export const storyLedgerEntrySchema = z
  .object({
    id: z.number().int(),
    accountId: z.string(),
    kind: z.enum(['PRINCIPAL', 'FEE', 'REVERSAL']),
    amount: z.string().describe('Signed decimal: credits positive, debits negative'),
    currency: z.string(),
    fee: z.boolean(),
    description: z.string(),
    postedAt: instant(),
  })
  .meta({ id: 'StoryLedgerEntry' });
export type StoryLedgerEntry = z.infer<typeof storyLedgerEntrySchema>;

export const transactionStorySchema = z
  .object({
    transactionId: z.string(),
    status: z.string(),
    final: z.boolean().describe('true once the status can no longer change (COMPLETED or FAILED)'),
    steps: z.array(storyStepSchema).describe('Oldest first'),
    ledgerEntries: z.array(storyLedgerEntrySchema).describe('Oldest first; reversals included'),
    deliveries: z.array(webhookDeliverySchema).describe('One per event, oldest first, each with its attempts'),
  })
  .meta({ id: 'TransactionStory' });
export type TransactionStory = z.infer<typeof transactionStorySchema>;
