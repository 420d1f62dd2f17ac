#!/usr/bin/env node
// Publish the TypeScript kit and the server to a stand-in npm registry and install them by name, as a team would
// (docs/clients.md#typescript, docs/cli.md#install): verdaccio (a devDependency) on a free port, its storage in a
// temporary folder; the server's package (`service-sandbox`) and the kit's (`@service-sandbox/client`) packed and
// published there with a throwaway user; then, in scratch projects in another temporary folder outside the checkout,
// `npm install @service-sandbox/client@<version>` and a first test (node --test) against a server: the one given with
// `--server URL`, else the server installed by name (`npm install service-sandbox@<version>`) and started. Prints each
// install's time; then the kit's `npm pack` tarball installed in another scratch project (the install from a checkout)
// and the same test there. Run by test/kits/npm-install.test.ts in npm test (with --server unless PUBLISH_INSTALL_SERVER=1).
//
//   node scripts/publish/npm.mjs [--server URL] [--keep]
//
// Only our two packages live in the stand-in registry; every other package (openapi-fetch, the server's
// dependencies) it fetches from the registry npm is configured with here, its uplink. better-sqlite3's compile is
// skipped (--ignore-scripts) and the checkout's own binary copied in, as test/cli/cli-pack.test.ts does: the compile
// is a minute of C that every `npm ci` proves.
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const CLIENT = path.join(ROOT, 'clients', 'typescript');
const VERSION = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
const NATIVE = path.join(ROOT, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');

const args = process.argv.slice(2);
const serverArg = args.includes('--server') ? args[args.indexOf('--server') + 1] : undefined;
const keep = args.includes('--keep');

/** A child's environment: no tap hook, no npm settings of the caller's project that would point elsewhere. */
function env(extra = {}) {
  const copy = { ...process.env, ...extra };
  delete copy.NODE_OPTIONS;
  for (const name of Object.keys(copy)) if (name.startsWith('npm_config_') || name.startsWith('npm_package_')) delete copy[name];
  return copy;
}

function run(command, commandArgs, cwd, extraEnv = {}) {
  return execFileSync(command, commandArgs, { cwd, env: env(extraEnv), encoding: 'utf8', timeout: 300_000, stdio: ['ignore', 'pipe', 'pipe'] });
}

const T0 = performance.now();
/** A line of the report, with the seconds since the start (where the time goes, on a loaded machine too). */
function say(line) {
  process.stdout.write(`[${((performance.now() - T0) / 1000).toFixed(0).padStart(3)} s] ${line}\n`);
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Wait for a line of a child's output that matches; reject when it exits first or after `timeoutMs`. */
function waitForLine(child, pattern, what, timeoutMs = 60_000) {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${what}: no start within ${timeoutMs} ms:\n${out}`)), timeoutMs);
    const onData = (chunk) => {
      out += chunk.toString();
      const match = pattern.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited ${code}:\n${out}`));
    });
  });
}

const work = mkdtempSync(path.join(tmpdir(), 'service-sandbox-npm-publish-'));
const children = [];
async function cleanUp() {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  await Promise.all(children.map((child) => (child.exitCode === null ? new Promise((resolve) => child.once('exit', resolve)) : undefined)));
  if (!keep) rmSync(work, { recursive: true, force: true });
}

