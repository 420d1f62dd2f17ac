import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from './context.js';
import { accountsRoutes } from './domains/accounts/accounts.routes.js';
import { authRoutes } from './domains/auth/auth.routes.js';
import { usersRoutes } from './domains/users/users.routes.js';
import { emulatorRoutes } from './emulator/emulator.routes.js';

// Every route module; a domain adds its one line here.
export const routeModules: Array<(ctx: AppContext) => FastifyPluginAsyncZod> = [
  authRoutes,
  usersRoutes,
  accountsRoutes,
  emulatorRoutes,
];
