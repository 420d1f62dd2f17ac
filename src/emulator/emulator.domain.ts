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
import { snapshotsSlot, startingSnapshotSlot } from './snapshots.service.js';
import { snapshotTrackingSlot } from './snapshots.tracking.js';
import { resetImageSlot } from './reset.service.js';
import { journalSlot } from './journal.js';
import { uiEventsSlot } from './ui-events.js';
import { demoRunSlot } from './demo/demo.service.js';

export const emulatorDomain: DomainDescriptor = {
  name: 'emulator',
  routes: [emulatorRoutes, webhooksRoutes, overviewRoutes, actAsRoutes, dashboardRoutes, emulatorEnrollmentRoutes, emulatorTransactionsRoutes, emulatorAccountsRoutes, snapshotsRoutes, emulatorJobsRoutes, demoRoutes],
  services: [clockHighWaterService],
  // what the control plane holds in memory per sandbox (docs/architecture.md#runtime)
  state: [snapshotsSlot, startingSnapshotSlot, snapshotTrackingSlot, resetImageSlot, journalSlot, uiEventsSlot, demoRunSlot],
};
