import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { CLI, ensureBuilt, PROJECT_ROOT, startServerProcess } from '../helpers/server-process.js';
import { plainNode } from '../helpers/node-child.js';
import { runSuite } from '../helpers/suite-process.js';

// The Go kit (clients/go, docs/clients.md#go): its structs match the committed OpenAPI document (and the check
// notices when they would not), its files are gofmt-clean, and its scenario suite (go test, t.Parallel) passes
// against ONE built server. Without a Go toolchain the Go parts skip, or fail when REQUIRE_RECIPES=1 (.ci/run
// sets it once it has installed the toolchains, golang-go among them: docs/recipes.md#in-ci).

const KIT = path.join(PROJECT_ROOT, 'clients', 'go');
const GENERATOR = path.join(PROJECT_ROOT, 'scripts', 'go-models.mjs');
const REQUIRED = process.env.REQUIRE_RECIPES === '1';
/** Real ms the scenario suite may take, its compile included, before it is killed. */
const SUITE_TIMEOUT_MS = 150_000;

t.setTimeout(220_000);

t.test('the generated structs match openapi/openapi.json', async (t) => {
  const check = spawnSync(...plainNode([GENERATOR, '--check']), { cwd: PROJECT_ROOT, encoding: 'utf8' });
  t.equal(check.status, 0, 'node scripts/go-models.mjs --check passes', { stdout: check.stdout, stderr: check.stderr });
});

t.test('the check fails when the document changes under the structs', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'go-models-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const document = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'openapi', 'openapi.json'), 'utf8'));
  document.components.schemas.ServiceError.properties.traceId = { type: 'string' };
  const changed = path.join(dir, 'openapi.json');
  writeFileSync(changed, JSON.stringify(document));
  const check = spawnSync(...plainNode([GENERATOR, '--check', '--document', changed]), { cwd: PROJECT_ROOT, encoding: 'utf8' });
  t.equal(check.status, 1, 'a new field of the error body is a difference');
  t.match(check.stderr, /models_gen\.go differs from what .* gives: run npm run generate/, 'the message says how to fix it');
});

const go = spawnSync('go', ['version'], { encoding: 'utf8' });
const goMissing = go.error !== undefined || go.status !== 0;

/** Skips (or fails, with REQUIRE_RECIPES=1) a test that needs the Go toolchain. */
function needsGo(t: Test): boolean {
  if (!goMissing) return true;
  if (REQUIRED) t.fail('go is missing (REQUIRE_RECIPES=1)');
  else t.pass('the Go kit', { skip: 'go is missing (apt-get install golang-go)' });
  return false;
}

// The build cache and module path live in the temp folder (kept between runs for speed), never in the
// checkout; nothing is downloaded: the kit uses the standard library only.
const goEnv = {
  ...process.env,
  GOCACHE: path.join(os.tmpdir(), 'service-sandbox-go-kit-cache'),
  GOPATH: path.join(os.tmpdir(), 'service-sandbox-go-kit-path'),
  GOFLAGS: '-mod=mod',
  GOPROXY: 'off',
  GOTOOLCHAIN: 'local',
};

t.test('the kit is gofmt-clean and go vet-clean', async (t) => {
  if (!needsGo(t)) return;
  const gofmt = spawnSync('gofmt', ['-l', '.'], { cwd: KIT, encoding: 'utf8', env: goEnv });
  t.equal(gofmt.status, 0, 'gofmt runs', { stderr: gofmt.stderr });
  t.equal(gofmt.stdout, '', 'gofmt -l lists no file');
  const vet = spawnSync('go', ['vet', './...'], { cwd: KIT, encoding: 'utf8', env: goEnv });
  t.equal(vet.status, 0, 'go vet ./... finds nothing', { output: `${vet.stdout}${vet.stderr}` });
});

t.test('the scenario suite passes against one built server', async (t) => {
  if (!needsGo(t)) return;
  await ensureBuilt();
  const server = await startServerProcess({ db: ':memory:' });
  t.teardown(() => server.stop());
  const { code, output, ms } = await runSuite('go', ['test', '-count=1', '-parallel', '8', './...'], {
    cwd: KIT,
    env: { ...goEnv, SANDBOX_URL: server.url, SANDBOX_CLI: CLI, SANDBOX_LABEL: `go-kit-${process.pid}` },
    timeoutMs: SUITE_TIMEOUT_MS,
  });
  t.equal(code, 0, `go test ./... passes (${ms} ms)`, { output });
  t.match(output, /ok\s+service-sandbox\.dev\/go\/scenarios/, 'the scenarios ran');

  const answer = await fetch(`${server.url}/_emulator/sessions`);
  const body = (await answer.json()) as { data?: Array<{ id: string }> };
  t.same(
    (body.data ?? []).map((session) => session.id),
    [],
    'every test ended its session',
  );
  const snapshots = (await (await fetch(`${server.url}/_emulator/snapshots`)).json()) as { data?: Array<{ name: string }> };
  t.same(snapshots.data ?? [], [], 'the uploaded root snapshot was deleted');
});
