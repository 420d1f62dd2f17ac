import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { PROJECT_ROOT } from '../config.js';
import type { AppContext } from '../context.js';
import { errorResponses, errors } from '../http/errors.js';
import { CONTROL_PLANE } from './emulator.routes.js';
import { dashboardStateQuery, dashboardStateResponse } from './overview.schema.js';
import { getDashboardState } from './overview.service.js';

// The dashboard (issue 8, contract 10): plain HTML, CSS and one ES module, committed as source under
// src/emulator/dashboard/ and served from there (no build step). They are read from the package root, so
// the same files serve from src/ (tests) and from dist/ (npm start, Docker: the image must contain
// src/emulator/dashboard/). The request journal skips /_emulator/ui*, so the dashboard's own polling of
// /_emulator/ui/state never crowds out the requests a user wants to see.

export const DASHBOARD_DIR = path.join(PROJECT_ROOT, 'src', 'emulator', 'dashboard');

const ASSETS = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
} as const;
type AssetName = keyof typeof ASSETS;

// Defence in depth: every value is inserted as text (textContent), and the policy forbids inline script,
// inline handlers and foreign origins should anything ever slip through.
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

// An open dashboard polls once a second: its feed and files log only warnings, so they do not flood the
// server's request log at the default level.
const QUIET = 'warn';

function loadAssets(): Map<AssetName, string> | Error {
  try {
    return new Map((Object.keys(ASSETS) as AssetName[]).map((name) => [name, readFileSync(path.join(DASHBOARD_DIR, name), 'utf8')]));
  } catch (error) {
    return error as Error;
  }
}

export const dashboardRoutes = (ctx: AppContext): FastifyPluginAsyncZod =>
  async (app) => {
    const assets = loadAssets();

    const serve = (name: AssetName) => async (_request: FastifyRequest, reply: FastifyReply) => {
      if (assets instanceof Error) {
        throw errors.internal(`Dashboard files are missing from ${DASHBOARD_DIR}; the install must include src/emulator/dashboard/`);
      }
      return reply.headers(SECURITY_HEADERS).type(ASSETS[name]).send(assets.get(name));
    };
    app.get(
      '/_emulator/ui',
      {
        config: CONTROL_PLANE,
        schema: {
          tags: ['Emulator'],
          summary: 'Dashboard (HTML page): state, live transactions, webhook deliveries, request journal and actions',
          produces: ['text/html'],
          response: { 200: z.string().describe('text/html'), ...errorResponses() },
        },
      },
      serve('index.html'),
    );
    // The page's two assets; not API operations, so left out of the OpenAPI document.
    app.get('/_emulator/ui/app.js', { config: CONTROL_PLANE, logLevel: QUIET, schema: { hide: true } }, serve('app.js'));
    app.get('/_emulator/ui/app.css', { config: CONTROL_PLANE, logLevel: QUIET, schema: { hide: true } }, serve('app.css'));

    app.get(
      '/_emulator/ui/state',
      {
        config: CONTROL_PLANE,
        logLevel: QUIET,
        schema: {
          tags: ['Emulator'],
          summary: 'The dashboard\'s feed: overview, clock, newest transactions and the selected transaction with its deliveries',
          description: 'What the dashboard polls every second. Not recorded in the request journal (nor is anything under /_emulator/ui).',
          querystring: dashboardStateQuery,
          response: { 200: dashboardStateResponse, ...errorResponses() },
        },
      },
      async (request) => getDashboardState(ctx, request.query),
    );
  };
