import type { DomainDescriptor } from '../domain.js';
import { ID_PREFIXES } from '../../lib/ids.js';
import { beneficiariesRoutes } from './beneficiaries.routes.js';

export const beneficiariesDomain: DomainDescriptor = {
  name: 'beneficiaries',
  routes: [beneficiariesRoutes],
  // its part of the OpenAPI document (docs/openapi.md#what-each-area-adds)
  openapi: {
    parameters: { beneficiaryId: { description: 'The id of a beneficiary (GET /v1/beneficiaries)', example: 'ben_globex' } },
    idPrefixes: { beneficiaryId: `${ID_PREFIXES.beneficiary}_` },
  },
};
