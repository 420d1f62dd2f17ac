import type { DomainDescriptor } from '../domain.js';
import { usersRoutes } from './users.routes.js';

export const usersDomain: DomainDescriptor = {
  name: 'users',
  routes: [usersRoutes],
};
