import type { DomainDescriptor } from '../domain.js';
import { payoutsRoutes } from './payouts.routes.js';

export const payoutsDomain: DomainDescriptor = {
  name: 'payouts',
  routes: [payoutsRoutes],
};
