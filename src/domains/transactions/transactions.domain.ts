import type { DomainDescriptor } from '../domain.js';
import { transactionsRoutes } from './transactions.routes.js';
import { RAIL_STEP_JOB } from './transactions.rail.js';
import { failTransactionOfJob, runRailStep } from './transactions.transition.js';
import { listReaderSlot } from './transactions-list.service.js';

export const transactionsDomain: DomainDescriptor = {
  name: 'transactions',
  routes: [transactionsRoutes],
  jobs: { [RAIL_STEP_JOB]: runRailStep },
  // a rail step that throws moves its transaction to FAILED (PROCESSING_ERROR): docs/decisions.md#failed-jobs
  jobFailures: { [RAIL_STEP_JOB]: failTransactionOfJob },
  state: [listReaderSlot],
};
