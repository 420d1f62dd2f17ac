import type { DomainDescriptor } from '../domain.js';
import { usersRoutes } from './users.routes.js';

export const usersDomain: DomainDescriptor = {
  name: 'users',
  routes: [usersRoutes],
  // its part of the OpenAPI document (docs/openapi.md#what-each-area-adds)
  openapi: { parameters: { userId: { description: 'The id of a user of the programme', example: 'usr_acme' } } },
};
