import type { DomainDescriptor } from '../domain.js';
import { ID_PREFIXES } from '../../lib/ids.js';
import { informationRequestsRoutes } from './information-requests.routes.js';
import { SUBMISSION_PROCESSING_JOB, advanceToReview } from './information-requests.service.js';

export const informationRequestsDomain: DomainDescriptor = {
  name: 'information-requests',
  routes: [informationRequestsRoutes],
  jobs: { [SUBMISSION_PROCESSING_JOB]: advanceToReview },
  // its part of the OpenAPI document (docs/openapi.md#what-each-area-adds)
  openapi: {
    parameters: { informationRequestId: { description: 'The id of an information request (GET /v1/information-requests)' } },
    idPrefixes: { informationRequestId: `${ID_PREFIXES.informationRequest}_` },
  },
};
