import { z } from 'zod';
import { instant } from '../http/formats.js';
import { feeSchema } from '../domains/transactions/transactions.schema.js';

// A user's journey (docs/dashboard.md#the-journey-of-a-user): onboarding, accounts and money in and out, oldest first,
// each with its emulated time.

/** The most items one answer carries by default, and at most (the newest are kept). */
export const JOURNEY_DEFAULT_LIMIT = 500;
export const JOURNEY_MAX_LIMIT = 2000;

export const journeyParams = z.object({ userId: z.string().min(1).max(128) });
export const journeyQuery = z.strictObject({
  limit: z.coerce
    .number({ error: `limit must be an integer 1-${JOURNEY_MAX_LIMIT}` })
    .int(`limit must be an integer 1-${JOURNEY_MAX_LIMIT}`)
    .min(1, `limit must be an integer 1-${JOURNEY_MAX_LIMIT}`)
    .max(JOURNEY_MAX_LIMIT, `limit must be an integer 1-${JOURNEY_MAX_LIMIT}`)
    .optional()
    .meta({ examples: [50] })
    .describe(`How many items at most (default ${JOURNEY_DEFAULT_LIMIT}); the newest are kept`),
});
export type JourneyQuery = z.infer<typeof journeyQuery>;

export const JOURNEY_KINDS = ['USER_CREATED', 'INFORMATION_REQUEST', 'ENROLLMENT', 'ACCOUNT_OPENED', 'DEPOSIT_INSTRUCTION', 'MONEY_IN', 'MONEY_OUT'] as const;
export type JourneyKind = (typeof JOURNEY_KINDS)[number];

export const journeyItemSchema = z
  .object({
    at: instant().describe('Emulated time of the item'),
    phase: z.enum(['ONBOARDING', 'ACCOUNTS', 'MONEY']),
    kind: z
      .enum(JOURNEY_KINDS)
      .describe(
        'USER_CREATED; INFORMATION_REQUEST (one item per state the request reached: DRAFT, PROCESSING_SUBMISSION, PENDING_REVIEW, COMPLETED, CANCELED); ' +
          'ENROLLMENT (ACTIVE, ACTIVATION_REJECTED, REVOKED); ACCOUNT_OPENED; DEPOSIT_INSTRUCTION; MONEY_IN / MONEY_OUT (one item per status a transaction reached)',
      ),
    status: z.string().nullable().describe('The state reached (the request, enrollment, account, instruction or transaction status)'),
    title: z.string().describe('One readable line'),
    resourceId: z.string().describe('ir_..., enr_..., acct_..., di_..., txn_... or the user id'),
    accountId: z.string().nullable(),
    transactionId: z.string().nullable().describe("Set on money items: the transaction whose story (GET /_emulator/transactions/{id}/story) tells more"),
    transactionType: z.string().nullable(),
    amount: z.string().nullable().describe('Money items: what reached the account (incoming) or left it, fees included (outgoing)'),
    currency: z.string().nullable(),
    fees: z.array(feeSchema).nullable(),
    statusCode: z.string().nullable(),
    detail: z.string().nullable().describe('A decision, a reason, a counterparty or a memo'),
  })
  .meta({ id: 'JourneyItem' });
export type JourneyItem = z.infer<typeof journeyItemSchema>;

export const userJourneySchema = z
  .object({
    userId: z.string(),
    programmeId: z.string(),
    name: z.string(),
    type: z.enum(['PERSON', 'BUSINESS']),
    enrollmentStatus: z.string(),
    enrollmentStatusReason: z.string().nullable(),
    now: instant().describe('The emulated now when the journey was read'),
    items: z.array(journeyItemSchema).describe('Oldest first; items at the same instant in the order they happened'),
    truncated: z.boolean().describe('true when the user had more items than `limit`: only the newest are listed'),
  })
  .meta({ id: 'UserJourney' });
export type UserJourney = z.infer<typeof userJourneySchema>;
