import type { DomainDescriptor } from '../domain.js';
import { enrollmentRoutes } from './enrollment.routes.js';
import { runEnrollmentReview } from './enrollment.service.js';
import { REVIEW_JOB } from '../information-requests/information-requests.service.js';

export const enrollmentDomain: DomainDescriptor = {
  name: 'enrollment',
  routes: [enrollmentRoutes],
  jobs: { [REVIEW_JOB]: runEnrollmentReview },
};
