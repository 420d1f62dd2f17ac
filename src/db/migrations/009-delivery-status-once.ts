import type { Migration } from './index.js';

// A delivery's status lives in webhook_deliveries only: the outbox row is the event (what happened, and its
// payload), and its old status column, a copy kept in step with the delivery, goes.
export const migration009DeliveryStatusOnce: Migration = {
  version: 9,
  name: 'delivery-status-once',
  sql: `
DROP INDEX outbox_pending;
ALTER TABLE outbox DROP COLUMN status;
`,
};
