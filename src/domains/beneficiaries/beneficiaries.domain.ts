import type { DomainDescriptor } from '../domain.js';
import { beneficiariesRoutes } from './beneficiaries.routes.js';

export const beneficiariesDomain: DomainDescriptor = {
  name: 'beneficiaries',
  routes: [beneficiariesRoutes],
};