try {
  // 1. the stand-in registry: verdaccio, storage and users in the temporary folder, our names published only there
  const upstream = run('npm', ['config', 'get', 'registry'], work).trim();
  const port = await freePort();
  const registry = `http://127.0.0.1:${port}/`;
  mkdirSync(path.join(work, 'storage'));
  writeFileSync(
    path.join(work, 'verdaccio.yaml'),
    [
      `storage: ${JSON.stringify(path.join(work, 'storage'))}`,
      'auth:',
      '  htpasswd:',
      `    file: ${JSON.stringify(path.join(work, 'htpasswd'))}`,
      'uplinks:',
      '  upstream:',
      `    url: ${JSON.stringify(upstream)}`,
      'packages:',
      "  '@service-sandbox/*':",
      '    access: $all',
      '    publish: $authenticated',
      "  'service-sandbox':",
      '    access: $all',
      '    publish: $authenticated',
      "  '**':",
      '    access: $all',
      '    proxy: upstream',
      'log: { type: stdout, format: pretty, level: warn }',
      '',
    ].join('\n'),
  );
  const verdaccio = spawn(path.join(ROOT, 'node_modules', '.bin', 'verdaccio'), ['--config', path.join(work, 'verdaccio.yaml'), '--listen', `127.0.0.1:${port}`], {
    cwd: work,
    env: env(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(verdaccio);
  verdaccio.once('exit', () => undefined);
  for (let attempt = 0; ; attempt++) {
    const answer = await fetch(`${registry}-/ping`).catch(() => undefined);
    if (answer?.ok) break;
    if (attempt > 600 || verdaccio.exitCode !== null) throw new Error(`verdaccio did not start on ${registry}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  say(`stand-in registry: verdaccio on ${registry} (storage ${path.join(work, 'storage')}; other packages from the configured registry)`);

  // a throwaway user, and its token in a user config of its own
  const user = await fetch(`${registry}-/user/org.couchdb.user:publisher`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'publisher', password: `pw-${process.pid}-${Date.now()}`, type: 'user', roles: [], date: new Date().toISOString() }),
  });
  if (!user.ok) throw new Error(`verdaccio refused the user: ${user.status} ${await user.text()}`);
  const { token } = await user.json();
  const hostPath = registry.replace(/^http:/, '');
  const publisherRc = path.join(work, 'publisher.npmrc');
  writeFileSync(publisherRc, `registry=${registry}\n${hostPath}:_authToken=${token}\n`);

  // 2. pack and publish both packages
  const tarballs = path.join(work, 'tarballs');
  mkdirSync(tarballs);
  run('npm', ['run', 'build:client'], ROOT);
  if (!existsSync(path.join(ROOT, 'dist', 'service-sandbox.mjs'))) run('npm', ['run', 'build'], ROOT);
  say('built the client package (npm run build:client)');
  const pack = (dir) => path.join(tarballs, run('npm', ['pack', '--ignore-scripts', '--pack-destination', tarballs, '--loglevel=error'], dir).trim().split('\n').pop());
  const clientTarball = pack(CLIENT);
  for (const tarball of [pack(ROOT), clientTarball]) {
    run('npm', ['publish', tarball, '--userconfig', publisherRc, '--registry', registry, '--access', 'public', '--ignore-scripts', '--loglevel=error', '--tag', 'latest'], work);
    say(`published ${path.basename(tarball)}`);
  }

  // 3. a scratch project outside the checkout: the client by name, and a first test
  const scratch = path.join(work, 'app');
  mkdirSync(scratch);
  writeFileSync(path.join(scratch, 'package.json'), JSON.stringify({ name: 'scratch-app', private: true, type: 'module' }, null, 2));
  writeFileSync(path.join(scratch, '.npmrc'), `registry=${registry}\n`);
  const npmInstall = (dir, spec, extra = []) => {
    const started = performance.now();
    run('npm', ['install', '--save-dev', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', ...extra, spec], dir);
    return (performance.now() - started) / 1000;
  };
  const clientSeconds = npmInstall(scratch, `@service-sandbox/client@${VERSION}`);
  const installed = readdirSync(path.join(scratch, 'node_modules'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
    .flatMap((entry) => (entry.name.startsWith('@') ? readdirSync(path.join(scratch, 'node_modules', entry.name)).map((name) => `${entry.name}/${name}`) : [entry.name]));
  say(`install @service-sandbox/client@${VERSION}: ${clientSeconds.toFixed(1)} s (${installed.length} packages: ${installed.join(', ')})`);
  writeFileSync(
    path.join(scratch, 'first.test.mjs'),
    `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSandboxClient, startWebhookReceiver, VERSION } from '@service-sandbox/client';

test('a session: a deposit completes, its webhooks forwarded into the app and verified', async () => {
  assert.equal(VERSION, ${JSON.stringify(VERSION)});
  const root = createSandboxClient({ baseUrl: process.env.SANDBOX_URL });
  const session = await root.createSession({ label: 'npm-install' });
  const sandbox = root.forSession(session);
  const app = await startWebhookReceiver({ key: session.credentials.webhook, path: '/hooks' });
  const forwarding = await sandbox.forwardWebhooks(app.url);
  try {
    const deposit = await sandbox.api.POST('/v1/sandbox/accounts/{accountId}/deposits', {
      params: { path: { accountId: 'acct_acme_usd' } },
      body: { depositInstructionId: 'di_acme_usd_ach', amount: '10.00' },
    });
    assert.equal(deposit.response.status, 202);
    await sandbox.advanceClock(3_600_000);
    await sandbox.settleUntilIdle();
    assert.deepEqual(app.events.map((event) => event.transaction.status), ['PENDING', 'COMPLETED']);
    assert.deepEqual(app.rejected, []);
  } finally {
    await forwarding.stop();
    await app.close();
    await root.endSession(session.id);
  }
});
`,
  );

  // 3b. from a checkout, as docs/clients.md#install-from-a-checkout says: the tarball of `npm pack`, installed (a path
  // to the folder would be a symlink, and the import would not find openapi-fetch); the same first test runs there
  const fromCheckout = path.join(work, 'app-from-checkout');
  mkdirSync(fromCheckout);
  writeFileSync(path.join(fromCheckout, 'package.json'), JSON.stringify({ name: 'scratch-app-from-checkout', private: true, type: 'module' }, null, 2));
  writeFileSync(path.join(fromCheckout, '.npmrc'), `registry=${registry}\n`);
  const tarballSeconds = npmInstall(fromCheckout, clientTarball);
  copyFileSync(path.join(scratch, 'first.test.mjs'), path.join(fromCheckout, 'first.test.mjs'));
  say(`install the packed tarball ${path.basename(clientTarball)}: ${tarballSeconds.toFixed(1)} s`);

  // 4. the server: the one given, else installed by name in a scratch project of its own and started
  let serverUrl = serverArg;
  if (!serverUrl) {
    const serverProject = path.join(work, 'server');
    mkdirSync(serverProject);
    writeFileSync(path.join(serverProject, 'package.json'), JSON.stringify({ name: 'scratch-server', private: true }, null, 2));
    writeFileSync(path.join(serverProject, '.npmrc'), `registry=${registry}\n`);
    const serverSeconds = npmInstall(serverProject, `service-sandbox@${VERSION}`, ['--ignore-scripts']);
    say(`install service-sandbox@${VERSION}: ${serverSeconds.toFixed(1)} s (scripts skipped: better-sqlite3 gets the checkout's binary)`);
    const natives = [];
    const walk = (at) => {
      for (const entry of readdirSync(at, { withFileTypes: true })) {
        if (!entry.isDirectory()) continue;
        const full = path.join(at, entry.name);
        if (entry.name === 'better-sqlite3' && path.basename(at) === 'node_modules') natives.push(full);
        else walk(full);
      }
    };
    walk(path.join(serverProject, 'node_modules'));
    for (const dir of natives) {
      mkdirSync(path.join(dir, 'build', 'Release'), { recursive: true });
      copyFileSync(NATIVE, path.join(dir, 'build', 'Release', 'better_sqlite3.node'));
    }
    const server = spawn(path.join(serverProject, 'node_modules', '.bin', 'service-sandbox'), ['--port', '0', '--log-level', 'warn'], {
      cwd: serverProject,
      env: env(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(server);
    serverUrl = (await waitForLine(server, /listening on (http:\/\/\S+)/, 'the installed service-sandbox'))[1];
    say(`server: the installed service-sandbox@${VERSION} at ${serverUrl}`);
  }

  const started = performance.now();
  const output = run(process.execPath, ['--test', '--test-reporter=spec', 'first.test.mjs'], scratch, { SANDBOX_URL: serverUrl });
  say(output.trim().split('\n').filter((line) => /✔|✖|pass|fail/.test(line)).join('\n'));
  say(`first test: passed in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const packed = run(process.execPath, ['--test', '--test-reporter=spec', 'first.test.mjs'], fromCheckout, { SANDBOX_URL: serverUrl });
  say(packed.trim().split('\n').filter((line) => /✔|✖|pass|fail/.test(line)).join('\n'));
  say('first test with the packed tarball: passed');
  say(`client install time: ${clientSeconds.toFixed(1)} s`);
} catch (error) {
  process.stderr.write(`publish (npm) failed: ${error.stack ?? error}\n${error.stdout ?? ''}${error.stderr ?? ''}\n`);
  process.exitCode = 1;
} finally {
  await cleanUp();
}
