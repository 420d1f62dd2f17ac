import type { DomainDescriptor } from '../domain.js';
import { statementsRoutes } from './statements.routes.js';

export const statementsDomain: DomainDescriptor = {
  name: 'statements',
  routes: [statementsRoutes],
};
