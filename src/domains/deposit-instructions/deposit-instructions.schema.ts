import { z } from 'zod';

// interface 2.2 (deposit instruction) and 2.13 (creation request/response)
export const depositInstructionSchema = z
  .object({
    id: z.string(),
    createdAt: z.string(),
    updatedAt: z.string(),
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
