import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ctxOf } from '../http/request-sandbox.js';
import { z } from 'zod';
import { PROJECT_ROOT } from '../config.js';
import { pathPrefixOf } from '../http/public-url.js';
import { errorResponses, errors } from '../core/errors.js';
import { CONTROL_PLANE, CONTROL_PLANE_CHANGING_GET, OPEN } from './emulator.auth.js';
import { dashboardStateQuery, dashboardStateResponse } from './overview.schema.js';
import { getDashboardState } from './overview.service.js';
import { EVENT_STREAM_TYPE, MAX_STREAMS, uiEvents } from './dashboard.events.js';

// The dashboard (docs/dashboard.md): plain HTML, CSS and native ES modules, committed as source under
// src/emulator/dashboard/ and served from there as they are (no build step). They are read from the package
// root, so the same files serve from src/ (tests) and from dist/ (npm start, Docker: the image must contain
// src/emulator/dashboard/). The request journal skips /_emulator/ui*, so the dashboard's own polling of
// /_emulator/ui/state never crowds out the requests a user wants to see.

export const DASHBOARD_DIR = path.join(PROJECT_ROOT, 'src', 'emulator', 'dashboard');

const PAGE_URL = '/_emulator/ui';
const PAGE_FILE = 'index.html';

/** The files served beside the page, by extension; anything else in the folder is not served. */
const FILE_TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/**
 * A file or folder name the dashboard may serve: letters, digits, `_` and `-`, one optional extension. It
 * needs no escaping in a URL and cannot be `.`, `..` or hidden, so a served URL maps to exactly one file.
 */
const SERVABLE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9]+)?$/;

export interface DashboardFile {
  /** e.g. /_emulator/ui/panels/detail.js */
  url: string;
  contentType: string;
  body: string;
}

export interface DashboardFiles {
  page: string;
  /** Sorted by URL. */
  files: DashboardFile[];
}

/**
 * The page and every .js and .css file under `dir` (subfolders included), read into memory. Only regular
 * files with servable names count: symbolic links, hidden files and other extensions are left out, so
 * nothing outside the folder can ever be served. Each file becomes one route of its own
 * (docs/dashboard.md#how-the-page-is-built); a URL that is not one of them is the usual 404.
 */
export function readDashboardFiles(dir: string = DASHBOARD_DIR): DashboardFiles | Error {
  try {
    const files: DashboardFile[] = [];
    const walk = (folder: string, urlPrefix: string) => {
      for (const entry of readdirSync(folder, { withFileTypes: true })) {
        if (!SERVABLE_NAME.test(entry.name)) continue;
        const where = path.join(folder, entry.name);
        if (entry.isDirectory()) walk(where, `${urlPrefix}${entry.name}/`);
        const contentType = FILE_TYPES[path.extname(entry.name)];
        if (entry.isFile() && contentType) files.push({ url: `${urlPrefix}${entry.name}`, contentType, body: readFileSync(where, 'utf8') });
      }
    };
    walk(dir, `${PAGE_URL}/`);
    files.sort((a, b) => (a.url < b.url ? -1 : 1));
    return { page: readFileSync(path.join(dir, PAGE_FILE), 'utf8'), files };
  } catch (error) {
    return error as Error;
  }
}

/**
 * The chart library, served from node_modules as published (docs/dashboard.md#balance-over-time): uPlot's ES module
 * and style sheet, no build step. Missing (an install without dependencies) leaves the routes out; the page then
 * shows the balance table without the chart.
 */
const UPLOT_DIST = path.join(uplotDir(), 'dist');

export const VENDOR_FILES: ReadonlyArray<{ url: string; file: string; contentType: string }> = [
  { url: `${PAGE_URL}/vendor/uPlot.esm.js`, file: path.join(UPLOT_DIST, 'uPlot.esm.js'), contentType: FILE_TYPES['.js']! },
  { url: `${PAGE_URL}/vendor/uPlot.min.css`, file: path.join(UPLOT_DIST, 'uPlot.min.css'), contentType: FILE_TYPES['.css']! },
];

/** Where uPlot is installed: resolved as Node resolves it, so it is found when npm hoisted it above an installed package (docs/cli.md#install). */
function uplotDir(): string {
  try {
    return path.dirname(createRequire(import.meta.url).resolve('uplot/package.json'));
  } catch {
    return path.join(PROJECT_ROOT, 'node_modules', 'uplot'); // not installed: the files are missing and the routes left out
  }
}

