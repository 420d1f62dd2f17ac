import { z } from 'zod';
import { instant } from '../../http/formats.js';
import { pageQuery } from '../../http/pagination.js';
import { formatAmount } from '../../lib/money.js';
import { CREDIT_RAILS, creditRailSchema, type CreditRail } from '../fees-fx/fees-fx.schema.js';
import { PAYMENT_PURPOSES, TRANSACTION_TYPES, type PaymentPurpose } from '../transactions/transactions.machine.js';
import { feeSchema, instrumentSchema, type Fee, type Instrument } from '../transactions/transactions.schema.js';
import { INTENT_STATUSES, type IntentStatus } from './intents.machine.js';

// Transaction intents (docs/money-out.md#transaction-intents, interface 2.3, 2.14, 3.2, 4.4): request bodies, the
// resource and the row -> API mapping.

const decimalAmount = (field: string) =>
  z
    .string({ error: `${field} must be a decimal string such as "100.00"` })
    .regex(/^\d+(\.\d+)?$/, `${field} must be a plain decimal string such as "100.00" (no sign, exponent or separators)`);

const resourceId = (field: string) =>
  z.string({ error: `${field} must be a string id` }).min(1, `${field} must not be empty`).max(128, `${field} must be at most 128 characters`);

export const purposeSchema = z.enum(PAYMENT_PURPOSES, { error: 'purpose must be one of the payment purposes of interface 2.7, e.g. PAYMENT_FOR_SERVICES' });

export const intentCreditInput = z.discriminatedUnion('instrumentType', [
  z.strictObject({ instrumentType: z.literal('ACCOUNT'), accountId: resourceId('credit.accountId') }),
  z.strictObject({ instrumentType: z.literal('BANK_ACCOUNT'), beneficiaryId: resourceId('credit.beneficiaryId'), instrumentId: resourceId('credit.instrumentId') }),
  z.strictObject({ instrumentType: z.literal('EXTERNAL_WALLET'), beneficiaryId: resourceId('credit.beneficiaryId'), instrumentId: resourceId('credit.instrumentId') }),
]);
export type IntentCreditInput = z.infer<typeof intentCreditInput>;

// docs/money-out.md#direct-debits: the user's own external bank account, pulled over ACH
export const intentDebitInput = z.strictObject({
  instrumentType: z.literal('BANK_ACCOUNT', { error: 'debit.instrumentType must be BANK_ACCOUNT: a direct debit pulls from a bank account' }),
  beneficiaryId: resourceId('debit.beneficiaryId'),
  instrumentId: resourceId('debit.instrumentId'),
});

/** JSON Schema: `field` is present and not null (the intent body's fields are nullish). */
function exactlyThisOne(field: string) {
  return { required: [field], properties: { [field]: { not: { type: 'null' } } } };
}

// Unknown fields are a 400 naming them, as on every JSON body (docs/decisions.md#unknown-body-fields).
export const createIntentBody = z
  .strictObject({
    idempotencyKey: z
      .string({ error: 'idempotencyKey is required: 1-128 characters, reused to commit' })
      .min(1, 'idempotencyKey must be 1-128 characters')
      .max(128, 'idempotencyKey must be 1-128 characters'),
    debitAccountId: resourceId('debitAccountId')
      .nullish()
      .describe('The account debited; omitted only with debit (a direct debit from the user\'s own bank account)'),
    debit: intentDebitInput
      .nullish()
      .describe('Instead of debitAccountId: { instrumentType: "BANK_ACCOUNT", beneficiaryId, instrumentId } of a SELF beneficiary (US bank account); credit must be an own account. Creates a DEPOSIT with category DIRECT_DEBIT'),
    credit: intentCreditInput
      .nullish()
      .describe(
        '{ instrumentType: "ACCOUNT", accountId } (own account: TRANSFER; another user\'s account of the programme: TRANSFER with category P2P) or { instrumentType: "BANK_ACCOUNT" | "EXTERNAL_WALLET", beneficiaryId, instrumentId } (WITHDRAWAL). Send exactly one of credit and refundOf',
      ),
    refundOf: resourceId('refundOf')
      .nullish()
      .describe('Instead of credit: id of a COMPLETED deposit of debitAccountId to refund to its payer over its rail (REFUND or PARTIAL_REFUND)'),
    debitAmount: decimalAmount('debitAmount')
      .nullish()
      .describe('Total debit, fees included. Send exactly one of debitAmount and creditAmount; with refundOf optional (default: what is still refundable)'),
    creditAmount: decimalAmount('creditAmount').nullish().describe('Amount to credit, in the credit currency'),
    creditCurrency: z.string().nullish().describe('Optional; must equal the credit instrument\'s currency'),
    creditRail: creditRailSchema.nullish().describe('Pin the rail; default from the instrument (US bank: ACH, IBAN in EUR: SEPA, other banks: SWIFT, wallet: its network)'),
    purpose: purposeSchema.nullish(),
    debitMemo: z.string().max(140, 'debitMemo must be at most 140 characters').nullish(),
  })
  .meta({
    id: 'CreateTransactionIntentRequest',
    description: 'A priced preview of a movement of funds',
    // The server's rule between fields (intent-flows.ts), stated where a client's validator sees it: exactly one of
    // credit and refundOf holds a value (docs/openapi.md#rules-between-fields).
    oneOf: [exactlyThisOne('credit'), exactlyThisOne('refundOf')],
  });
