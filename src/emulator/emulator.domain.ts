import type { DomainDescriptor } from '../domains/domain.js';
import { healthRoutes } from './health.routes.js';
import { resetRoutes } from './reset.routes.js';
import { clockRoutes } from './clock.routes.js';
import { webhooksRoutes } from './webhooks.routes.js';
import { overviewRoutes } from './overview.routes.js';
import { storyRoutes } from './story.routes.js';
import { balanceHistoryRoutes } from './balance-history.routes.js';
import { journeyRoutes } from './journey.routes.js';
import { actAsRoutes } from './act-as.routes.js';
import { dashboardRoutes } from './dashboard.routes.js';
import { emulatorEnrollmentRoutes } from './enrollment.routes.js';
import { emulatorTransactionsRoutes } from './transactions.routes.js';
import { emulatorAccountsRoutes } from './accounts.routes.js';
import { snapshotsRoutes } from './snapshots.routes.js';
import { emulatorJobsRoutes } from './jobs.routes.js';
import { clockHighWaterService } from './clock.high-water.js';
import { demoRoutes } from './demo.routes.js';
import { snapshotsBudgetService, snapshotsSlot } from './snapshots.service.js';
import { startingSnapshotSlot } from '../snapshots/snapshot.js';
import { snapshotTrackingSlot } from '../snapshots/snapshots.tracking.js';
import { resetImageSlot } from './reset.service.js';
import { journalSlot } from './journal.service.js';
import { uiEventsService, uiEventsSlot } from './dashboard.events.js';
import { scenarioPlaySlot } from './scenario-play.service.js';
import { scenarioPlayRoutes } from './scenario-play.routes.js';
import { listenRoutes } from './listen.routes.js';
import { settleRoutes } from './settle.routes.js';
import { listenService, listenSlot, registerListenRelay } from './listen.service.js';
import { clockMoveSlot, jobsTimerSlot } from '../scheduler/scheduler.js';
import { emulatorDocument } from './emulator.openapi.js';

// The control plane (docs/control-plane.md): one `<area>.routes.ts` per area, listed in the order their routes
// appear in the OpenAPI document (docs/architecture.md#a-new-control-plane-route).
export const emulatorDomain: DomainDescriptor = {
  name: 'emulator',
  routes: [
    healthRoutes,
    resetRoutes,
    clockRoutes,
    settleRoutes,
    webhooksRoutes,
    listenRoutes,
    overviewRoutes,
    storyRoutes,
    balanceHistoryRoutes,
    journeyRoutes,
    actAsRoutes,
    dashboardRoutes,
    emulatorEnrollmentRoutes,
    emulatorTransactionsRoutes,
    emulatorAccountsRoutes,
    snapshotsRoutes,
    emulatorJobsRoutes,
    scenarioPlayRoutes,
    demoRoutes,
  ],
  services: [clockHighWaterService, uiEventsService, listenService, snapshotsBudgetService],
  // what the control plane holds in memory per sandbox (docs/architecture.md#runtime)
  state: [snapshotsSlot, startingSnapshotSlot, snapshotTrackingSlot, resetImageSlot, journalSlot, uiEventsSlot, scenarioPlaySlot, listenSlot, jobsTimerSlot, clockMoveSlot],
  // the listen relay reaches the webhook sender as its delivery transport, not by an import (docs/webhooks.md#listen)
  wire: registerListenRelay,
  openapi: emulatorDocument,
};
