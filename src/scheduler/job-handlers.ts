import type { JobHandler } from './scheduler.js';
import { RAIL_STEP_JOB, runRailStep } from '../domains/transactions/transactions.service.js';

// Every job type and its handler; a domain adds its own line here.
export const jobHandlers: Record<string, JobHandler> = {
  [RAIL_STEP_JOB]: runRailStep,
};
