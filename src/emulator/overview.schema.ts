import { z } from 'zod';
import { instant } from '../http/formats.js';
import { transactionSchema } from '../domains/transactions/transactions.schema.js';
import { webhookDeliverySchema } from '../domains/webhooks/webhooks.schema.js';
import { faultRuleSchema } from '../faults/fault-rules.schema.js';
import { webhookChaosSchema } from '../faults/webhook-chaos.schema.js';
import { storyLedgerEntrySchema, storyStepSchema } from './story.schema.js';

// Read models of the control plane (docs/dashboard.md#read-endpoints-behind-the-dashboard) that the dashboard draws:
// every programme's users, their top-level accounts with balances and deposit instructions, and transactions across
// programmes.

export const overviewDepositInstructionSchema = z.object({
  id: z.string(),
  name: z.string(),
  status: z.enum(['PENDING', 'ACTIVE']),
  rail: z.object({ type: z.string(), label: z.string() }),
});

export const overviewAccountSchema = z.object({
  id: z.string(),
  displayName: z.string().nullable(),
  currency: z.string(),
  kind: z.enum(['FIAT', 'STABLECOIN']),
  status: z.string(),
  providerReady: z.boolean().describe('false: new deposit instructions answer 409'),
  balances: z.object({
    current: z.string().describe('Entries of COMPLETED transactions'),
    available: z.string().describe('Every posted entry: in-flight debits are held'),
  }),
  depositInstructions: z.array(overviewDepositInstructionSchema),
});

export const overviewUserSchema = z.object({
  id: z.string(),
  externalId: z.string(),
  name: z.string(),
  type: z.enum(['PERSON', 'BUSINESS']),
  enrollmentStatus: z.enum(['ACTIVE', 'INACTIVE']),
  enrollmentStatusReason: z.string().nullable(),
  enrollmentStarted: z.boolean().describe('true once the enrollment exists: only then is the user in GET /v1/users'),
  accounts: z.array(overviewAccountSchema),
});

export const overviewResponse = z
  .object({
    now: instant().describe('Emulated time'),
    programmes: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        webhookUrl: z.string().nullable(),
        users: z.array(overviewUserSchema),
      }),
    ),
  })
  .meta({ id: 'EmulatorOverview' });
export type Overview = z.infer<typeof overviewResponse>;

export const emulatorTransactionSchema = transactionSchema
  .extend({
    userId: z.string(),
    programmeId: z.string(),
    accountId: z.string().describe('The top-level account the transaction is listed under'),
  })
  .meta({ id: 'EmulatorTransaction' });
export type EmulatorTransaction = z.infer<typeof emulatorTransactionSchema>;

export const emulatorTransactionsQuery = z
  .object({
    limit: z.coerce
      .number({ error: 'limit must be an integer 1-500' })
      .int('limit must be an integer 1-500')
      .min(1, 'limit must be an integer 1-500')
      .max(500, 'limit must be an integer 1-500')
      .default(50),
    // default fixtures (docs/openapi.md#parameter-examples)
    accountId: z.string().min(1).max(128).optional().meta({ examples: ['acct_acme_usd'] }),
    userId: z.string().min(1).max(128).optional().meta({ examples: ['usr_acme'] }),
    programmeId: z.string().min(1).max(128).optional().meta({ examples: ['prg_sandbox'] }),
  })
  .strict();
export type EmulatorTransactionsQuery = z.infer<typeof emulatorTransactionsQuery>;

export const emulatorTransactionsResponse = z.object({ data: z.array(emulatorTransactionSchema) });

export const emulatorTransactionParams = z.object({ transactionId: z.string().min(1).max(128) });

export const emulatorTransactionDetail = z
  .object({
    transaction: transactionSchema,
    userId: z.string(),
    programmeId: z.string(),
    accountId: z.string(),
  })
  .meta({ id: 'EmulatorTransactionDetail' });
export type EmulatorTransactionDetail = z.infer<typeof emulatorTransactionDetail>;

export const dashboardStateQuery = emulatorTransactionsQuery.extend({
  selected: z.string().min(1).max(128).optional().meta({ examples: ['txn_hist_acme_usd_001'] }).describe('A transaction id: its detail and webhook deliveries come along'),
});
export type DashboardStateQuery = z.infer<typeof dashboardStateQuery>;

/** The dashboard's one-request feed: what it redraws every second. */
export const dashboardStateResponse = z.object({
  overview: overviewResponse,
  clock: z.object({ now: instant(), mode: z.enum(['realtime', 'frozen']) }),
  transactions: z.array(emulatorTransactionSchema),
  selected: z
    .object({
      id: z.string(),
      detail: emulatorTransactionDetail.nullable().describe('null when no such transaction exists (e.g. after a reset)'),
      deliveries: z.array(webhookDeliverySchema).describe('Its webhook deliveries in event order, each with its attempts'),
      story: z
        .object({ final: z.boolean(), steps: z.array(storyStepSchema), ledgerEntries: z.array(storyLedgerEntrySchema) })
        .nullable()
        .describe('Its status steps and ledger entries, as GET /_emulator/transactions/{id}/story has them; null when no such transaction exists'),
    })
    .nullable(),
  faults: z
    .object({
      rules: z.array(faultRuleSchema).describe('The fault rules of this sandbox, as GET /_emulator/faults lists them'),
      chaos: webhookChaosSchema.describe('The webhook chaos settings, as GET /_emulator/webhooks/chaos shows them'),
    })
    .describe('Faults on demand (docs/faults.md), shown so a dashboard never hides that they are on'),
});
export type DashboardState = z.infer<typeof dashboardStateResponse>;
