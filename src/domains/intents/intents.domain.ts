import type { DomainDescriptor } from '../domain.js';
import { ID_PREFIXES } from '../../lib/ids.js';
import { intentsRoutes } from './intents.routes.js';
import { INTENT_EXPIRY_JOB, runIntentExpiry } from './intents.service.js';

export const intentsDomain: DomainDescriptor = {
  name: 'intents',
  routes: [intentsRoutes],
  jobs: { [INTENT_EXPIRY_JOB]: runIntentExpiry },
  // its part of the OpenAPI document (docs/openapi.md#what-each-area-adds)
  openapi: {
    parameters: { transactionIntentId: { description: 'The id of a transaction intent (POST /v1/transaction-intents)' } },
    idPrefixes: { transactionIntentId: `${ID_PREFIXES.intent}_` },
  },
};
