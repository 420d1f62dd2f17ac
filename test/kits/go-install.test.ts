import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { ensureBuilt, PROJECT_ROOT, startServerProcess } from '../helpers/server-process.js';
import { plainNode } from '../helpers/node-child.js';

// The Go kit installed by name (docs/clients.md#go-install-by-name): scripts/publish/go.mjs publishes
// service-sandbox.dev/go to a file-based GOPROXY in a temporary folder, `go get`s it by name and version in a
// scratch module outside the checkout, and runs a first go test there against this server. Without a Go
// toolchain this skips, or fails when REQUIRE_RECIPES=1.

const SCRIPT = path.join(PROJECT_ROOT, 'scripts', 'publish', 'go.mjs');
const REQUIRED = process.env.REQUIRE_RECIPES === '1';
/** Real ms the whole publish, install and first test (its compile included) may take before it is killed. */
const RUN_TIMEOUT_MS = 240_000;

t.setTimeout(300_000);

const go = spawnSync('go', ['version'], { encoding: 'utf8' });
const goMissing = go.error !== undefined || go.status !== 0;

t.test('the Go kit installs by name from a stand-in GOPROXY and its first test passes', async (t) => {
  if (goMissing) {
    if (REQUIRED) t.fail('go is missing (REQUIRE_RECIPES=1)');
    else t.pass('the Go kit install', { skip: 'go is missing (apt-get install golang-go)' });
    return;
  }
  await ensureBuilt();
  const server = await startServerProcess({ db: ':memory:' });
  t.teardown(() => server.stop());
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(...plainNode([SCRIPT, '--server', server.url]), { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    child.once('exit', (exitCode) => {
      clearTimeout(timer);
      resolve({ code: exitCode, output: text });
    });
  });
  t.equal(code, 0, 'node scripts/publish/go.mjs passes', { output });
  t.match(output, /published service-sandbox\.dev\/go@v0\.2\.0 \(\d+ files\)/, 'the module went to the stand-in proxy');
  t.match(output, /installed service-sandbox\.dev\/go@v0\.2\.0 by name in \d+ ms/, 'go get took it by name and version (the time is printed)');
  t.match(output, /--- PASS: TestADepositReachesTheAppsOwnEndpoint/, 'the first test in the scratch module passed');
});

t.test('the module zip leaves out what Go leaves out', async (t) => {
  const { moduleFiles } = (await import(SCRIPT)) as { moduleFiles: (dir?: string) => string[] };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'go-module-files-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const file of ['go.mod', 'a/a.go', 'a/testdata/x.json', 'vendor/modules.txt', 'vendor/x/y.go', '.git/HEAD', 'nested/go.mod', 'nested/n.go', 'a/vendor/v.go']) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), 'x');
  }
  symlinkSync(path.join(dir, 'a', 'a.go'), path.join(dir, 'link.go'));
  t.same(moduleFiles(dir), ['a/a.go', 'a/testdata/x.json', 'go.mod', 'vendor/modules.txt'], 'no VCS folder, vendored package, nested module or symlink');
  const kit = moduleFiles();
  t.ok(kit.includes('go.mod') && kit.includes('sandbox/forward.go') && kit.includes('sandboxtest/sandboxtest.go'), 'the kit: its go.mod and packages');
});
