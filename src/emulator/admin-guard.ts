import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { errors } from '../http/errors.js';
import { dashboardFileUrls } from './dashboard.routes.js';

// The control plane needs no credentials unless ADMIN_TOKEN is set (docs/decisions.md#control-plane-open);
// then it takes `Authorization: Bearer <ADMIN_TOKEN>` (or `X-Admin-Token`). Health stays open for container
// checks, and the dashboard's page and files (its modules and style sheet) stay open because a browser
// cannot add a header to a page load; they hold no data, and the page asks for the token and sends it as
// X-Admin-Token on its data calls.
export function registerAdminGuard(app: FastifyInstance, ctx: AppContext): void {
  const token = ctx.config.adminToken;
  if (!token) return;
  const openPaths = new Set(['/_emulator/health', ...dashboardFileUrls()]);
  const expected = Buffer.from(token);
  app.addHook('onRequest', async (request) => {
    const path = request.url.split('?')[0]!;
    if (!path.startsWith('/_emulator') || (openPaths.has(path.replace(/\/$/, '')) && request.method === 'GET')) return;
    const given = (request.headers['x-admin-token'] as string | undefined) ?? /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? '')?.[1];
    const buffer = Buffer.from(given ?? '');
    if (buffer.length !== expected.length || !timingSafeEqual(buffer, expected)) {
      throw errors.unauthorized('The control plane requires the admin token: Authorization: Bearer <ADMIN_TOKEN> or X-Admin-Token');
    }
  });
}
