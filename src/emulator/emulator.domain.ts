import type { DomainDescriptor } from '../domains/domain.js';
import { emulatorRoutes } from './emulator.routes.js';
import { webhooksRoutes } from './webhooks.routes.js';
import { overviewRoutes } from './overview.routes.js';
import { actAsRoutes } from './act-as.routes.js';
import { dashboardRoutes } from './dashboard.routes.js';
import { emulatorEnrollmentRoutes } from './enrollment.routes.js';
import { emulatorTransactionsRoutes } from './transactions.routes.js';
import { emulatorAccountsRoutes } from './accounts.routes.js';
import { snapshotsRoutes } from './snapshots.routes.js';
import { emulatorJobsRoutes } from './jobs.routes.js';
import { clockHighWaterService } from './clock.high-water.js';
import { demoRoutes } from './demo/demo.routes.js';

export const emulatorDomain: DomainDescriptor = {
  name: 'emulator',
  routes: [emulatorRoutes, webhooksRoutes, overviewRoutes, actAsRoutes, dashboardRoutes, emulatorEnrollmentRoutes, emulatorTransactionsRoutes, emulatorAccountsRoutes, snapshotsRoutes, emulatorJobsRoutes, demoRoutes],
  services: [clockHighWaterService],
};
