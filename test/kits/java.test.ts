import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { plainNode } from '../helpers/node-child.js';
import { runSuite } from '../helpers/suite-process.js';
import { ensureBuilt, PROJECT_ROOT, startServerProcess } from '../helpers/server-process.js';

// The Java kit (docs/clients.md#java): its generated records match openapi/openapi.json (and the check fails when
// they drift), its API docs build with every javadoc check clean, and its suite (clients/java/src/test: the shared
// signing vectors, the JSON parser, the version warning, forwarding into an app's own endpoint, the scenarios; JUnit 5
// running tests concurrently) passes against ONE built server, ending every session it made. `clients/java/build.sh test` exits 77 when the JDK or JUnit's
// console launcher is missing: a skip, or a failure with REQUIRE_RECIPES=1 (.ci/run sets it once the toolchains
// are installed; docs/recipes.md#in-ci).

const KIT = path.join(PROJECT_ROOT, 'clients', 'java');
const GENERATOR = path.join(PROJECT_ROOT, 'scripts', 'java-models.mjs');
const TOOLCHAIN_MISSING = 77;
const REQUIRED = process.env.REQUIRE_RECIPES === '1' || process.env.REQUIRE_KITS === '1';
/** Real ms the compile and the suite may take before they are killed. */
const SUITE_TIMEOUT_MS = 150_000;

// Five parts, three of them JVM runs (javadoc, the suite, the forwarding tests again with an admin token).
t.setTimeout(600_000);

function generator(args: string[]): { status: number | null; output: string } {
  const run = spawnSync(...plainNode([GENERATOR, ...args]), { cwd: PROJECT_ROOT, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

t.test('the generated records match openapi/openapi.json', async (t) => {
  const check = generator(['--check']);
  t.equal(check.status, 0, 'node scripts/java-models.mjs --check passes', { output: check.output });
});

t.test('the check fails when the document changes under the records', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'java-models-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const document = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'openapi', 'openapi.json'), 'utf8')) as {
    components: { schemas: Record<string, { properties: Record<string, unknown>; required?: string[] }> };
  };
  const out = path.join(dir, 'model');
  const changed = path.join(dir, 'openapi.json');
  writeFileSync(changed, JSON.stringify(document));
  t.equal(generator(['--openapi', changed, '--out', out]).status, 0, 'generates into a folder of its own');
  t.equal(generator(['--openapi', changed, '--out', out, '--check']).status, 0, 'which then checks clean');

  document.components.schemas.Account!.properties.nickname = { type: 'string' };
  delete document.components.schemas.User!.properties.email;
  writeFileSync(changed, JSON.stringify(document));
  const drift = generator(['--openapi', changed, '--out', out, '--check']);
  t.equal(drift.status, 1, 'a property added to Account and one removed from User: the check fails');
  t.match(drift.output, /Account\.java/, 'naming Account.java');
  t.match(drift.output, /User\.java/, 'and User.java');

  writeFileSync(path.join(out, 'Stale.java'), 'class Stale {}\n');
  t.equal(generator(['--openapi', changed, '--out', out]).status, 0, 'regenerating');
  t.equal(generator(['--openapi', changed, '--out', out, '--check']).status, 0, 'fixes it, and removes a file no schema gives');
  t.match(readFileSync(path.join(out, 'Account.java'), 'utf8'), /String nickname\)/, 'the new property is a record component');
});

t.test('javadoc of both artifacts is clean: no error, no warning', async (t) => {
  const buildDir = mkdtempSync(path.join(os.tmpdir(), 'java-kit-doc-'));
  t.teardown(() => rmSync(buildDir, { recursive: true, force: true }));
  const { code, output } = await runSuite('bash', [path.join(KIT, 'build.sh'), 'javadoc'], {
    cwd: KIT,
    env: { ...process.env, BUILD_DIR: buildDir },
    timeoutMs: SUITE_TIMEOUT_MS,
  });
  if (code === TOOLCHAIN_MISSING) {
    const reason = `java kit: toolchain missing: ${output.trim().split('\n').pop()}`;
    if (REQUIRED) t.fail(`${reason} (REQUIRE_RECIPES=1)`, { output });
    else t.pass('clients/java/build.sh javadoc', { skip: reason });
    return;
  }
  t.equal(code, 0, 'clients/java/build.sh javadoc passes', { output });
  t.notMatch(output, /(warning|error):/, 'javadoc said nothing');
});

