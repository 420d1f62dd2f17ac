import type { DomainDescriptor } from '../domain.js';
import { sandboxRoutes } from './sandbox.routes.js';

export const sandboxDomain: DomainDescriptor = {
  name: 'sandbox',
  routes: [sandboxRoutes],
};
