import { authDomain } from './domains/auth/auth.domain.js';
import { usersDomain } from './domains/users/users.domain.js';
import { accountsDomain } from './domains/accounts/accounts.domain.js';
import { statementsDomain } from './domains/statements/statements.domain.js';
import { enrollmentDomain } from './domains/enrollment/enrollment.domain.js';
import { informationRequestsDomain } from './domains/information-requests/information-requests.domain.js';
import { depositInstructionsDomain } from './domains/deposit-instructions/deposit-instructions.domain.js';
import { sandboxDomain } from './domains/sandbox/sandbox.domain.js';
import { transactionsDomain } from './domains/transactions/transactions.domain.js';
import { beneficiariesDomain } from './domains/beneficiaries/beneficiaries.domain.js';
import { intentsDomain } from './domains/intents/intents.domain.js';
import { payoutsDomain } from './domains/payouts/payouts.domain.js';
import { webhooksDomain } from './domains/webhooks/webhooks.domain.js';
import { emulatorDomain } from './emulator/emulator.domain.js';
import { faultsDomain } from './faults/faults.domain.js';
import type { BackgroundService, DomainDescriptor } from './domains/domain.js';
import type { JobFailureHandler, JobHandler } from './scheduler/scheduler.js';
import type { StateSlot } from './runtime/sandbox-runtime.js';
import type { AppContext } from './context.js';

/**
 * The app's own list of modules: every descriptor, the one list a new domain adds itself to. It is the app's, not the
 * domains' (docs/architecture.md#runtime): it names the control plane and faults, which the domains never import.
 * Routes register in this order (the interface's /v1 areas, then the /_emulator control plane), which is also the
 * OpenAPI document's order.
 */
export const modules: readonly DomainDescriptor[] = [
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

/** Every module's part of the OpenAPI document, in the modules' order (docs/openapi.md#what-each-area-adds). */
export const documentParts = modules.flatMap((module) => (module.openapi ? [module.openapi] : []));

/** Every route module, in registration order. */
export const routeModules = modules.flatMap((module) => module.routes ?? []);

/**
 * One table by job type from every module's part of it. A job type two modules declare is refused at start, as a
 * runtime slot declared twice is (docs/architecture.md#a-new-job): one of the two handlers would silently never run.
 */
export function byJobType<T>(descriptors: readonly DomainDescriptor[], part: (module: DomainDescriptor) => Record<string, T> | undefined, what: string): Record<string, T> {
  const table: Record<string, T> = {};
  const owner = new Map<string, string>();
  for (const module of descriptors) {
    for (const [type, value] of Object.entries(part(module) ?? {})) {
      const first = owner.get(type);
      if (first !== undefined) throw new Error(`${what} for job type ${type} is declared twice, by the ${first} and ${module.name} modules`);
      owner.set(type, module.name);
      table[type] = value;
    }
  }
  return table;
}

/** Every job type and its handler. */
export const jobHandlers: Record<string, JobHandler> = byJobType(modules, (module) => module.jobs, 'a handler');

/** What a job's failure does, by job type (docs/decisions.md#failed-jobs); a type without one is only recorded FAILED. */
export const jobFailureHandlers: Record<string, JobFailureHandler> = byJobType(modules, (module) => module.jobFailures, 'a failure handler');

/** What runs beside each sandbox while it is open (the webhook dispatcher, the clock's high-water mark, the ends of its streams). */
export const backgroundServices: BackgroundService[] = modules.flatMap((module) => module.services ?? []);

/** Every runtime slot, in the order of the modules that own them (docs/architecture.md#runtime). */
export const stateSlots: ReadonlyArray<StateSlot<any>> = modules.flatMap((module) => module.state ?? []);

const afterJobs = modules.flatMap((module) => (module.afterJobsRan ? [module.afterJobsRan] : []));

/** The scheduler's "after jobs ran" callback: every module's, in order. */
export function afterJobsRan(ctx: AppContext): void {
  for (const callback of afterJobs) callback(ctx);
}

/** Each module's wiring, run once per new context (src/create-context.ts). */
export function wireModules(ctx: AppContext): void {
  for (const module of modules) module.wire?.(ctx);
}
