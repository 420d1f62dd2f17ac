import { authDomain } from './auth/auth.domain.js';
import { usersDomain } from './users/users.domain.js';
import { accountsDomain } from './accounts/accounts.domain.js';
import { statementsDomain } from './statements/statements.domain.js';
import { enrollmentDomain } from './enrollment/enrollment.domain.js';
import { informationRequestsDomain } from './information-requests/information-requests.domain.js';
import { depositInstructionsDomain } from './deposit-instructions/deposit-instructions.domain.js';
import { sandboxDomain } from './sandbox/sandbox.domain.js';
import { transactionsDomain } from './transactions/transactions.domain.js';
import { beneficiariesDomain } from './beneficiaries/beneficiaries.domain.js';
import { intentsDomain } from './intents/intents.domain.js';
import { payoutsDomain } from './payouts/payouts.domain.js';
import { webhooksDomain } from './webhooks/webhooks.domain.js';
import { emulatorDomain } from '../emulator/emulator.domain.js';
import { faultsDomain } from '../faults/faults.domain.js';
import type { BackgroundService, DomainDescriptor } from './domain.js';
import type { JobFailureHandler, JobHandler } from '../scheduler/scheduler.js';

/**
 * Every domain's descriptor: the one list a new domain adds itself to. Routes register in this order (the
 * interface's /v1 areas, then the /_emulator control plane), which is also the OpenAPI document's order.
 */
export const domains: readonly DomainDescriptor[] = [
  authDomain,
  usersDomain,
  accountsDomain,
  statementsDomain,
  enrollmentDomain,
  informationRequestsDomain,
  depositInstructionsDomain,
  sandboxDomain,
  transactionsDomain,
  beneficiariesDomain,
  intentsDomain,
  payoutsDomain,
  webhooksDomain,
  emulatorDomain,
  faultsDomain,
];

/** Every route module, in registration order. */
export const routeModules = domains.flatMap((domain) => domain.routes ?? []);

/** Every job type and its handler. */
export const jobHandlers: Record<string, JobHandler> = Object.assign({}, ...domains.map((domain) => domain.jobs ?? {}));

/** What a job's failure does, by job type (docs/decisions.md#failed-jobs); a type without one is only recorded FAILED. */
export const jobFailureHandlers: Record<string, JobFailureHandler> = Object.assign({}, ...domains.map((domain) => domain.jobFailures ?? {}));

/** Long-running services started with the server (the webhook dispatcher, the clock's high-water mark). */
export const backgroundServices: BackgroundService[] = domains.flatMap((domain) => domain.services ?? []);
