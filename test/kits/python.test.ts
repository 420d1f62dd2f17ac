import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { CLI, ensureBuilt, PROJECT_ROOT, startServerProcess } from '../helpers/server-process.js';
import { plainCommand } from '../helpers/node-child.js';
import { runSuite } from '../helpers/suite-process.js';

// The Python kit (clients/python, docs/clients.md#python) as a user gets it: installed from the checkout with the
// documented command (a venv that sees the system's pytest, then pip without build isolation, so no package
// index is asked), then its scenario suite run with pytest -n 4 against ONE built server. Without a python3
// that has pytest, pytest-xdist and venv this is a skip, or a failure when REQUIRE_RECIPES=1 (.ci/run sets it
// once it has installed the toolchains; docs/recipes.md#in-ci).

const KIT = path.join(PROJECT_ROOT, 'clients', 'python');
const REQUIRED = process.env.REQUIRE_RECIPES === '1';
const SUITE_TIMEOUT_MS = 150_000;

t.setTimeout(240_000);

/** The environment of every child: no tap hook in NODE_OPTIONS (docs/architecture.md#child-processes-of-tests), no bytecode files. */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PYTHONDONTWRITEBYTECODE: '1', ...extra };
  delete env.NODE_OPTIONS;
  delete env.SANDBOX_LABEL;
  return env;
}

function run(command: string, args: string[], cwd = PROJECT_ROOT) {
  const result = spawnSync(...plainCommand(command, args), { cwd, env: childEnv(), encoding: 'utf8', timeout: 120_000 });
  return { ok: result.status === 0, output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? String(result.error) : ''}` };
}

/**
 * $PYTHON, else the first of python3 and /usr/bin/python3 (as docs/recipes/python/run.sh) with pytest, pytest-xdist,
 * ensurepip (Debian's python3-venv) and wheel (the build without isolation needs it).
 */
function findPython(): string | undefined {
  for (const candidate of [process.env.PYTHON, 'python3', '/usr/bin/python3']) {
    if (candidate && run(candidate, ['-c', 'import pytest, xdist, ensurepip, wheel']).ok) return candidate;
  }
  return undefined;
}

const python = findPython();
if (!python) {
  const reason = 'no python3 with pytest, pytest-xdist and venv (Debian: apt-get install python3-pytest python3-pytest-xdist python3-venv python3-wheel)';
  if (REQUIRED) t.fail(`${reason} (REQUIRE_RECIPES=1)`);
  else t.pass('clients/python', { skip: reason });
} else {
  await ensureBuilt();
  const server = await startServerProcess({ db: ':memory:' });
  const work = mkdtempSync(path.join(tmpdir(), 'service-sandbox-python-kit-'));
  t.teardown(async () => {
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  });

  // A copy of the kit, so the build pip runs in its folder (build/, *.egg-info) stays out of the checkout.
  const source = path.join(work, 'python');
  cpSync(KIT, source, { recursive: true, filter: (from) => !/(^|\/)(build|__pycache__|\.venv)$|\.egg-info$/.test(from) });
  const venv = path.join(work, 'venv');
  const venvPython = path.join(venv, 'bin', 'python');

  t.test('installs from the checkout with the documented command (docs/clients.md#python)', async (t) => {
    const started = Date.now();
    const made = run(python, ['-m', 'venv', '--system-site-packages', venv]);
    t.ok(made.ok, `python3 -m venv --system-site-packages: ${made.output}`);
    const installed = run(path.join(venv, 'bin', 'pip'), ['install', '--no-build-isolation', '--no-index', '-q', source]);
    t.ok(installed.ok, `pip install --no-build-isolation ./clients/python: ${installed.output}`);
    const imported = run(venvPython, ['-c', 'import service_sandbox, service_sandbox.plugin, importlib.metadata as m; print([e.value for e in m.entry_points(group="pytest11") if e.value.startswith("service_sandbox")])']);
    t.match(imported.output, /\['service_sandbox\.plugin'\]/, `the pytest plugin is registered as an entry point (${Date.now() - started} ms)`);
  });

  // The first test of docs/clients.md#python runs with the suite, so what the page shows works.
  const page = readFileSync(path.join(PROJECT_ROOT, 'docs', 'clients.md'), 'utf8');
  const section = page.slice(page.indexOf('\n## Python\n')).split(/\n## (?!Python\n)/)[0];
  const snippet = /```python\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  const docsTest = path.join(work, 'test_docs_clients.py');
  writeFileSync(docsTest, snippet);

  t.test('its scenario suite and the first test of docs/clients.md pass with pytest -n 4 against one server', async (t) => {
    t.match(snippet, /def test_/, 'docs/clients.md#python shows a test');
    const { code, output, ms } = await runSuite(venvPython, ['-m', 'pytest', '-n', '4', '-p', 'no:cacheprovider', '-q', '--tb=short', path.join(KIT, 'tests'), docsTest], {
      cwd: work,
      env: childEnv({ SANDBOX_URL: server.url, SANDBOX_CLI: CLI }),
      timeoutMs: SUITE_TIMEOUT_MS,
    });
    t.equal(code, 0, `pytest -n 4 clients/python/tests and the docs' test (${ms} ms)`, { output });
    t.match(output, /\b\d+ passed\b/, 'tests ran', { output });
    t.notMatch(output, /\b(failed|error|skipped)\b/, 'none failed, errored or skipped', { output });

    const sessions = (await (await fetch(`${server.url}/_emulator/sessions`)).json()) as { data: Array<{ id: string }> };
    t.same(sessions.data, [], 'every session of the run was ended');
  });

  t.test('with nothing at SANDBOX_URL, the four workers share one server the run starts and stops', async (t) => {
    // Eight tests, two per worker from the start: each notes its worker's pid and the server its session is on.
    const notes = path.join(work, 'workers.txt');
    writeFileSync(
      path.join(work, 'test_one_server.py'),
      [
        'import os, pytest',
        '@pytest.mark.parametrize("n", range(8))',
        'def test_worker(n, sandbox, sandbox_server):',
        '    assert sandbox.base_url.startswith(sandbox_server.url + "/_sessions/")',
        `    with open(${JSON.stringify(notes)}, "a") as out:`,
        '        out.write(f"{os.getpid()} {sandbox_server.url}\\n")',
        '',
      ].join('\n'),
    );
    // Port 9 (discard) answers nothing: the plugin starts the server with SANDBOX_CLI.
    const result = spawnSync(
      ...plainCommand(venvPython, ['-m', 'pytest', '-n', '4', '-p', 'no:cacheprovider', '-q', path.join(work, 'test_one_server.py')]),
      { cwd: work, env: childEnv({ SANDBOX_URL: 'http://127.0.0.1:9', SANDBOX_CLI: CLI }), encoding: 'utf8', timeout: 120_000 },
    );
    t.equal(result.status, 0, 'pytest -n 4 passes', { output: `${result.stdout}${result.stderr}` });
    const lines = readFileSync(notes, 'utf8').trim().split('\n').map((line) => line.split(' '));
    t.equal(lines.length, 8, 'every test ran');
    t.ok(new Set(lines.map(([pid]) => pid)).size > 1, `more than one worker process: ${JSON.stringify(lines)}`);
    const urls = [...new Set(lines.map(([, url]) => url))];
    t.equal(urls.length, 1, `one server for all of them: ${urls.join(', ')}`);
    t.not(urls[0], 'http://127.0.0.1:9', 'started by the run');
    const after = await fetch(`${urls[0]}/_emulator/health`).then(
      () => 'answers',
      () => 'gone',
    );
    t.equal(after, 'gone', 'and stopped at its end');
  });
}
