import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { ensureBuilt } from '../helpers/server-process.js';
import { plainCommand, plainNode } from '../helpers/node-child.js';

// docs/cli.md#install: `npm pack` gives a tarball that installs into another project and whose `service-sandbox`
// works from any directory: serve (with the dashboard, its chart library, the document), sign, check-receiver; and
// whose `service-sandbox/client` export (docs/clients.md#typescript) imports there with its runtime dependency.
// The install is a real `npm install` of the tarball from the registry's metadata and npm's cache; only
// better-sqlite3's compile (a minute of C, proved by every `npm ci`) is replaced by the checkout's own binary.

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const NATIVE = path.join(ROOT, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');

function npm(args: string[], cwd: string): string {
  return execFileSync(...plainCommand('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error']), { cwd, encoding: 'utf8', timeout: 180_000 });
}

/** Every better-sqlite3 folder npm laid out under `dir` (hoisted or nested under the package). */
function betterSqliteDirs(dir: string): string[] {
  const found: string[] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const full = path.join(at, entry.name);
      if (entry.name === 'better-sqlite3' && path.basename(at) === 'node_modules') found.push(full);
      else walk(full);
    }
  };
  walk(dir);
  return found;
}

t.test('the packed tarball installs into a scratch project and its service-sandbox works from anywhere', async (t) => {
  await ensureBuilt();
  const scratch = mkdtempSync(path.join(tmpdir(), 'service-sandbox-pack-'));
  t.teardown(() => rmSync(scratch, { recursive: true, force: true }));

  // --ignore-scripts: the prepack build already ran (ensureBuilt)
  const tarballName = npm(['pack', '--ignore-scripts', '--pack-destination', scratch], ROOT).trim().split('\n').pop()!;
  const tarball = path.join(scratch, tarballName);
  const listing = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n');
  for (const file of ['package/dist/service-sandbox.mjs', 'package/dist/schema.sqlite', 'package/dist/snapshots.worker.js', 'package/dist/scenario.worker.js', 'package/dist/src/index.js', 'package/fixtures/default.json', 'package/scenarios/demo.yaml', 'package/openapi/openapi.json', 'package/src/emulator/dashboard/index.html']) {
    t.ok(listing.includes(file), `the tarball holds ${file}`);
  }
  t.notOk(listing.some((file) => file.startsWith('package/test/') || file.startsWith('package/src/domains/')), 'no tests and no TypeScript sources');

  const project = path.join(scratch, 'project');
  mkdirSync(project);
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'scratch-project', private: true }));
  npm(['install', '--prefer-offline', '--ignore-scripts', tarball], project);
  const dirs = betterSqliteDirs(path.join(project, 'node_modules'));
  t.ok(dirs.length >= 1, 'better-sqlite3 installed with it');
  for (const dir of dirs) {
    mkdirSync(path.join(dir, 'build', 'Release'), { recursive: true });
    copyFileSync(NATIVE, path.join(dir, 'build', 'Release', 'better_sqlite3.node'));
  }
  const bin = path.join(project, 'node_modules', '.bin', 'service-sandbox');
  t.ok(existsSync(bin), 'the bin is linked');
  const elsewhere = mkdtempSync(path.join(tmpdir(), 'service-sandbox-cwd-')); // not the project, not the checkout
  t.teardown(() => rmSync(elsewhere, { recursive: true, force: true }));

  const help = spawnSync(...plainCommand(bin, ['--help']), { cwd: elsewhere, encoding: 'utf8', timeout: 20_000 });
  t.equal(help.status, 0, help.stderr);
  t.match(help.stdout, 'service-sandbox listen');
  const signed = spawnSync(...plainCommand(bin, ['sign', 'GET', '/v1/accounts', '--format', 'json']), { cwd: elsewhere, encoding: 'utf8', timeout: 20_000 });
  t.equal(signed.status, 0, signed.stderr);
  const headers = JSON.parse(signed.stdout) as Record<string, string>;
  t.equal(headers['X-Service-Api-Key'], 'pk_sandbox_single', 'sign reads the default fixtures from the installed package');

  const server = spawn(...plainCommand(bin, ['--port', '0', '--log-level', 'warn']), { cwd: elsewhere, stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    server.kill('SIGTERM');
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`no start line in 60 s: ${out} ${err}`)), 60_000);
    server.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    server.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    server.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
  t.equal((await fetch(`${url}/_emulator/health`)).status, 200, 'it serves');
  t.equal((await fetch(`${url}/_emulator/ui`)).status, 200, 'the dashboard');
  t.equal((await fetch(`${url}/_emulator/ui/vendor/uPlot.esm.js`)).status, 200, 'its chart library, wherever npm put uplot');
  t.equal((await fetch(`${url}/openapi.json`)).status, 200, 'the document');
  // docs/sessions.md#scenarios: the shipped scenarios are found beside the installed package's fixtures
  const scenarios = (await (await fetch(`${url}/_emulator/scenarios`)).json()) as { data: Array<{ name: string; source: string; error: unknown }> };
  t.match(scenarios.data.find((entry) => entry.name === 'demo'), { source: 'shipped', error: null }, 'the shipped demo scenario is listed');
  // an uploaded snapshot is checked on the worker thread shipped beside the bundle (docs/robustness.md#hostile-files)
  await fetch(`${url}/_emulator/snapshots`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"packed"}' });
  const file = new Uint8Array(await (await fetch(`${url}/_emulator/snapshots/packed/export`)).arrayBuffer());
  const uploaded = await fetch(`${url}/_emulator/snapshots/again`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: file });
  t.equal(uploaded.status, 201, `an exported snapshot uploads again: ${await uploaded.text()}`);
  const accounts = await fetch(`${url}/v1/accounts`, { headers });
  t.equal(accounts.status, 200, 'a request signed by the installed sign');

  const client = spawnSync(
    ...plainNode([
      '--input-type=module',
      '-e',
      `import { createSandboxClient } from 'service-sandbox/client';
       const client = createSandboxClient({ baseUrl: ${JSON.stringify(url)} });
       const accounts = await client.api.GET('/v1/accounts');
       const settled = await client.settle();
       console.log(accounts.response.status, settled.settled);`,
    ]),
    { cwd: project, encoding: 'utf8', timeout: 20_000 },
  );
  t.equal(client.stdout.trim(), '200 true', `service-sandbox/client imports from the installed package and signs ${client.stderr}`);

  const check = spawnSync(...plainCommand(bin, ['check-receiver', 'http://127.0.0.1:9/hooks', '--timeout', '500']), { cwd: elsewhere, encoding: 'utf8', timeout: 30_000 });
  t.equal(check.status, 1, 'check-receiver runs: a receiver that is not there fails its cases');
  t.match(check.stdout + check.stderr, 'valid');
});
