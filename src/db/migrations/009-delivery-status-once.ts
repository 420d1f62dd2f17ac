import type { Migration } from './migration.js';

// A delivery's status lives in webhook_deliveries only: the outbox row is the event (what happened, and its
// payload), and its old status column, a copy kept in step with the delivery, goes. SQLite has no
// DROP COLUMN IF EXISTS, so the step looks first (a database migrated again from an earlier version has
// no column left to drop).
export const migration009DeliveryStatusOnce: Migration = {
  version: 9,
  name: 'delivery-status-once',
  sql: (db) => {
    const columns = db.prepare("SELECT name FROM pragma_table_info('outbox')").all() as Array<{ name: string }>;
    return columns.some((column) => column.name === 'status') ? 'DROP INDEX IF EXISTS outbox_pending; ALTER TABLE outbox DROP COLUMN status;' : '';
  },
};
