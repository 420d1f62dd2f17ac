import { z } from 'zod';
import { PAYMENT_PURPOSES } from './transactions.machine.js';

// The fixtures' `history`: settled movements loaded straight into the ledger (no events, no timeline) so
// lists, balances and statements have data from day one (docs/decisions.md#fixture-history). One variant per
// transaction type; the parties are described inline, so history does not depend on beneficiary fixtures.

const isoInstant = z.string().refine((value) => !Number.isNaN(Date.parse(value)) && /T.*(Z|[+-]\d{2}:\d{2})$/.test(value), {
  message: 'must be an ISO 8601 instant with Z or an offset',
});
const amount = z.string().regex(/^\d+(\.\d+)?$/, 'must be a decimal string such as "12.50"');
const rate = z.string().regex(/^\d+(\.\d+)?$/, 'must be a decimal string such as "0.9154"');
const prefixed = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[A-Za-z0-9_]+$`), `must start with ${prefix}_`);
const railType = z
  .string()
  .regex(/^([A-Z]{2}\.[A-Z]{3}\.[A-Z_]+|[A-Z]+\.USDC)$/, 'must be a rail such as US.USD.ACH, US.USD.FEDWIRE, EU.EUR.SEPA or ETHEREUM.USDC');

const common = {
  id: prefixed('txn'),
  /** The account the movement belongs to (the debit account of a withdrawal or transfer). */
  accountId: prefixed('acct'),
  createdAt: isoInstant,
  /** When it settled: completed, or failed (the hold's reversal is posted then). */
  completedAt: isoInstant,
  externalId: z.string().min(1).max(128).optional(),
  purpose: z.enum(PAYMENT_PURPOSES).optional(),
};

const payer = z.strictObject({
  displayName: z.string().min(1).max(255),
  accountNumber: z.string().optional().describe('Masked, e.g. ****4821'),
  institutionName: z.string().optional(),
  bankCode: z.string().optional(),
  walletAddress: z.string().optional(),
});

const fee = z.strictObject({
  type: z.string().min(1).default('PROCESSING'),
  label: z.string().min(1),
  amount: amount.describe('In the account (debit) currency'),
});

export const historyDepositSchema = z.strictObject({
  ...common,
  type: z.literal('DEPOSIT'),
  status: z.literal('COMPLETED').default('COMPLETED'),
  amount,
  rail: railType.describe('The deposit instruction rail the funds arrived by'),
  payer,
  reference: z.string().min(1).max(255).optional().describe('debitReference; an on-chain deposit without one gets a generated 0x hash'),
  memo: z.string().min(1).max(255).optional().describe('debitMemo (wire rails)'),
  /** Stablecoin rails only: the INTERNAL_SWEEP that moved the deposit from the sub-balance to the account. */
  sweep: z.strictObject({ id: prefixed('txn'), completedAt: isoInstant }).optional(),
});

export const historyWithdrawalSchema = z.strictObject({
  ...common,
  type: z.literal('WITHDRAWAL'),
  status: z.enum(['COMPLETED', 'FAILED']).default('COMPLETED'),
  statusCode: z.string().regex(/^[A-Z][A-Z0-9_]*$/).optional().describe('FAILED only; default RAIL_REJECTED'),
  statusReason: z.string().min(1).max(255).optional(),
  amount: amount.describe('Amount sent to the beneficiary, in the account currency'),
  fee: fee.optional(),
  rail: railType.describe('creditRail'),
  beneficiary: z.strictObject({ id: prefixed('ben'), type: z.enum(['BUSINESS', 'PERSON']), name: z.string().min(1) }),
  bankAccount: z.strictObject({ id: prefixed('bi'), displayName: z.string().nullable().default(null), mask: z.string().min(1) }).optional(),
  wallet: z.strictObject({ id: prefixed('bi'), displayName: z.string().nullable().default(null), network: z.string().min(1), address: z.string().min(1) }).optional(),
  memo: z.string().min(1).max(140).optional(),
});

export const historyRefundSchema = z.strictObject({
  ...common,
  type: z.enum(['REFUND', 'PARTIAL_REFUND']),
  status: z.literal('COMPLETED').default('COMPLETED'),
  amount,
  relatedTransactionId: prefixed('txn').describe('The transaction refunded'),
  rail: railType,
  payer,
  reference: z.string().min(1).max(255).optional(),
});

export const historyTransferSchema = z.strictObject({
  ...common,
  type: z.literal('TRANSFER'),
  status: z.literal('COMPLETED').default('COMPLETED'),
  creditAccountId: prefixed('acct').describe('Another account of the same user'),
  amount: amount.describe('Debited from accountId, in its currency'),
  creditAmount: amount.describe('Credited to creditAccountId, in its currency'),
  exchangeRate: rate,
  baseExchangeRate: rate.optional(),
  fxSpread: rate.optional().describe('The spread as a fraction of the base rate, e.g. "0.005" for 50 basis points (as intents write it)'),
});

/** A settled movement in the fixture history (loaded straight into the ledger, no timeline). */
export const historyFixtureSchema = z.discriminatedUnion('type', [
  historyDepositSchema,
  historyWithdrawalSchema,
  historyRefundSchema,
  historyTransferSchema,
]);
export type HistoryEntry = z.infer<typeof historyFixtureSchema>;
