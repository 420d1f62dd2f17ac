import type { DomainDescriptor } from '../domain.js';
import { informationRequestsRoutes } from './information-requests.routes.js';
import { SUBMISSION_PROCESSING_JOB, advanceToReview } from './information-requests.service.js';

export const informationRequestsDomain: DomainDescriptor = {
  name: 'information-requests',
  routes: [informationRequestsRoutes],
  jobs: { [SUBMISSION_PROCESSING_JOB]: advanceToReview },
};
