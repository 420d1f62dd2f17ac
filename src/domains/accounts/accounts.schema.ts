import { z } from 'zod';
import { instant } from '../../http/formats.js';
import { depositInstructionSchema } from '../deposit-instructions/deposit-instructions.schema.js';
import { pageQuery } from '../../http/pagination.js';

// interface 2.1 (list item) and docs/decisions.md#accounts-list (detail: depositInstructions and balances)
export const accountSchema = z
  .object({
    id: z.string(),
    createdAt: instant(),
    updatedAt: instant(),
    status: z.string(),
    statusReason: z.string().nullable(),
    currency: z.string(),
    depositReconciliationId: z.string(),
    displayName: z.string().nullable(),
  })
  .meta({ id: 'Account' });
export type Account = z.infer<typeof accountSchema>;

export const accountDetailSchema = accountSchema
  .extend({
    depositInstructions: z.array(depositInstructionSchema),
    balances: z.object({
      current: z.string().describe('Entries of COMPLETED transactions'),
      available: z.string().describe('Every posted entry: in-flight debits are held'),
    }),
  })
  .meta({ id: 'AccountDetail' });
export type AccountDetail = z.infer<typeof accountDetailSchema>;

export const listAccountsQuery = z.object(pageQuery(100));
export const accountParams = z.object({ accountId: z.string().min(1).max(128) });

export interface AccountRow {
  id: string;
  programme_id: string;
  user_id: string;
  parent_account_id: string | null;
  kind: 'FIAT' | 'STABLECOIN' | 'SUB_BALANCE';
  currency: string;
  country: string | null;
  network: string | null;
  status: string;
  status_reason: string | null;
  display_name: string | null;
  deposit_reconciliation_id: string;
  provider_ready: number;
  created_at: string;
  created_at_ms: number;
  updated_at: string;
}

/** The columns toAccount reads: a list selects only these (a row object costs per column read, docs/benchmarks.md#uncached-reads). */
export const ACCOUNT_COLUMNS = 'id, created_at, updated_at, status, status_reason, currency, deposit_reconciliation_id, display_name';
type AccountColumns = Pick<AccountRow, 'id' | 'created_at' | 'updated_at' | 'status' | 'status_reason' | 'currency' | 'deposit_reconciliation_id' | 'display_name'>;

export function toAccount(row: AccountColumns): Account {
  return {
    id: row.id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    status: row.status,
    statusReason: row.status_reason,
    currency: row.currency,
    depositReconciliationId: row.deposit_reconciliation_id,
    displayName: row.display_name,
  };
}
