import { isCalendarDay, utcMs } from '../../lib/calendar.js';
import { errors } from '../../core/errors.js';
import { z } from 'zod';
import { instant } from '../../http/formats.js';
import { pageQuery } from '../../http/pagination.js';
import { formatAmount } from '../../lib/money.js';
import type { AccountRow } from '../accounts/accounts.schema.js';
import {
  PAYMENT_PURPOSES,
  TRANSACTION_CATEGORIES,
  TRANSACTION_STATUSES,
  TRANSACTION_TYPES,
} from './transactions.machine.js';

// One schema for the transaction resource (interface 2.4-2.6 plus the four fields named in
// docs/decisions.md#transaction-unnamed-fields), one row mapper, and one webhook form derived from the same object so
// REST and webhooks never drift.

// the example lets a mock server (Prism) answer a valid amount where an operation has no example of its own
const decimalString = z.string().regex(/^-?\d+(\.\d+)?$/).meta({ examples: ['100.00'] });

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

/**
 * An account of the emulator as a transaction's instrument: the one builder for every flow (intents,
 * payouts, P2P, the stablecoin sweep, simulated and injected deposits, returns, fixture history).
 * `currency` is the account's own unless the funds move in another one on it (a stablecoin deposit or
 * sweep names the token currency of the network sub-balance).
 */
export function accountInstrument(account: Pick<AccountRow, 'id' | 'display_name' | 'currency'>, currency = account.currency): Instrument {
  return { instrumentType: 'ACCOUNT', account: { id: account.id, displayName: account.display_name, currency } };
}

