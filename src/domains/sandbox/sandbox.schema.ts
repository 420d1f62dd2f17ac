import { z } from 'zod';

// interface 2.16: the mock deposit request and its answer.
const optionalText = (field: string) =>
  z
    .string({ error: `${field} must be a string of 1-255 characters, or null` })
    .min(1, { message: `${field} must be 1-255 characters (omit it or send null for none)`, abort: true })
    .max(255, `${field} must be at most 255 characters (interface 8)`)
    .nullable()
    .optional();

export const simulateDepositBody = z
  .strictObject({
    depositInstructionId: z
      .string({ error: 'depositInstructionId must be the id of one of the account\'s deposit instructions' })
      .min(1, 'depositInstructionId must not be empty')
      .max(128, 'depositInstructionId is at most 128 characters'),
    amount: z
      .string({ error: 'amount must be a decimal string such as "100.00"' })
      // the server's own rule (src/lib/money.ts), stated in the document too (docs/openapi.md#parameters-and-schemas)
      .regex(/^\d+(\.\d+)?$/, 'amount must be a plain decimal string such as "100.00" (no sign, exponent or separators)')
      .describe('Decimal string in the account currency, greater than zero, with at most the currency\'s decimals'),
    reference: optionalText('reference').describe('Becomes debitReference (and debitMemo on wire rails: FEDWIRE, SEPA, FPS)'),
    counterpartyName: optionalText('counterpartyName')
      .refine((value) => value === null || value === undefined || value.trim().length > 0, 'counterpartyName must not be only spaces (omit it or send null for none)') // docs/decisions.md#blank-names
      .describe('Becomes debitParty.payer.displayName'),
  })
  .meta({ id: 'MockDepositRequest' });
export type SimulateDepositBody = z.infer<typeof simulateDepositBody>;

export const simulateDepositResponse = z
  .object({ message: z.string().nullable().optional() })
  .meta({ id: 'MockDepositResponse' });
export type SimulateDepositResponse = z.infer<typeof simulateDepositResponse>;

export const simulateDepositParams = z.object({ accountId: z.string().min(1).max(128) });
