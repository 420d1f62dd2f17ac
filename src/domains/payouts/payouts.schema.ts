import { z } from 'zod';
import { instant } from '../../http/formats.js';
import type { CreditRail } from '../fees-fx/fees-fx.schema.js';
import { PAYMENT_PURPOSES, type PaymentPurpose } from '../transactions/transactions.machine.js';

// Payout submission (docs/payouts.md; interface 2.15, 4.12): path, headers, the decoded `json` payload and the
// 202 answer. The body itself is one Base64 string (Content-Type: text/plain), decoded by the service.

export const PAYOUT_FORMATS = ['json', 'pacs008'] as const;
export type PayoutFormat = (typeof PAYOUT_FORMATS)[number];

export const payoutParams = z.object({
  format: z.enum(PAYOUT_FORMATS, { error: 'format must be json or pacs008' }),
});

// interface 4.12 / 8: Idempotency-Key is 8-128 characters
export const payoutHeaders = z.looseObject({
  'idempotency-key': z
    .string({ error: 'Idempotency-Key header is required: 8-128 characters, one per distinct payout' })
    .min(8, 'Idempotency-Key header must be 8-128 characters')
    .max(128, 'Idempotency-Key header must be 8-128 characters')
    .describe('8-128 characters; the same key with the same body replays the first 202, with another body 409'),
});

export const payoutBody = z
  .string()
  .optional()
  .describe('Base64 (standard alphabet, padded; line breaks ignored) of the json payload or the pacs.008 XML; at least 20 characters');

const decimalAmount = z
  .string({ error: 'amount must be a decimal string such as "100.00"' })
  .regex(/^\d+(\.\d+)?$/, 'amount must be a plain decimal string such as "100.00" (no sign, exponent or separators)');

const idField = (field: string) =>
  z.string({ error: `${field} is required (a string id)` }).min(1, `${field} must not be empty`).max(128, `${field} must be at most 128 characters`);

/** The decoded `json` payload (docs/decisions.md#payout-json-payload; interface 4.12). */
export const payoutJsonPayload = z
  .strictObject({
    entityId: idField('entityId').describe('The debit account id'),
    beneficiaryId: idField('beneficiaryId'),
    amount: decimalAmount.describe('Amount to credit, in `currency`'),
    currency: z.string({ error: 'currency is required, e.g. "USD"' }).regex(/^[A-Z][A-Z0-9_]{2,15}$/, 'currency must be an upper-case currency code such as "USD"'),
    reference: z
      .string({ error: 'reference is required: remittance text for the beneficiary, 1-140 characters' })
      .min(1, 'reference must not be empty')
      .max(140, 'reference must be at most 140 characters'),
    instrumentId: idField('instrumentId').optional().describe("Default: the beneficiary's first instrument in `currency`"),
    purpose: z.enum(PAYMENT_PURPOSES, { error: 'purpose must be one of the payment purposes of interface 2.7' }).optional(),
    messageId: idField('messageId').optional().describe('Default: generated'),
  })
  .meta({ id: 'PayoutJsonPayload', description: 'The decoded payload of POST /v1/payout-origination/json' });

export const payoutSubmissionResponse = z
  .object({
    messageId: z.string(),
    transactionId: z.string(),
    status: z.literal('RECEIVED'),
    receivedAt: instant().describe('RFC 3339'),
  })
  .meta({ id: 'PayoutSubmissionResponse', description: 'Interface 2.15' });
export type PayoutSubmissionResponse = z.infer<typeof payoutSubmissionResponse>;

/** A payout order, whichever format it came in; `refs` name each field in the caller's format for errors. */
export interface PayoutOrder {
  messageId: string | null;
  /**
   * The debit account: by id (json `entityId`); by a pacs.008 `DbtrAcct/Id/Othr/Id` (an account id, or an
   * account number or IBAN shown in one of the caller's deposit instructions); by `DbtrAcct/Id/IBAN`.
   */
  debtor: { by: 'ID' | 'OTHR' | 'IBAN'; value: string };
  /** The beneficiary by id, by its bank account (IBAN or account number), or both (id + the instrument's account). */
  creditor: { beneficiaryId?: string; iban?: string; accountNumber?: string };
  instrumentId: string | null;
  amount: string;
  currency: string;
  debitMemo: string | null;
  externalId: string | null;
  purpose: PaymentPurpose | null;
  /** Credit rails the message asks for, first preferred; the first the instrument allows is used, else its default. */
  requestedRails: CreditRail[];
  refs: { debitAccountId: string; beneficiaryId: string; account: string; instrumentId: string; amount: string; currency: string };
}
