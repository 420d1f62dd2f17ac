import type { DomainDescriptor } from '../domain.js';
import { intentsRoutes } from './intents.routes.js';
import { INTENT_EXPIRY_JOB, runIntentExpiry } from './intents.service.js';

export const intentsDomain: DomainDescriptor = {
  name: 'intents',
  routes: [intentsRoutes],
  jobs: { [INTENT_EXPIRY_JOB]: runIntentExpiry },
};
