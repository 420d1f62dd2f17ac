import type { Migration } from './migration.js';

// The magic cents of docs/decisions.md#magic-amounts are read only on the amount the caller wrote. An intent
// is priced from one side (debitAmount or creditAmount) and stores both amounts, so the side the caller
// wrote is kept: 'DEBIT', 'CREDIT', or NULL when the caller wrote none (a refund of what is still
// refundable). Intents stored before this migration keep NULL and are read by `amount_written`.
export const migration010WrittenAmount: Migration = {
  version: 10,
  name: 'written-amount',
  sql: `
ALTER TABLE transaction_intents ADD COLUMN written_amount TEXT CHECK (written_amount IN ('DEBIT', 'CREDIT'));
`,
};
