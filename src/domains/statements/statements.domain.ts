import type { DomainDescriptor } from '../domain.js';
import { statementsRoutes } from './statements.routes.js';
import { statementsDocument } from './statements.openapi.js';

export const statementsDomain: DomainDescriptor = {
  name: 'statements',
  routes: [statementsRoutes],
  openapi: statementsDocument,
};
