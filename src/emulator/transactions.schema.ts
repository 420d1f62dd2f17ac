import { z } from 'zod';
import { PAYMENT_PURPOSES, TRANSACTION_CATEGORIES, TRANSACTION_STATUSES, TRANSACTION_TYPES } from '../domains/transactions/transactions.machine.js';
import { instrumentSchema, partySchema } from '../domains/transactions/transactions.schema.js';

// Bodies of the control-plane routes that write transactions (docs/control-plane.md#transactions):
// injection of any transaction into an account, and the return of a completed outgoing one.

const amountText = (field: string) =>
  z
    .string({ error: `${field} must be a decimal string such as "25.00"` })
    .min(1, `${field} must be a decimal string such as "25.00"`)
    .max(40, `${field} must be a decimal string such as "25.00"`);
const currencyCode = (field: string) =>
  z.string({ error: `${field} must be a currency code such as USD` }).regex(/^[A-Z][A-Z0-9_]{2,15}$/, `${field} must be a currency code such as USD or USDC_ETH`);
const rail = (field: string) =>
  z
    .string({ error: `${field} must be a rail such as US.USD.ACH or ETHEREUM.USDC` })
    .regex(/^[A-Z0-9_]{2,32}(\.[A-Z0-9_]{2,32}){1,2}$/, `${field} must be a rail of the form <COUNTRY>.<CURRENCY>.<RAIL> (US.USD.ACH) or <NETWORK>.<TOKEN> (ETHEREUM.USDC)`);
const text = (field: string, max: number) => z.string({ error: `${field} must be a string` }).trim().min(1, `${field} must not be empty`).max(max, `${field} must be at most ${max} characters`);
const code = (field: string) =>
  z.string({ error: `${field} must be an upper-case code` }).regex(/^[A-Z][A-Z0-9_]{0,63}$/, `${field} must be an upper-case code such as RAIL_REJECTED (letters, digits, _; at most 64)`);

export const injectTransactionBody = z
  .strictObject({
    type: z.enum(TRANSACTION_TYPES, { error: `type must be one of ${TRANSACTION_TYPES.join(', ')}` }),
    direction: z
      .enum(['INCOMING', 'OUTGOING'], { error: 'direction must be INCOMING (credits the account) or OUTGOING (debits it)' })
      .describe('INCOMING credits the account when COMPLETED; OUTGOING holds the debit at creation (released if FAILED)'),
    category: z.enum(TRANSACTION_CATEGORIES, { error: `category must be one of ${TRANSACTION_CATEGORIES.join(', ')}` }).nullable().optional(),
    debitAmount: amountText('debitAmount').optional().describe('OUTGOING: required, in the account currency. INCOMING: the payer side, default creditAmount'),
    debitCurrency: currencyCode('debitCurrency').optional().describe('OUTGOING: the account currency (default). INCOMING: default creditCurrency'),
    creditAmount: amountText('creditAmount').optional().describe('INCOMING: required, in the account currency. OUTGOING: the payee side, default debitAmount'),
    creditCurrency: currencyCode('creditCurrency').optional().describe('INCOMING: the account currency (default). OUTGOING: default debitCurrency'),
    exchangeRate: z.string().regex(/^\d+(\.\d+)?$/, 'exchangeRate must be a decimal string such as "0.92"').max(40).optional(),
    debitParty: partySchema.nullable().optional(),
    creditParty: partySchema.nullable().optional(),
    debitRail: rail('debitRail').optional().describe('Default: the rail of depositInstructionId, else <COUNTRY>.<CURRENCY>.INTERNAL'),
    creditRail: rail('creditRail').nullable().optional(),
    debitInstrument: instrumentSchema.nullable().optional().describe('Default: the account (OUTGOING), null (INCOMING)'),
    creditInstrument: instrumentSchema.nullable().optional().describe('Default: the account, or the deposit instruction as a VIRTUAL_ACCOUNT (INCOMING), null (OUTGOING)'),
    depositInstructionId: z.string().min(1).max(128).optional().describe('INCOMING only: the deposit instruction the funds arrived through'),
    purpose: z.enum(PAYMENT_PURPOSES, { error: 'purpose must be a payment purpose of interface 2.7, e.g. PAYMENT_FOR_SERVICES' }).nullable().optional(),
    debitMemo: text('debitMemo', 140).optional(),
    debitReference: text('debitReference', 255).optional(),
    debitEntryDescriptor: text('debitEntryDescriptor', 255).optional(),
    externalId: text('externalId', 128).optional(),
    relatedTransactionId: z.string().min(1).max(128).optional().describe('A transaction of the same programme'),
    status: z
      .enum(TRANSACTION_STATUSES, { error: `status must be one of ${TRANSACTION_STATUSES.join(', ')}` })
      .optional()
      .describe('Omitted: starts PENDING and follows the rail timeline on the emulated clock. Given: walked there now, one legal step at a time, and held there'),
    statusCode: code('statusCode').optional().describe('Recorded with the target status (FAILED defaults to RAIL_REJECTED)'),
    statusReason: text('statusReason', 255).optional(),
  })
  .meta({ id: 'InjectTransaction' });
export type InjectTransactionBody = z.infer<typeof injectTransactionBody>;

export const injectParams = z.object({ accountId: z.string().min(1).max(128) });

// ACH return codes (R01-R99) and ISO 20022 reason codes (AC04, AM04, MS03 ...).
export const RETURN_REASON_FORMAT = /^(R\d{2}|[A-Z]{2}\d{2})$/;
export const returnTransactionBody = z
  .strictObject({
    reasonCode: z
      .string({ error: 'reasonCode must be a return reason code such as R01 (ACH) or AC04 (ISO 20022)' })
      .regex(RETURN_REASON_FORMAT, 'reasonCode must be a return reason code such as R01 (ACH) or AC04 (ISO 20022)'),
    amount: amountText('amount').optional().describe('In the debit currency of the original; default: all that is still returnable (a REFUND when that is the whole amount)'),
    statusReason: text('statusReason', 255).optional(),
  })
  .meta({ id: 'ReturnTransaction' });
export type ReturnTransactionBody = z.infer<typeof returnTransactionBody>;
