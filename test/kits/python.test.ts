import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { CLI, ensureBuilt, PROJECT_ROOT, startServerProcess } from '../helpers/server-process.js';
import { plainCommand } from '../helpers/node-child.js';
import { runSuite } from '../helpers/suite-process.js';

// The Python kit (clients/python, docs/clients.md#python): installed from the checkout (a venv that sees the
// system's pytest, then pip without build isolation, so no package index is asked; the install by name from an
// index is test/kits/python-install.test.ts), then its suite (the shared signing vectors, the scenarios, the app
// under test fed through the kit's own forwarding) run with pytest -n 4 against ONE built server, the settings from
// an ini file and the command line, and Debian's mypy --strict over the kit. Without a python3 that has pytest,
// pytest-xdist and venv this is a skip, or a failure when REQUIRE_RECIPES=1 (.ci/run sets it once it has installed
// the toolchains; docs/recipes.md#in-ci).

const KIT = path.join(PROJECT_ROOT, 'clients', 'python');
const REQUIRED = process.env.REQUIRE_RECIPES === '1';
const SUITE_TIMEOUT_MS = 150_000;

// Generous: the install, the suite and two mypy runs on a loaded 2-core machine (bounds, not timed assertions).
t.setTimeout(480_000);

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

  t.test('installs from the checkout without an index (docs/clients.md#python)', async (t) => {
    const started = Date.now();
    const made = run(python, ['-m', 'venv', '--system-site-packages', venv]);
    t.ok(made.ok, `python3 -m venv --system-site-packages: ${made.output}`);
    const installed = run(path.join(venv, 'bin', 'pip'), ['install', '--no-build-isolation', '--no-index', '-q', source]);
    t.ok(installed.ok, `pip install --no-build-isolation --no-index ./clients/python: ${installed.output}`);
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

  t.test('settings from the ini file and the command line, before the environment; root forwarding stops after its test', async (t) => {
    const project = path.join(work, 'settings');
    mkdirSync(project);
    writeFileSync(path.join(project, 'pytest.ini'), `[pytest]\nsandbox_url = ${server.url}\n`);
    writeFileSync(
      path.join(project, 'test_settings.py'),
      [
        'def test_settings(sandbox_server, sandbox_label, sandbox):',
        `    assert sandbox_server.url == ${JSON.stringify(server.url)}`,
        '    assert sandbox_label == "from-the-command-line"',
        '    assert sandbox.base_url.startswith(sandbox_server.url + "/_sessions/")',
        '',
        '# A root-sandbox forwarder a test starts is stopped at its teardown by the plugin.',
        'FORWARDERS = []',
        'def test_starts_root_forwarding(sandbox_server):',
        '    FORWARDERS.append(sandbox_server.forward_webhooks("http://127.0.0.1:9/hooks"))',
        '    assert FORWARDERS[0].running',
        'def test_it_stopped_after_that_test():',
        '    assert not FORWARDERS[0].running',
        '',
      ].join('\n'),
    );
    // No SANDBOX_URL: the ini file names the server; SANDBOX_LABEL loses to --sandbox-label.
    const env = childEnv({ SANDBOX_LABEL: 'from-the-environment' });
    delete env.SANDBOX_URL;
    const result = spawnSync(...plainCommand(venvPython, ['-m', 'pytest', '-p', 'no:cacheprovider', '-q', '--sandbox-label', 'from-the-command-line', 'test_settings.py']), {
      cwd: project,
      env,
      encoding: 'utf8',
      timeout: 120_000,
    });
    t.equal(result.status, 0, 'pytest with pytest.ini and --sandbox-label passes (and a root forwarder stops after its test)', { output: `${result.stdout}${result.stderr}` });
  });

  t.test("Debian's mypy --strict: the kit is clean, and an installed kit's models reach the user's mypy", async (t) => {
    const mypy = '/usr/bin/mypy';
    if (!existsSync(mypy)) {
      if (REQUIRED) t.fail(`no ${mypy} (Debian: apt-get install mypy) (REQUIRE_RECIPES=1)`);
      else t.pass('mypy', { skip: `no ${mypy} (Debian: apt-get install mypy)` });
      return;
    }
    const cache = path.join(work, 'mypy-cache');
    const strict = spawnSync(...plainCommand(mypy, ['--cache-dir', cache, 'src/service_sandbox', 'tests/app_under_test.py']), {
      cwd: source,
      env: childEnv({ MYPYPATH: path.join(source, 'src') }),
      encoding: 'utf8',
      timeout: 180_000,
    });
    t.equal(strict.status, 0, 'mypy --strict (clients/python/pyproject.toml [tool.mypy]) over src/service_sandbox', { output: `${strict.stdout}${strict.stderr}` });
    // py.typed: the user's mypy, pointed at the venv, checks code against the generated TypedDicts.
    const user = path.join(work, 'typed_use.py');
    writeFileSync(user, ['from service_sandbox import Session, models', '', 'def status(session: Session, txn: str) -> str:', '    found: models.Transaction = session.get(f"/v1/transactions/{txn}").json()', '    return str(found["statuss"])', ''].join('\n'));
    const typed = spawnSync(...plainCommand(mypy, ['--cache-dir', cache, '--python-executable', venvPython, '--strict', user]), { cwd: work, env: childEnv(), encoding: 'utf8', timeout: 180_000 });
    t.match(`${typed.stdout}`, /TypedDict "Transaction" has no key "statuss"/, "the user's mypy sees service_sandbox.models through py.typed", { output: `${typed.stdout}${typed.stderr}` });
    t.equal(typed.stdout.match(/error:/g)?.length, 1, 'and nothing else', { output: typed.stdout });
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
