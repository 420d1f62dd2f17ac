import type { DomainDescriptor } from '../domain.js';
import { payoutsDocument } from './payouts.openapi.js';
import { payoutsRoutes } from './payouts.routes.js';

export const payoutsDomain: DomainDescriptor = {
  name: 'payouts',
  routes: [payoutsRoutes],
  openapi: payoutsDocument,
};