export type CreateIntentInput = z.infer<typeof createIntentBody>;

export const commitIntentBody = z
  .strictObject({
    idempotencyKey: z
      .string({ error: 'idempotencyKey is required: the key used to create the intent' })
      .min(1, 'idempotencyKey must be 1-128 characters')
      .max(128, 'idempotencyKey must be 1-128 characters'),
  })
  .meta({ id: 'CommitTransactionIntentRequest', description: 'Interface 2.14' });

export const transactionIntentSchema = z
  .object({
    id: z.string(),
    type: z.enum(TRANSACTION_TYPES),
    createdAt: instant(),
    updatedAt: instant(),
    status: z.enum(INTENT_STATUSES),
    debitAmount: z.string().describe('Total debit in the debit currency: the credit amount converted, plus fees'),
    creditAmount: z.string(),
    debitCurrency: z.string(),
    creditCurrency: z.string(),
    debitInstrument: instrumentSchema,
    creditInstrument: instrumentSchema.describe(
      'Where the money goes; never null. A refund: the instrument the deposit came from, or one made from its payer (docs/money-out.md#refunds)',
    ),
    fees: z.array(feeSchema),
    exchangeRate: z.string().describe('Credit currency units per debit currency unit: mid x (1 - spread); "1" without conversion'),
    statusReason: z.string(),
    relatedTransactionId: z.string().optional().describe('Present once committed: the transaction created'),
    debitMemo: z.string().optional(),
    purpose: z.enum(PAYMENT_PURPOSES).nullable(),
    creditRail: z.enum(CREDIT_RAILS).nullable(),
    expiresAt: instant().describe('15 minutes of emulated time after creation'),
  })
  .meta({ id: 'TransactionIntent', description: 'Interface 2.3 plus expiresAt' });
export type TransactionIntent = z.infer<typeof transactionIntentSchema>;

export const listIntentsQuery = z.object(pageQuery(100));
export const intentParams = z.object({ transactionIntentId: z.string().min(1).max(128) });

/** Fees as stored on the intent: minor units as strings (JSON has no bigint). */
export interface StoredFee {
  type: string;
  label: string;
  amountMinor: string;
  currency: string;
}

export interface IntentRow {
  id: string;
  programme_id: string;
  user_id: string;
  idempotency_key: string;
  request_hash: string;
  type: TransactionIntent['type'];
  category: 'P2P' | 'DIRECT_DEBIT' | null;
  status: IntentStatus;
  status_reason: string;
  debit_account_id: string | null;
  credit_account_id: string | null;
  refund_of_transaction_id: string | null;
  debit_party: string | null;
  debit_rail_type: string | null;
  amount_written: number;
  /** The amount the caller wrote (magic cents read it); null when none, or an intent stored before migration 010. */
  written_amount: 'DEBIT' | 'CREDIT' | null;
  beneficiary_id: string | null;
  beneficiary_instrument_id: string | null;
  debit_amount_minor: number;
  principal_minor: number;
  debit_currency: string;
  credit_amount_minor: number;
  credit_currency: string;
  debit_instrument: string;
  /** null only on a refund intent stored before it was always set: read through creditInstrumentOf (intents.service.ts). */
  credit_instrument: string | null;
  credit_party: string | null;
  fees: string;
  exchange_rate: string;
  base_exchange_rate: string;
  fx_spread: string;
  credit_rail: CreditRail | null;
  credit_rail_type: string | null;
  debit_memo: string | null;
  purpose: PaymentPurpose | null;
  related_transaction_id: string | null;
  expires_at: string;
  expires_at_ms: number;
  created_at: string;
  created_at_ms: number;
  updated_at: string;
  updated_at_ms: number;
}

export function toIntent(row: IntentRow, precision: (currency: string) => number, creditInstrument: Instrument): TransactionIntent {
  const intent: TransactionIntent = {
    id: row.id,
    type: row.type,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    status: row.status,
    debitAmount: formatAmount(BigInt(row.debit_amount_minor), precision(row.debit_currency)),
    creditAmount: formatAmount(BigInt(row.credit_amount_minor), precision(row.credit_currency)),
    debitCurrency: row.debit_currency,
    creditCurrency: row.credit_currency,
    debitInstrument: JSON.parse(row.debit_instrument) as Instrument,
    creditInstrument,
    fees: (JSON.parse(row.fees) as StoredFee[]).map(
      (fee): Fee => ({ type: fee.type, label: fee.label, amount: formatAmount(BigInt(fee.amountMinor), precision(fee.currency)), currency: fee.currency }),
    ),
    exchangeRate: row.exchange_rate,
    statusReason: row.status_reason,
    purpose: row.purpose,
    creditRail: row.credit_rail,
    expiresAt: row.expires_at,
  };
  // interface 4.4: relatedTransactionId is included "when execution was created"; a memo only when supplied
  if (row.related_transaction_id !== null) intent.relatedTransactionId = row.related_transaction_id;
  if (row.debit_memo !== null) intent.debitMemo = row.debit_memo;
  return intent;
}
