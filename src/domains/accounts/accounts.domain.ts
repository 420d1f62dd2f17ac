import type { DomainDescriptor } from '../domain.js';
import { accountsRoutes } from './accounts.routes.js';
import { PROVIDER_READY_JOB, runProviderReady } from './account-templates.js';

export const accountsDomain: DomainDescriptor = {
  name: 'accounts',
  routes: [accountsRoutes],
  jobs: { [PROVIDER_READY_JOB]: runProviderReady },
};