export function readVendorFiles(): DashboardFile[] {
  const files: DashboardFile[] = [];
  for (const vendor of VENDOR_FILES) {
    try {
      files.push({ url: vendor.url, contentType: vendor.contentType, body: readFileSync(vendor.file, 'utf8') });
    } catch {
      // not installed: see above
    }
  }
  return files;
}

let vendor: DashboardFile[] | undefined;
const installedVendorFiles = () => (vendor ??= readVendorFiles());

// Read once per process, at the first app built: the files are source, not data.
let installed: DashboardFiles | Error | undefined;
function installedDashboard(): DashboardFiles | Error {
  return (installed ??= readDashboardFiles());
}


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

export const dashboardRoutes: FastifyPluginAsyncZod = async (app) => {
  const dashboard = installedDashboard();
  const send = (reply: FastifyReply, contentType: string, body: string) => reply.headers(SECURITY_HEADERS).type(contentType).send(body);

  app.get(
    PAGE_URL,
    {
      config: OPEN, // a browser cannot add the token to a page load; the page holds no data
      schema: {
        operationId: 'emulatorDashboard',
        description: 'The dashboard page (HTML): state, live transactions, webhook deliveries, the request journal and actions (docs/dashboard.md).',
        tags: ['Emulator'],
        summary: 'Dashboard (HTML page): state, live transactions, webhook deliveries, request journal and actions',
        produces: ['text/html'],
        response: { 200: z.string().describe('text/html'), ...errorResponses() },
      },
    },
    async (request, reply) => {
      if (dashboard instanceof Error) {
        throw errors.internal(`Dashboard files are missing from ${DASHBOARD_DIR}; the install must include src/emulator/dashboard/`);
      }
      // A session's page loads its files from the session (docs/sessions.md#the-dashboard).
      const prefix = pathPrefixOf(request);
      return send(reply, 'text/html; charset=utf-8', prefix ? dashboard.page.replaceAll('"/_emulator/ui/', `"${prefix}/_emulator/ui/`) : dashboard.page);
    },
  );
  // The page's modules and style sheet, one route each; not API operations, so left out of the OpenAPI document.
  for (const file of dashboard instanceof Error ? [] : [...dashboard.files, ...installedVendorFiles()]) {
    app.get(file.url, { config: OPEN, logLevel: QUIET, schema: { hide: true } }, async (_request, reply) => send(reply, file.contentType, file.body));
  }

  app.get(
    '/_emulator/ui/state',
    {
      config: CONTROL_PLANE,
      logLevel: QUIET,
      schema: {
        operationId: 'emulatorDashboardState',
        tags: ['Emulator'],
        summary: 'The dashboard\'s feed: overview, clock, newest transactions and the selected transaction with its deliveries',
        description: 'What the dashboard polls every second. Not recorded in the request journal (nor is anything under /_emulator/ui).',
        querystring: dashboardStateQuery,
        response: { 200: dashboardStateResponse, ...errorResponses() },
      },
    },
    async (request) => getDashboardState(ctxOf(request), request.query),
  );

  // docs/dashboard.md#live-updates: "changed" notices pushed to open pages; they refetch the feed above.
  app.get(
    '/_emulator/ui/events',
    {
      config: CONTROL_PLANE_CHANGING_GET,
      logLevel: QUIET,
      schema: {
        operationId: 'emulatorDashboardEvents',
        tags: ['Emulator'],
        summary: 'The dashboard\'s push channel: a server-sent event stream of "changed" notices',
        description:
          'text/event-stream that stays open: `event: ready` at once, then `event: changed` (data `{ "now" }`, the emulated time) ' +
          'within about 100 ms of any change to this sandbox\'s database or clock, and a comment line every 15 s. ' +
          `The notice carries no state: refetch GET /_emulator/ui/state. At most ${MAX_STREAMS} streams per sandbox (429 beyond). ` +
          'Ended when the server or session closes. Not recorded in the request journal.',
        produces: ['text/event-stream'],
        querystring: z.strictObject({}),
        response: { 200: z.string().describe('text/event-stream'), ...errorResponses(429) },
      },
    },
    async (request, reply) => {
      // HEAD answers the stream's headers and holds nothing: Node writes no body to a HEAD response, so an attached
      // stream never answered yet took one of the sandbox's slots (docs/dashboard.md#live-updates).
      if (request.method === 'HEAD') return reply.type(EVENT_STREAM_TYPE).header('cache-control', 'no-cache').send('');
      const events = uiEvents(ctxOf(request));
      if (events.open() >= MAX_STREAMS) throw errors.tooManyRequests(`This sandbox already has ${MAX_STREAMS} dashboard event streams open; close one`);
      reply.hijack();
      events.attach(reply.raw);
    },
  );
};
