import type { DomainDescriptor } from '../domain.js';
import { ID_PREFIXES } from '../../lib/ids.js';
import { accountsRoutes } from './accounts.routes.js';
import { PROVIDER_READY_JOB, runProviderReady } from './account-templates.js';

export const accountsDomain: DomainDescriptor = {
  name: 'accounts',
  routes: [accountsRoutes],
  jobs: { [PROVIDER_READY_JOB]: runProviderReady },
  // its part of the OpenAPI document (docs/openapi.md#what-each-area-adds)
  openapi: {
    parameters: { accountId: { description: 'The id of an account (GET /v1/accounts)', example: 'acct_acme_usd' } },
    idPrefixes: { accountId: `${ID_PREFIXES.account}_` },
  },
};
