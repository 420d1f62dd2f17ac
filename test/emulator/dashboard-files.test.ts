import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import t from 'tap';
import { DASHBOARD_DIR, readDashboardFiles } from '../../src/emulator/dashboard.routes.js';
import { buildTestApp, json } from '../helper.js';

// The dashboard's files (docs/dashboard.md#how-the-page-is-built): the page loads native ES modules from
// src/emulator/dashboard/ with no build step; every .js and .css file there is served as it is, with its
// own content type and the page's security headers, and nothing else is.

/** Every .js and .css file under the dashboard folder, as paths relative to it (read here independently of the server). */
function filesOnDisk(dir = DASHBOARD_DIR, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesOnDisk(path.join(dir, entry.name), `${prefix}${entry.name}/`) : /\.(js|css)$/.test(entry.name) ? [`${prefix}${entry.name}`] : [],
  );
}

const MODULES = filesOnDisk().filter((file) => file.endsWith('.js'));

/** The relative module specifiers a module imports (`import ... from '../dom.js'`). */
function importsOf(source: string): string[] {
  return [...source.matchAll(/^import\s[^;]*?\sfrom\s'(\.{1,2}\/[^']+)';$/gms)].map((match) => match[1]!);
}

t.test('the dashboard is split into modules, and each is served as JavaScript with the page\'s headers', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  t.ok(MODULES.length >= 10, `${MODULES.length} modules on disk`);
  t.ok(MODULES.includes('app.js') && MODULES.some((file) => file.startsWith('panels/')), 'an entry module and panel modules in panels/');
  const page = await sandbox.app.inject({ method: 'GET', url: '/_emulator/ui' });
  const csp = page.headers['content-security-policy'];
  t.match(csp, /script-src 'self'/);

  for (const file of filesOnDisk()) {
    const response = await sandbox.app.inject({ method: 'GET', url: `/_emulator/ui/${file}` });
    t.equal(response.statusCode, 200, `${file} served`);
    t.equal(response.headers['content-type'], file.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8', `${file}: content type`);
    t.equal(response.headers['content-security-policy'], csp, `${file}: the page's Content Security Policy`);
    t.equal(response.headers['x-content-type-options'], 'nosniff', `${file}: nosniff, so a module must come with a JavaScript type`);
    t.equal(response.body, readFileSync(path.join(DASHBOARD_DIR, file), 'utf8'), `${file}: the file as it is (no build step)`);
    if (file.endsWith('.js')) {
      t.notMatch(response.body, /\.innerHTML\s*=|insertAdjacentHTML|outerHTML\s*=|document\.write/, `${file} never writes HTML from strings`);
    }
  }
});

t.test('every import of every module resolves to a served module', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const page = (await sandbox.app.inject({ method: 'GET', url: '/_emulator/ui' })).body;
  const entry = /<script type="module" src="([^"]+)"><\/script>/.exec(page)?.[1];
  t.equal(entry, '/_emulator/ui/app.js', 'the page loads one entry module');
  // Walk the module graph the way a browser does: each specifier resolved against its module's URL.
  const seen = new Set<string>();
  const queue = [new URL(entry!, 'http://sandbox.test')];
  while (queue.length > 0) {
    const url = queue.shift()!;
    if (seen.has(url.pathname)) continue;
    seen.add(url.pathname);
    const response = await sandbox.app.inject({ method: 'GET', url: url.pathname });
    t.equal(response.statusCode, 200, `${url.pathname} loads`);
    t.match(response.headers['content-type'], /^text\/javascript/, `${url.pathname} is JavaScript`);
    for (const specifier of importsOf(response.body)) queue.push(new URL(specifier, url));
  }
  t.same([...seen].sort(), MODULES.map((file) => `/_emulator/ui/${file}`).sort(), 'the page reaches every module on disk, so none is dead');
});

t.test('unknown files and traversal attempts are 404 with the error body', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  // A real listener, so the paths reach the router byte for byte (no client normalises them).
  await sandbox.app.listen({ port: 0, host: '127.0.0.1' });
  const address = sandbox.app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const get = (rawPath: string) =>
    new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: rawPath }, (response) => {
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (body += chunk));
          response.on('end', () => resolve({ status: response.statusCode!, type: String(response.headers['content-type']), body }));
        })
        .on('error', reject);
    });

  const attempts = [
    '/_emulator/ui/unknown.js',
    '/_emulator/ui/panels/unknown.js',
    '/_emulator/ui/index.html', // the page is served at /_emulator/ui only
    '/_emulator/ui/APP.JS',
    '/_emulator/ui/app.js%00',
    '/_emulator/ui/app.js;.css',
    '/_emulator/ui/panels',
    '/_emulator/ui/panels/',
    '/_emulator/ui//app.js',
    '/_emulator/ui/../../package.json',
    '/_emulator/ui/panels/../app.js',
    '/_emulator/ui/..%2fdashboard.routes.ts',
    '/_emulator/ui/..%2F..%2F..%2Fpackage.json',
    '/_emulator/ui/%2e%2e/dashboard.routes.ts',
    '/_emulator/ui/%2E%2E%2F%2E%2E%2Fconfig.ts',
    '/_emulator/ui/panels%2fdetail.js', // an encoded slash is not a folder separator
    '/_emulator/ui/panels%2Fdetail.js',
    '/_emulator/ui/panels/..%5capp.js',
    '/_emulator/ui/%2fetc%2fpasswd',
  ];
  for (const rawPath of attempts) {
    const response = await get(rawPath);
    t.equal(response.status, 404, `${rawPath}: 404`);
    t.match(response.type, /^application\/json/, `${rawPath}: JSON`);
    const body = JSON.parse(response.body);
    t.equal(body.errorCode, 'NOT_FOUND', `${rawPath}: errorCode`);
    t.match(body.message, /^No route for GET /, `${rawPath}: says no route serves it`);
  }
  const malformed = await get('/_emulator/ui/%zz.js');
  t.equal(malformed.status, 400, 'a path that does not percent-decode is a 400');
  t.equal(JSON.parse(malformed.body).errorCode, 'INVALID_REQUEST');
  t.equal((await get('/_emulator/ui/app.js')).status, 200, 'while the module itself is served');
});

