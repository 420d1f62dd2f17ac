import { z } from 'zod';
import { formatAmount } from '../../lib/money.js';
import {
  PAYMENT_PURPOSES,
  TRANSACTION_CATEGORIES,
  TRANSACTION_STATUSES,
  TRANSACTION_TYPES,
} from './transactions.machine.js';

// One schema for the transaction resource (interface 2.4-2.6 plus contract 4's four named fields), one
// row mapper, and one webhook form derived from the same object so REST and webhooks never drift.

const decimalString = z.string().regex(/^-?\d+(\.\d+)?$/);

export const feeSchema = z
  .object({ type: z.string(), label: z.string(), amount: decimalString, currency: z.string() })
  .meta({ id: 'Fee' });
export type Fee = z.infer<typeof feeSchema>;

export const partySchema = z
  .union([
    z.object({
      partyType: z.literal('PAYER'),
      payer: z.object({
        displayName: z.string(),
        accountNumber: z.string().optional(),
        institutionName: z.string().optional(),
        bankCode: z.string().optional(),
        walletAddress: z.string().optional(),
      }),
    }),
    z.object({
      partyType: z.literal('BENEFICIARY'),
      beneficiary: z.object({
        beneficiaryType: z.enum(['BUSINESS', 'PERSON']),
        business: z.object({ id: z.string(), name: z.string() }).optional(),
        person: z.object({ id: z.string(), name: z.string() }).optional(),
      }),
    }),
  ])
  .meta({ id: 'Party' });
export type Party = z.infer<typeof partySchema>;

// interface 2.5: four instrument kinds; the virtual account and external wallet shapes are the
// emulator's (README "Instruments").
export const instrumentSchema = z
  .union([
    z.object({
      instrumentType: z.literal('ACCOUNT'),
      account: z.object({ id: z.string(), displayName: z.string().nullable(), currency: z.string() }),
    }),
    z.object({
      instrumentType: z.literal('BANK_ACCOUNT'),
      bankAccount: z.object({ id: z.string(), displayName: z.string().nullable(), currency: z.string(), mask: z.string() }),
    }),
    z.object({
      instrumentType: z.literal('VIRTUAL_ACCOUNT'),
      virtualAccount: z.object({ id: z.string(), displayName: z.string().nullable(), currency: z.string(), mask: z.string() }),
    }),
    z.object({
      instrumentType: z.literal('EXTERNAL_WALLET'),
      externalWallet: z.object({
        id: z.string(),
        displayName: z.string().nullable(),
        currency: z.string(),
        network: z.string(),
        address: z.string(),
      }),
    }),
  ])
  .meta({ id: 'Instrument' });
export type Instrument = z.infer<typeof instrumentSchema>;

export const transactionSchema = z
  .object({
    id: z.string(),
    type: z.enum(TRANSACTION_TYPES),
    status: z.enum(TRANSACTION_STATUSES),
    referenceNumber: z.string(),
    createdAt: z.string(),
    updatedAt: z.string(),
    completedAt: z.string().optional().describe('Set when the transaction reaches COMPLETED; absent while in flight'),
    statusReason: z.string().nullable(),
    statusCode: z.string().nullable().describe('Machine-readable status code, e.g. INSUFFICIENT_FUNDS, RAIL_REJECTED'),
    category: z.enum(TRANSACTION_CATEGORIES).nullable(),
    externalId: z.string().nullable(),
    depositReconciliationId: z.string().nullable(),
    relatedTransactionId: z.string().nullable(),
    debitAmount: decimalString,
    netDebitAmount: decimalString.optional().describe('Absent when no net figure is stored (absent is not zero)'),
    debitCurrency: z.string(),
    debitParty: partySchema.nullable(),
    debitRail: z.string().nullable(),
    debitMemo: z.string().optional(),
    debitReference: z.string().optional(),
    debitEntryDescriptor: z.string().optional(),
    debitInstrument: instrumentSchema.nullable(),
    creditAmount: decimalString,
    creditCurrency: z.string(),
    creditParty: partySchema.nullable(),
    creditRail: z.string().nullable(),
    creditInstrument: instrumentSchema.nullable(),
    fees: z.array(feeSchema),
    exchangeRate: z.string().nullable(),
    baseExchangeRate: z.string().nullable(),
    fxSpread: z.string().nullable(),
    tags: z.array(z.unknown()),
    purpose: z.enum(PAYMENT_PURPOSES).nullable(),
  })
  .meta({ id: 'Transaction' });
