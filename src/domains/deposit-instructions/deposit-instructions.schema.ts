import { z } from 'zod';
import { instant } from '../../http/formats.js';

// interface 2.2 (deposit instruction) and 2.13 (creation request/response)
export const depositInstructionSchema = z
  .object({
    id: z.string(),
    createdAt: instant(),
    updatedAt: instant(),
    status: z.enum(['PENDING', 'ACTIVE']),
    rail: z.object({ type: z.string(), label: z.string() }),
    supportedCurrencies: z.array(z.string()),
    fields: z.array(z.object({ key: z.string(), label: z.string(), value: z.string(), copyable: z.boolean() })),
    disclosures: z.array(z.object({ kind: z.string(), text: z.string() })),
  })
  .meta({ id: 'DepositInstruction' });
export type DepositInstruction = z.infer<typeof depositInstructionSchema>;

export interface DepositInstructionRow {
  id: string;
  account_id: string;
  name: string;
  idempotency_key: string | null;
  status: 'PENDING' | 'ACTIVE';
  rail_type: string;
  rail_label: string;
  supported_currencies: string;
  fields: string;
  disclosures: string;
  network: string | null;
  wallet_address: string | null;
  created_at: string;
  created_at_ms: number;
  updated_at: string;
}

export function toDepositInstruction(row: DepositInstructionRow): DepositInstruction {
  return {
    id: row.id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    status: row.status,
    rail: { type: row.rail_type, label: row.rail_label },
    supportedCurrencies: JSON.parse(row.supported_currencies) as string[],
    fields: JSON.parse(row.fields) as DepositInstruction['fields'],
    disclosures: JSON.parse(row.disclosures) as DepositInstruction['disclosures'],
  };
}

// interface 2.13 / 4.1: the creation request and its 202 answer. Strict: the request has exactly these two
// fields, and a field the emulator would ignore (say a `network`) is reported rather than dropped.
export const createDepositInstructionBody = z
  .strictObject({
    name: z
      .string({ error: 'name must be a string of 1-64 characters' })
      .min(1, { message: 'name must be 1-64 characters', abort: true })
      .max(64, 'name must be 1-64 characters (interface 8)')
      .refine((value) => value.trim().length > 0, 'name must not be only spaces'), // docs/decisions.md#blank-names
    idempotencyKey: z
      .string({ error: 'idempotencyKey must be a string of 1-128 characters' })
      .min(1, 'idempotencyKey must be 1-128 characters')
      .max(128, 'idempotencyKey must be 1-128 characters'),
  })
  .meta({ id: 'DepositInstructionRequest' });
export type CreateDepositInstructionBody = z.infer<typeof createDepositInstructionBody>;

export const depositInstructionAcceptedSchema = z
  .object({
    accountId: z.string(),
    name: z.string().describe('The name of the first request with this idempotencyKey'),
    status: z.literal('PENDING').describe('Always PENDING (interface 2.13): the instruction appears in the account detail once provisioned'),
    idempotencyKey: z.string(),
  })
  .meta({ id: 'DepositInstructionResponse' });
export type DepositInstructionAccepted = z.infer<typeof depositInstructionAcceptedSchema>;

export const depositInstructionParams = z.object({ accountId: z.string().min(1).max(128) });

/** A creation request (migration 002): PENDING until the provisioning job materialises the instruction. */
export interface DepositInstructionRequestRow {
  id: string;
  account_id: string;
  user_id: string;
  name: string;
  idempotency_key: string;
  status: 'PENDING' | 'PROVISIONED';
  rail_type: string;
  network: string | null;
  details: string;
  created_at: string;
  created_at_ms: number;
  provisioned_at: string | null;
}
