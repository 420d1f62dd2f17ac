#!/usr/bin/env node
// Publishes the Python kit to a stand-in package index and installs it by name, as a user would
// (docs/clients.md#python): builds the wheel and the sdist of clients/python with
// Debian's /usr/bin/python3 (setuptools and wheel; PYTHON_BUILD overrides), lays out a PEP 503 simple index in a
// temporary folder and serves it over HTTP on a free port, makes a scratch project and a virtual environment outside
// the checkout, runs `pip install --index-url http://127.0.0.1:PORT/simple service-sandbox==VERSION` there (pip takes
// the wheel: nothing but pip is needed in the user's Python), then a first pytest test (the first example of
// docs/clients.md#python) against a server: --server URL, or the built dist/service-sandbox.mjs started here.
// Prints the install time. Exit 77 (skip) with the reason when a toolchain is missing; test/kits/python-install.test.ts
// runs it in npm test.
//
// usage: node scripts/publish/python.mjs [--server URL] [--keep]

import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const KIT = path.join(ROOT, 'clients', 'python');
const NAME = 'service-sandbox';
const SKIP = 77;

function argument(name) {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
}

/** The environment of every child: no tap hook, no bytecode files, no pip version check, no user config. */
const childEnv = (extra = {}) => {
  const env = { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_CONFIG_FILE: '/dev/null', ...extra };
  for (const name of ['NODE_OPTIONS', 'PIP_INDEX_URL', 'PIP_EXTRA_INDEX_URL', 'PIP_FIND_LINKS', 'SANDBOX_LABEL', 'SANDBOX_CLI', 'VIRTUAL_ENV']) delete env[name];
  return env;
};

/** For the checks before anything is served. */
function runSync(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', env: childEnv(options.env), cwd: options.cwd, timeout: options.timeoutMs ?? 300_000 });
  return { ok: result.status === 0, output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? String(result.error) : ''}` };
}

/** A child that does not hold this process's event loop (the index is served from it). */
function run(command, args, options = {}) {
  return new Promise((resolve) => {
    let output = '';
    const child = spawn(command, args, { env: childEnv(options.env), cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 300_000);
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => (output += String(error)));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ ok: code === 0, output: signal ? `${output}\n(${signal})` : output });
    });
  });
}

class Failure extends Error {}

/** Stops the run: the finally blocks stop the index and the server and remove the temporary folders. */
function fail(message) {
  throw new Failure(message);
}

function skip(reason) {
  process.stderr.write(`publish/python: skip: ${reason}\n`);
  process.exit(SKIP);
}

/** The kit's version, from its pyproject.toml. */
function kitVersion() {
  const match = /^version = "([^"]+)"/m.exec(readFileSync(path.join(KIT, 'pyproject.toml'), 'utf8'));
  if (!match) fail('no version in clients/python/pyproject.toml');
  return match[1];
}

/** The Python that builds: setuptools and wheel (Debian's python3-setuptools, python3-wheel). */
function buildPython() {
  for (const candidate of [process.env.PYTHON_BUILD, '/usr/bin/python3', 'python3']) {
    if (candidate && runSync(candidate, ['-c', 'import setuptools.build_meta, wheel']).ok) return candidate;
  }
  return skip('no python3 with setuptools and wheel to build the wheel (Debian: apt-get install python3-setuptools python3-wheel)');
}

/** The user's Python: makes a venv, has pip (its own or ensurepip's) and sees pytest (the scratch project's test runner). */
function userPython() {
  for (const candidate of [process.env.PYTHON, 'python3', '/usr/bin/python3']) {
    if (candidate && runSync(candidate, ['-c', 'import importlib.util as u, pytest, venv; assert u.find_spec("pip") or u.find_spec("ensurepip")']).ok) return candidate;
  }
  return skip('no python3 with venv, pip and pytest (Debian: apt-get install python3-venv python3-pip python3-pytest)');
}

/** Builds the sdist and the wheel of a copy of the kit (so build/ and *.egg-info stay out of the checkout). */
async function build(python, work) {
  const source = path.join(work, 'source');
  cpSync(KIT, source, { recursive: true, filter: (from) => !/(^|\/)(build|dist|__pycache__|\.venv|\.mypy_cache)$|\.egg-info$/.test(from) });
  const out = path.join(work, 'dist');
  mkdirSync(out);
  const built = await run(python, ['-c', 'import sys, setuptools.build_meta as b; out = sys.argv[1]; print(b.build_sdist(out)); print(b.build_wheel(out))', out], { cwd: source });
  if (!built.ok) fail(`building the sdist and wheel failed:\n${built.output}`);
  const files = readdirSync(out);
  if (!files.some((file) => file.endsWith('.whl')) || !files.some((file) => file.endsWith('.tar.gz'))) fail(`expected a wheel and an sdist, got ${files.join(', ')}:\n${built.output}`);
  return files.map((file) => path.join(out, file));
}

/** A PEP 503 simple index: /simple/ lists the project, /simple/service-sandbox/ links each file with its sha256. */
function layOutIndex(files, work) {
  const simple = path.join(work, 'index', 'simple');
  const project = path.join(simple, NAME);
  mkdirSync(project, { recursive: true });
  const links = files.map((file) => {
    const name = path.basename(file);
    const bytes = readFileSync(file);
    writeFileSync(path.join(project, name), bytes);
    return `<a href="${name}#sha256=${createHash('sha256').update(bytes).digest('hex')}" data-requires-python="&gt;=3.9">${name}</a><br>`;
  });
  writeFileSync(path.join(simple, 'index.html'), `<!DOCTYPE html>\n<html><body><a href="${NAME}/">${NAME}</a></body></html>\n`);
  writeFileSync(path.join(project, 'index.html'), `<!DOCTYPE html>\n<html><body>\n${links.join('\n')}\n</body></html>\n`);
  return path.join(work, 'index');
}

/** Serves the index folder (GET only, no listing beyond index.html) on 127.0.0.1 and a free port. */
async function serve(folder) {
  const server = createServer((request, response) => {
    let relative = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname);
    if (relative.endsWith('/')) relative += 'index.html';
    const file = path.join(folder, path.normalize(relative));
    if (!file.startsWith(folder) || !existsSync(file)) {
      response.writeHead(404).end('not found');
      return;
    }
    const type = file.endsWith('.html') ? 'text/html' : 'application/octet-stream';
    response.writeHead(200, { 'content-type': type }).end(readFileSync(file));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${server.address().port}` };
}