export type Transaction = z.infer<typeof transactionSchema>;

export interface TransactionRow {
  id: string;
  programme_id: string;
  user_id: string;
  account_id: string;
  debit_account_id: string | null;
  credit_account_id: string | null;
  direction: 'INCOMING' | 'OUTGOING';
  type: Transaction['type'];
  status: Transaction['status'];
  status_reason: string | null;
  status_code: string | null;
  category: Transaction['category'];
  reference_number: string;
  external_id: string | null;
  deposit_reconciliation_id: string | null;
  related_transaction_id: string | null;
  debit_amount_minor: number;
  net_debit_amount_minor: number | null;
  debit_currency: string;
  debit_party: string | null;
  debit_rail: string | null;
  debit_memo: string | null;
  debit_reference: string | null;
  debit_entry_descriptor: string | null;
  debit_instrument: string | null;
  credit_amount_minor: number;
  credit_currency: string;
  credit_party: string | null;
  credit_rail: string | null;
  credit_instrument: string | null;
  fees: string;
  exchange_rate: string | null;
  base_exchange_rate: string | null;
  fx_spread: string | null;
  tags: string;
  purpose: Transaction['purpose'];
  rail_behaviour: 'NORMAL' | 'REJECT' | 'HOLD' | 'NONE';
  intent_id: string | null;
  created_at: string;
  created_at_ms: number;
  updated_at: string;
  updated_at_ms: number;
  completed_at: string | null;
}

type PrecisionLookup = (currency: string) => number;

function parseJson<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

/** Row -> REST object (interface 2.4). Nullable fields are present as null (contract 0). */
export function toTransaction(row: TransactionRow, precision: PrecisionLookup): Transaction {
  const transaction: Transaction = {
    id: row.id,
    type: row.type,
    status: row.status,
    referenceNumber: row.reference_number,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    statusReason: row.status_reason,
    statusCode: row.status_code,
    category: row.category,
    externalId: row.external_id,
    depositReconciliationId: row.deposit_reconciliation_id,
    relatedTransactionId: row.related_transaction_id,
    debitAmount: formatAmount(BigInt(row.debit_amount_minor), precision(row.debit_currency)),
    debitCurrency: row.debit_currency,
    debitParty: parseJson<Party>(row.debit_party),
    debitRail: row.debit_rail,
    debitInstrument: parseJson<Instrument>(row.debit_instrument),
    creditAmount: formatAmount(BigInt(row.credit_amount_minor), precision(row.credit_currency)),
    creditCurrency: row.credit_currency,
    creditParty: parseJson<Party>(row.credit_party),
    creditRail: row.credit_rail,
    creditInstrument: parseJson<Instrument>(row.credit_instrument),
    fees: JSON.parse(row.fees) as Fee[],
    exchangeRate: row.exchange_rate,
    baseExchangeRate: row.base_exchange_rate,
    fxSpread: row.fx_spread,
    tags: JSON.parse(row.tags) as unknown[],
    purpose: row.purpose,
  };
  // interface 2.4: these are absent (not null) when they have no value
  if (row.completed_at !== null) transaction.completedAt = row.completed_at;
  if (row.net_debit_amount_minor !== null) {
    transaction.netDebitAmount = formatAmount(BigInt(row.net_debit_amount_minor), precision(row.debit_currency));
  }
  if (row.debit_memo !== null) transaction.debitMemo = row.debit_memo;
  if (row.debit_reference !== null) transaction.debitReference = row.debit_reference;
  if (row.debit_entry_descriptor !== null) transaction.debitEntryDescriptor = row.debit_entry_descriptor;
  return transaction;
}

/** REST object -> webhook form: fields with no value are omitted instead of sent as null (interface 6.1). */
export function toWebhookTransaction(transaction: Transaction): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(transaction)) {
    if (value !== null && value !== undefined) out[key] = value;
  }
  return out;
}
