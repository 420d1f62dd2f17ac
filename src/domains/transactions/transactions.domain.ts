import type { DomainDescriptor } from '../domain.js';
import { transactionsRoutes } from './transactions.routes.js';
import { RAIL_STEP_JOB } from './transactions.rail.js';
import { runRailStep } from './transactions.transition.js';

export const transactionsDomain: DomainDescriptor = {
  name: 'transactions',
  routes: [transactionsRoutes],
  jobs: { [RAIL_STEP_JOB]: runRailStep },
};