t.test('the suite passes, concurrently, against one server', async (t) => {
  await ensureBuilt();
  const server = await startServerProcess({ db: ':memory:' });
  t.teardown(() => server.stop());
  const buildDir = mkdtempSync(path.join(os.tmpdir(), 'java-kit-'));
  t.teardown(() => rmSync(buildDir, { recursive: true, force: true }));

  const { code, output, ms } = await runSuite('bash', [path.join(KIT, 'build.sh'), 'test'], {
    cwd: KIT,
    env: { ...process.env, SANDBOX_URL: server.url, BUILD_DIR: buildDir, SANDBOX_LABEL: `java-kit-${process.pid}` },
    timeoutMs: SUITE_TIMEOUT_MS,
  });
  if (code === TOOLCHAIN_MISSING) {
    const reason = `java kit: toolchain missing: ${output.trim().split('\n').pop()}`;
    if (REQUIRED) t.fail(`${reason} (REQUIRE_RECIPES=1)`, { output });
    else t.pass('clients/java/build.sh test', { skip: reason });
    return;
  }
  t.equal(code, 0, `clients/java/build.sh test passes against one server (${ms} ms)`, { output });
  const successful = Number(/\[\s*(\d+) tests successful\s*\]/.exec(output)?.[1] ?? 0);
  t.ok(successful >= 26, `every test ran (${successful} tests successful)`, { output });
  t.match(output, /SigningVectorsTest/, 'the shared signing vectors ran');
  t.match(output, /ForwardingTest/, 'forwarding into an app with its own endpoint ran');
  t.match(output, /\[\s*0 tests failed\s*\]/, 'none failed');

  const sessions = await fetch(`${server.url}/_emulator/sessions`);
  const body = (await sessions.json()) as { data?: Array<{ id: string }> };
  t.same((body.data ?? []).map((session) => session.id), [], 'the suite ended every session it made');
  const snapshots = (await (await fetch(`${server.url}/_emulator/snapshots`)).json()) as { data?: Array<{ name: string }> };
  t.same((snapshots.data ?? []).map((snapshot) => snapshot.name), [], 'and removed the snapshot it uploaded to the root');
});

t.test('forwarding keeps the admin token: the forwarding tests pass against a server with --admin-token', async (t) => {
  await ensureBuilt();
  const token = `java-admin-${process.pid}`;
  const server = await startServerProcess({ db: ':memory:', extraArgs: ['--admin-token', token] });
  t.teardown(() => server.stop());
  const buildDir = mkdtempSync(path.join(os.tmpdir(), 'java-kit-admin-'));
  t.teardown(() => rmSync(buildDir, { recursive: true, force: true }));

  const { code, output } = await runSuite('bash', [path.join(KIT, 'build.sh'), 'test', '--select-class', 'dev.servicesandbox.scenarios.ForwardingTest'], {
    cwd: KIT,
    env: { ...process.env, SANDBOX_URL: server.url, SANDBOX_ADMIN_TOKEN: token, BUILD_DIR: buildDir, SANDBOX_LABEL: `java-kit-admin-${process.pid}` },
    timeoutMs: SUITE_TIMEOUT_MS,
  });
  if (code === TOOLCHAIN_MISSING) {
    const reason = `java kit: toolchain missing: ${output.trim().split('\n').pop()}`;
    if (REQUIRED) t.fail(`${reason} (REQUIRE_RECIPES=1)`, { output });
    else t.pass('clients/java/build.sh test (admin token)', { skip: reason });
    return;
  }
  t.equal(code, 0, 'the stream and every result carried the token (a result refused 401 would leave a delivery undelivered)', { output });
  t.match(output, /\[\s*4 tests successful\s*\]/, 'all four forwarding tests ran');
  const refused = await fetch(`${server.url}/_emulator/sessions`);
  t.equal(refused.status, 401, 'the control plane refuses a call without the token');
});
