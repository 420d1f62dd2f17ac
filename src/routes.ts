import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from './context.js';
import { accountsRoutes } from './domains/accounts/accounts.routes.js';
import { authRoutes } from './domains/auth/auth.routes.js';
import { usersRoutes } from './domains/users/users.routes.js';
import { statementsRoutes } from './domains/statements/statements.routes.js';
import { emulatorRoutes } from './emulator/emulator.routes.js';
import { webhooksRoutes } from './emulator/webhooks.routes.js';
import { overviewRoutes } from './emulator/overview.routes.js';
import { actAsRoutes } from './emulator/act-as.routes.js';
import { dashboardRoutes } from './emulator/dashboard.routes.js';
import { enrollmentRoutes } from './domains/enrollment/enrollment.routes.js';
import { informationRequestsRoutes } from './domains/information-requests/information-requests.routes.js';
import { emulatorEnrollmentRoutes } from './emulator/enrollment.routes.js';
import { depositInstructionsRoutes } from './domains/deposit-instructions/deposit-instructions.routes.js';
import { sandboxRoutes } from './domains/sandbox/sandbox.routes.js';
import { transactionsRoutes } from './domains/transactions/transactions.routes.js';
import { emulatorTransactionsRoutes } from './emulator/transactions.routes.js';
import { emulatorAccountsRoutes } from './emulator/accounts.routes.js';
import { beneficiariesRoutes } from './domains/beneficiaries/beneficiaries.routes.js';
import { intentsRoutes } from './domains/intents/intents.routes.js';
import { payoutsRoutes } from './domains/payouts/payouts.routes.js';

// Every route module; a domain adds its one line here.
export const routeModules: Array<(ctx: AppContext) => FastifyPluginAsyncZod> = [
  authRoutes,
  usersRoutes,
  accountsRoutes,
  statementsRoutes,
  emulatorRoutes,
  webhooksRoutes,
  overviewRoutes,
  actAsRoutes,
  dashboardRoutes,
  enrollmentRoutes,
  informationRequestsRoutes,
  emulatorEnrollmentRoutes,
  depositInstructionsRoutes,
  sandboxRoutes,
  transactionsRoutes,
  emulatorTransactionsRoutes,
  emulatorAccountsRoutes,
  beneficiariesRoutes,
  intentsRoutes,
  payoutsRoutes,
];
