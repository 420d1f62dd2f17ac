import { z } from 'zod';
import { instant, calendarDate } from '../../http/formats.js';
import { depositInstructionSchema } from '../deposit-instructions/deposit-instructions.schema.js';

// interface 2.8 (statement and statement link), 4.3 (query) and docs/statements.md (validation, signed file link).

// the example lets a mock server (Prism) answer a valid amount where an operation has no example of its own
const decimalString = z.string().regex(/^-?\d+(\.\d+)?$/).meta({ examples: ['100.00'] });

export const STATEMENT_FORMATS = ['json', 'csv', 'pdf'] as const;
export type StatementFormat = (typeof STATEMENT_FORMATS)[number];

export const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;
// the examples are a month of the default fixtures' history, so an imported document asks for a real statement
// (docs/openapi.md#parameter-examples)
const date = (name: string, example: string) =>
  z
    .string({ error: `${name} must be a date YYYY-MM-DD` })
    .regex(DATE_PATTERN, `${name} must be a date YYYY-MM-DD`)
    .meta({ format: 'date', examples: [example] }) // docs/openapi.md#formats
    .describe(`${name === 'startDate' ? 'First' : 'Last'} day of the period, inclusive (YYYY-MM-DD, UTC)`);

// Only the shape is checked here; the calendar and range rules of docs/decisions.md#statement-query need the emulated
// clock and run in the service (statements.service.ts `validateStatementQuery`) so every rule names its parameter.
export const statementQuery = z.object({
  startDate: date('startDate', '2026-02-01'),
  endDate: date('endDate', '2026-02-28'),
  format: z
    .string({ error: 'format must be json, csv or pdf' })
    .optional()
    // the document lists the three values; the server also takes them in any case (docs/statements.md#query-rules)
    .meta({ enum: [...STATEMENT_FORMATS] })
    .describe('json (default), csv or pdf; case-insensitive (interface 4.3)'),
});
export type StatementQuery = z.infer<typeof statementQuery>;

export const statementParams = z.object({ accountId: z.string().min(1).max(128) });

export const statementEntrySchema = z
  .object({
    occurredAt: instant().describe('When the ledger entry was posted'),
    description: z.string(),
    reference: z.string().describe("The transaction's referenceNumber"),
    direction: z.enum(['CREDIT', 'DEBIT']),
    amount: decimalString.describe('Positive; direction gives the sign'),
    balanceBefore: decimalString,
    balanceAfter: decimalString,
    isFee: z.boolean(),
    statusAsOfPeriodEnd: z
      .enum(['SETTLED', 'IN_FLIGHT'])
      .describe('SETTLED when the transaction had reached COMPLETED or FAILED by the end of the period (or by generatedAt if earlier)'),
  })
  .meta({ id: 'StatementEntry' });
export type StatementEntry = z.infer<typeof statementEntrySchema>;

export const statementDaySchema = z
  .object({
    date: calendarDate(),
    openingBalance: decimalString,
    closingBalance: decimalString,
    entries: z.array(statementEntrySchema),
  })
  .meta({ id: 'StatementDay' });
export type StatementDay = z.infer<typeof statementDaySchema>;

export const statementSummaryLineSchema = z
  .object({
    label: z.string(),
    count: z.number().int(),
    total: decimalString.describe('Net signed amount of the line: credits positive, debits negative'),
  })
  .meta({ id: 'StatementSummaryLine' });
export type StatementSummaryLine = z.infer<typeof statementSummaryLineSchema>;

export const statementSchema = z
  .object({
    accountId: z.string(),
    accountDisplayName: z.string().nullable(),
    holderName: z.string(),
    currency: z.string(),
    from: calendarDate(),
    to: calendarDate(),
    generatedAt: instant(),
    depositInstructions: z.array(depositInstructionSchema),
    openingBalance: decimalString,
    closingBalance: decimalString,
    totalCredits: decimalString,
    totalDebits: decimalString,
    summary: z.array(statementSummaryLineSchema),
    days: z.array(statementDaySchema),
  })
  .meta({ id: 'Statement', description: 'Account statement of interface 2.8' });
export type Statement = z.infer<typeof statementSchema>;

export const statementLinkSchema = z
  .object({
    url: z.string().describe('Absolute, signed download link; no credentials needed'),
    expiresAt: instant(),
  })
  .meta({ id: 'StatementLink', description: 'Statement link of interface 2.8 (csv and pdf)' });
export type StatementLink = z.infer<typeof statementLinkSchema>;

// No length or shape limits on purpose: whatever was done to a link (a longer id, a repeated or missing
// parameter) makes it a tampered link, answered 403 by the signature check, never 400.
export const statementFileParams = z.object({ fileId: z.string() });

const linkPart = z.union([z.string(), z.array(z.string())]).optional();
export const statementFileQuery = z.object({
  // shapes only: a link's values are made by the server when it answers a statement request
  expires: linkPart.meta({ examples: ['1772367300000'] }).describe('Expiry instant, epoch milliseconds on the emulated clock'),
  signature: linkPart.meta({ examples: ['0'.repeat(64)] }).describe('Lower-case hex HMAC-SHA256 of "<fileId>:<expires>" keyed with the link secret'),
});

export interface StatementFileRow {
  id: string;
  programme_id: string;
  user_id: string;
  account_id: string;
  format: 'csv' | 'pdf';
  file_name: string;
  content_type: string;
  content: Buffer;
  size_bytes: number;
  created_at: string;
  created_at_ms: number;
  expires_at_ms: number;
}

/** A ledger entry of the statement account joined with what its transaction says about settlement. */
export interface StatementEntryRow {
  id: bigint;
  kind: 'PRINCIPAL' | 'FEE' | 'REVERSAL';
  amount_minor: bigint;
  is_fee: bigint;
  description: string;
  posted_at_ms: bigint;
  type: string;
  direction: 'INCOMING' | 'OUTGOING';
  status: string;
  reference_number: string;
  completed_at: string | null;
  updated_at_ms: bigint;
  failed_at_ms: bigint | null;
  /** A transfer's other account (the credit account seen from the debit one, and back); null otherwise. */
  other_account_id: string | null;
  other_account_name: string | null;
  /** 1 when the statement account is the transfer's debit account. */
  is_debit_account: bigint;
}
