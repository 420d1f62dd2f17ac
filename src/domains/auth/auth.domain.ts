import type { DomainDescriptor } from '../domain.js';
import { authRoutes } from './auth.routes.js';

export const authDomain: DomainDescriptor = {
  name: 'auth',
  routes: [authRoutes],
};
