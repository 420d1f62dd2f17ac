import type { DomainDescriptor } from '../domain.js';
import { ID_PREFIXES } from '../../lib/ids.js';
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
  // its part of the OpenAPI document (docs/openapi.md#what-each-area-adds)
  openapi: {
    parameters: { transactionId: { description: 'The id of a transaction (GET /v1/transactions)', example: 'txn_hist_acme_usd_001' } },
    idPrefixes: { transactionId: `${ID_PREFIXES.transaction}_` },
  },
};