export const transactionSchema = z
  .object({
    id: z.string(),
    type: z.enum(TRANSACTION_TYPES),
    status: z.enum(TRANSACTION_STATUSES),
    referenceNumber: z.string(),
    createdAt: instant(),
    updatedAt: instant(),
    completedAt: instant().optional().describe('Set when the transaction reaches COMPLETED; absent while in flight'),
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
    debitRail: z.string().describe('Never null (docs/decisions.md#debit-rail): the rail of the debit leg; <COUNTRY>.<CURRENCY>.INTERNAL for a debit on the platform\'s own books'),
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

/**
 * Row -> REST object (interface 2.4). Nullable fields are present as null (docs/decisions.md#nulls-rest-vs-webhook).
 */
export function toTransaction(row: TransactionRow, precision: PrecisionLookup): Transaction {
  const sameCurrency = row.debit_currency === row.credit_currency;
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
    debitRail: row.debit_rail ?? `INTERNAL.${row.debit_currency}`, // a row stored before debitRail was always set (docs/decisions.md#debit-rail)
    debitInstrument: parseJson<Instrument>(row.debit_instrument),
    creditAmount: formatAmount(BigInt(row.credit_amount_minor), precision(row.credit_currency)),
    creditCurrency: row.credit_currency,
    creditParty: parseJson<Party>(row.credit_party),
    creditRail: row.credit_rail,
    creditInstrument: parseJson<Instrument>(row.credit_instrument),
    fees: JSON.parse(row.fees) as Fee[],
    // interface 2.4 lists exchangeRate as a decimal string (the rate applied): a movement within one
    // currency applied rate 1 before and after a spread of 0, live or from the fixture history alike
    // (docs/decisions.md#same-currency-rates)
    exchangeRate: row.exchange_rate ?? (sameCurrency ? '1' : null),
    baseExchangeRate: row.base_exchange_rate ?? (sameCurrency ? '1' : null),
    fxSpread: row.fx_spread ?? (sameCurrency ? '0' : null),
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
  // Keys in the schema's order, as the route serializer would write them: the stored REST JSON (migration
  // 002) and a response serialized from the schema are then byte-identical.
  const ordered: Record<string, unknown> = {};
  for (const key of TRANSACTION_KEYS) {
    if (key in transaction) ordered[key] = transaction[key as keyof Transaction];
  }
  return ordered as Transaction;
}

const TRANSACTION_KEYS = Object.keys(transactionSchema.shape);

/** REST object -> webhook form: fields with no value are omitted instead of sent as null (interface 6.1). */
export function toWebhookTransaction(transaction: Transaction): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(transaction)) {
    if (value !== null && value !== undefined) out[key] = value;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// GET /v1/transactions query (docs/decisions.md#transactions-query, interface 4.5). Strict: a value outside the
// accepted set, or a parameter the list does not know, is a 400 naming the parameter; nothing falls back silently.

export const TRANSACTION_SORT_FIELDS = ['CREATED_AT', 'UPDATED_AT', 'STATUS', 'TYPE'] as const;
export type TransactionSortField = (typeof TRANSACTION_SORT_FIELDS)[number];
export const SORT_DIRECTIONS = ['ASC', 'DESC'] as const;

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * An ISO 8601 instant with `Z` or an offset, to epoch ms. Digits below the millisecond round towards the
 * inside of the range (`ceil` for a lower bound, `floor` for an upper one), since stored instants have
 * millisecond precision. Returns null when the text is not a valid instant.
 */
export function parseInstantMs(text: string, bound: 'lower' | 'upper'): number | null {
  const match = INSTANT.exec(text);
  if (!match) return null;
  const [, y, mo, d, h, mi, s = '00', fraction = '', zone] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (!isCalendarDay(year, month, day) || hour > 23 || minute > 59 || second > 59) return null; // 2026-02-30 and the like
  const base = utcMs(year, month, day, hour, minute, second); // 0099 is the year 99 (docs/decisions.md#clock-range)
  let offsetMinutes = 0;
  if (zone !== 'Z' && zone !== 'z') {
    const sign = zone!.startsWith('-') ? -1 : 1;
    const [oh, om] = zone!.slice(1).split(':').map(Number);
    if (oh! > 23 || om! > 59) return null;
    offsetMinutes = sign * (oh! * 60 + om!);
  }
  const millis = Number(fraction.slice(0, 3).padEnd(3, '0'));
  const belowMilli = /[1-9]/.test(fraction.slice(3)) ? 1 : 0;
  return base + millis + (bound === 'lower' ? belowMilli : 0) - offsetMinutes * 60_000;
}

/** An instant as sent, in nanoseconds (up to 9 decimals), for ordering two bounds exactly. */
function exactInstantNs(text: string): bigint | null {
  const floorMs = parseInstantMs(text, 'upper');
  if (floorMs === null) return null;
  const fraction = INSTANT.exec(text)![7] ?? '';
  return BigInt(floorMs) * 1_000_000n + BigInt(fraction.slice(3, 9).padEnd(6, '0'));
}

/**
 * The order of `minUpdatedAt` and `maxUpdatedAt` as sent, for the one case the schema cannot tell: bounds
 * rounded inwards to the millisecond that cross by exactly one (docs/decisions.md#transactions-query).
 * Sent in order (both within one millisecond), they select nothing; sent out of order, a 400 as any other.
 */
export function checkUpdatedBoundsOrder(query: { minUpdatedAt?: number; maxUpdatedAt?: number }, rawUrl: string): void {
  if (query.minUpdatedAt === undefined || query.maxUpdatedAt === undefined || query.minUpdatedAt !== query.maxUpdatedAt + 1) return;
  const params = new URLSearchParams(rawUrl.includes('?') ? rawUrl.slice(rawUrl.indexOf('?') + 1) : '');
  const min = exactInstantNs(params.get('minUpdatedAt') ?? '');
  const max = exactInstantNs(params.get('maxUpdatedAt') ?? '');
  if (min !== null && max !== null && min > max) {
    throw errors.field('InvalidValue', 'maxUpdatedAt', 'maxUpdatedAt must not be earlier than minUpdatedAt');
  }
}

function instantParameter(name: string, bound: 'lower' | 'upper', description: string, example: string) {
  return z
    .string()
    // the document states the format, so clients send an instant (docs/openapi.md#formats); the example lies in the
    // default fixtures' history (docs/openapi.md#parameter-examples)
    .meta({ format: 'date-time', description: `${description}: an ISO 8601 instant with Z or a URL-encoded offset, inclusive`, examples: [example] })
    .transform((value, context) => {
      const ms = parseInstantMs(value, bound);
      if (ms === null) {
        const hint = / \d{2}:\d{2}$/.test(value) ? ' (a "+" in a query string decodes to a space: URL-encode the offset as %2B01:00)' : '';
        context.addIssue({
          code: 'invalid_format',
          format: 'datetime',
          message: `${name} must be an ISO 8601 instant with Z or an offset, e.g. 2026-03-01T12:00:00.000Z or 2026-03-01T13:00:00%2B01:00${hint}`,
        } as never);
        return z.NEVER;
      }
      return ms;
    })
    .optional();
}

export const listTransactionsQuery = z
  .strictObject({
    accountId: z
      .string()
      .min(1, 'accountId must be an account id from GET /v1/accounts')
      .max(128, 'accountId must be an account id from GET /v1/accounts')
      .optional()
      .meta({ examples: ['acct_acme_usd'] }) // a default fixture (docs/openapi.md#parameter-examples)
      .describe('Only transactions of this account, its sub-balances included (interface 4.5 account filter)'),
    ...pageQuery(200), // interface 4.5: 1-200, default 25
    sortBy: z
      .enum(TRANSACTION_SORT_FIELDS, { error: `sortBy must be one of ${TRANSACTION_SORT_FIELDS.join(', ')}` })
      .default('CREATED_AT')
      .describe('The field the page is sorted by'),
    sortDirection: z.enum(SORT_DIRECTIONS, { error: 'sortDirection must be ASC or DESC' }).default('DESC').describe('Sort order'),
    minUpdatedAt: instantParameter('minUpdatedAt', 'lower', 'Only transactions updated at or after this instant', '2026-01-01T00:00:00Z'),
    maxUpdatedAt: instantParameter('maxUpdatedAt', 'upper', 'Only transactions updated at or before this instant', '2026-03-01T00:00:00Z'),
    minCreatedAt: instantParameter('minCreatedAt', 'lower', 'Only transactions created at or after this instant', '2026-01-01T00:00:00Z'),
    type: z.enum(TRANSACTION_TYPES, { error: `type must be one of ${TRANSACTION_TYPES.join(', ')}` }).optional().meta({ examples: ['DEPOSIT'] }).describe('Only transactions of this type'),
    status: z.enum(TRANSACTION_STATUSES, { error: `status must be one of ${TRANSACTION_STATUSES.join(', ')}` }).optional().meta({ examples: ['COMPLETED'] }).describe('Only transactions in this status'),
  })
  .superRefine((query, context) => {
    // Bounds are rounded inwards to the millisecond (parseInstantMs), so two bounds within one millisecond
    // can cross by one after rounding even when sent in order; that case is decided on the values as sent
    // (checkUpdatedBoundsOrder, docs/decisions.md#transactions-query).
    if (query.minUpdatedAt !== undefined && query.maxUpdatedAt !== undefined && query.minUpdatedAt > query.maxUpdatedAt + 1) {
      context.addIssue({ code: 'custom', path: ['maxUpdatedAt'], message: 'maxUpdatedAt must not be earlier than minUpdatedAt' });
    }
  });
export type ListTransactionsQuery = z.output<typeof listTransactionsQuery>;

export const transactionParams = z.object({ transactionId: z.string().min(1).max(128) });

// POST /_emulator/transactions/{id}/status (docs/decisions.md#forced-status)
export const forceStatusBody = z
  .strictObject({
    status: z.enum(TRANSACTION_STATUSES, { error: `status must be one of ${TRANSACTION_STATUSES.join(', ')}` }),
    statusCode: z
      .string()
      .regex(/^[A-Z][A-Z0-9_]{0,63}$/, 'statusCode must be an upper-case code such as RAIL_REJECTED (letters, digits, _; at most 64)')
      .optional()
      .describe('Machine-readable code to record; FAILED defaults to RAIL_REJECTED'),
    statusReason: z.string().min(1).max(255).optional().describe('Free text to record as statusReason'),
  })
  .meta({ id: 'ForceTransactionStatus' });