async function freePort() {
  const probe = createNetServer();
  await new Promise((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** The built server on a free port, frozen at the kits' default instant; resolves once its health check answers. */
async function startServer() {
  const cli = path.join(ROOT, 'dist', 'service-sandbox.mjs');
  if (!existsSync(cli)) fail('dist/service-sandbox.mjs is missing: run npm run build, or pass --server URL');
  const port = await freePort();
  const child = spawn(process.execPath, [cli, '--port', String(port), '--host', '127.0.0.1', '--db', ':memory:', '--log-level', 'warn'], { env: childEnv(), stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/_emulator/health`)).ok) return { url, stop: () => child.kill('SIGTERM') };
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || Date.now() > deadline) fail(`the server did not answer on ${url}`);
    await sleep(100);
  }
}

/** The first ```python block of docs/clients.md#python: the test a user writes first. */
function firstDocsTest() {
  const page = readFileSync(path.join(ROOT, 'docs', 'clients.md'), 'utf8');
  const section = page.slice(page.indexOf('\n## Python\n')).split(/\n## (?!Python\n)/)[0];
  const snippet = /```python\n([\s\S]*?)```/.exec(section)?.[1];
  if (!snippet || !/def test_/.test(snippet)) fail('docs/clients.md#python shows no test');
  return snippet;
}

const version = kitVersion();
const builder = buildPython();
const python = userPython();
const work = mkdtempSync(path.join(tmpdir(), 'service-sandbox-publish-python-'));
const scratch = mkdtempSync(path.join(tmpdir(), 'service-sandbox-scratch-python-'));
let index;
let server;
try {
  await publishAndInstall();
} catch (error) {
  if (!(error instanceof Failure)) throw error;
  process.stderr.write(`publish/python: ${error.message}\n`);
  process.exitCode = 1;
} finally {
  server?.stop();
  index?.server.close();
  if (!process.argv.includes('--keep')) {
    rmSync(work, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function publishAndInstall() {
  const files = await build(builder, work);
  process.stdout.write(`built ${files.map((file) => path.basename(file)).join(' and ')}\n`);
  index = await serve(layOutIndex(files, work));
  process.stdout.write(`index: ${index.url}/simple/\n`);

  // The scratch project: its own venv (pytest from the system's site packages), no checkout.
  const venv = path.join(scratch, '.venv');
  // Without ensurepip's copy of pip when the Python's own pip is visible (minutes on a loaded machine otherwise).
  let made = await run(python, ['-m', 'venv', '--system-site-packages', '--without-pip', venv]);
  if (made.ok && !(await run(path.join(venv, 'bin', 'python'), ['-m', 'pip', '--version'])).ok) {
    rmSync(venv, { recursive: true, force: true });
    made = await run(python, ['-m', 'venv', '--system-site-packages', venv]);
  }
  if (!made.ok) fail(`python3 -m venv: ${made.output}`);
  const started = performance.now();
  const installed = await run(path.join(venv, 'bin', 'python'), ['-m', 'pip', 'install', '--no-cache-dir', '--index-url', `${index.url}/simple`, `${NAME}==${version}`], { cwd: scratch });
  const seconds = (performance.now() - started) / 1000;
  if (!installed.ok) fail(`pip install ${NAME}==${version} from the stand-in index failed:\n${installed.output}`);
  if (!installed.output.includes(`service_sandbox-${version}-py3-none-any.whl`)) fail(`pip did not take the wheel:\n${installed.output}`);
  process.stdout.write(`install time: ${seconds.toFixed(1)} s (pip install --index-url ${index.url}/simple ${NAME}==${version})\n`);

  const checked = await run(path.join(venv, 'bin', 'python'), ['-c', 'import pathlib, service_sandbox as s; print(s.__version__, s.__file__, (pathlib.Path(s.__file__).parent / "py.typed").exists())'], { cwd: scratch });
  if (!checked.ok || !checked.output.startsWith(`${version} ${venv}`) || !checked.output.trim().endsWith('True')) fail(`the installed package is not the published one: ${checked.output}`);

  server = argument('--server') ? { url: argument('--server').replace(/\/+$/, ''), stop: () => undefined } : await startServer();
  writeFileSync(path.join(scratch, 'test_first.py'), firstDocsTest());
  const tested = await run(path.join(venv, 'bin', 'python'), ['-m', 'pytest', '-p', 'no:cacheprovider', '-q', 'test_first.py'], { cwd: scratch, env: { SANDBOX_URL: server.url }, timeoutMs: 300_000 });
  if (!tested.ok || !/\b1 passed\b/.test(tested.output)) fail(`the first test failed in the scratch project:\n${tested.output}`);
  process.stdout.write(`first test: passed in ${scratch} against ${server.url}\n`);
}