t.test('only regular .js and .css files with plain names are picked up from the folder', async (t) => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'dashboard-files-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const dir = path.join(root, 'dashboard');
  mkdirSync(path.join(dir, 'panels', 'deep'), { recursive: true });
  mkdirSync(path.join(dir, '.hidden-folder'));
  writeFileSync(path.join(root, 'secret.js'), 'export const secret = 1;');
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html>');
  writeFileSync(path.join(dir, 'app.js'), 'import "../panels/a.js";');
  writeFileSync(path.join(dir, 'app.css'), 'body {}');
  writeFileSync(path.join(dir, 'panels', 'a.js'), 'export {};');
  writeFileSync(path.join(dir, 'panels', 'deep', 'b.js'), 'export {};');
  writeFileSync(path.join(dir, 'notes.md'), '# not served');
  writeFileSync(path.join(dir, 'server.ts'), 'not served');
  writeFileSync(path.join(dir, '.hidden.js'), 'not served');
  writeFileSync(path.join(dir, '.hidden-folder', 'c.js'), 'not served');
  writeFileSync(path.join(dir, 'with space.js'), 'not served');
  symlinkSync(path.join(root, 'secret.js'), path.join(dir, 'linked.js'));
  symlinkSync(root, path.join(dir, 'up'));

  const read = readDashboardFiles(dir);
  if (read instanceof Error) throw read;
  t.equal(read.page, '<!doctype html>', 'the page');
  t.same(
    read.files.map((file) => [file.url, file.contentType]),
    [
      ['/_emulator/ui/app.css', 'text/css; charset=utf-8'],
      ['/_emulator/ui/app.js', 'text/javascript; charset=utf-8'],
      ['/_emulator/ui/panels/a.js', 'text/javascript; charset=utf-8'],
      ['/_emulator/ui/panels/deep/b.js', 'text/javascript; charset=utf-8'],
    ],
    'sorted; no symbolic links, hidden names, names that need escaping or other extensions',
  );
  t.equal(read.files[2]!.body, 'export {};', 'with their contents');

  const missing = readDashboardFiles(path.join(root, 'nowhere'));
  t.ok(missing instanceof Error, 'a missing folder is an error value, not a throw (the page then answers 500 saying so)');
  rmSync(path.join(dir, 'index.html'));
  t.ok(readDashboardFiles(dir) instanceof Error, 'so is a folder without the page');
});

t.test('with ADMIN_TOKEN every module stays open (a browser cannot send the token for a page load), the data does not', async (t) => {
  const sandbox = await buildTestApp({ config: { adminToken: 'let-me-in' } });
  t.teardown(sandbox.close);
  for (const file of filesOnDisk()) {
    t.equal((await sandbox.app.inject({ method: 'GET', url: `/_emulator/ui/${file}` })).statusCode, 200, `GET ${file} without the token`);
  }
  const feed = await sandbox.app.inject({ method: 'GET', url: '/_emulator/ui/state' });
  t.equal(feed.statusCode, 401, 'the feed needs the token');
  t.equal(json(feed).errorCode, 'UNAUTHORIZED');
  t.equal((await sandbox.app.inject({ method: 'POST', url: '/_emulator/ui/dom.js' })).statusCode, 401, 'only GET is open');
  t.equal((await sandbox.app.inject({ method: 'GET', url: '/_emulator/ui/unknown.js' })).statusCode, 401, 'an unknown file is not open');
});

t.test('the modules stay out of the request log and the OpenAPI document', async (t) => {
  const lines: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const sandbox = await buildTestApp({ config: { logLevel: 'info' }, logStream });
  t.teardown(sandbox.close);
  for (const file of filesOnDisk()) t.equal((await sandbox.app.inject({ method: 'GET', url: `/_emulator/ui/${file}` })).statusCode, 200, file);
  t.same(lines, [], 'loaded with the page, so not logged at info');
  const openapi = json(await sandbox.app.inject({ method: 'GET', url: '/openapi.json' }));
  t.same(Object.keys(openapi.paths).filter((route) => route.startsWith('/_emulator/ui/') && route !== '/_emulator/ui/state' && route !== '/_emulator/ui/events'), [], 'no file is an API operation');
});
