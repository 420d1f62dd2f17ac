import { spawn } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { ensureBuilt, PROJECT_ROOT, startServerProcess } from '../helpers/server-process.js';
import { plainNode } from '../helpers/node-child.js';

// The Python kit installed by name (docs/clients.md#python): scripts/publish/python.mjs builds its wheel and sdist,
// serves them as a PEP 503 index over HTTP, installs `service-sandbox==<version>` with pip in a scratch project and
// venv outside the checkout, and runs the first test of docs/clients.md#python there against ONE built server.
// Exit 77 is the script's skip (a toolchain is missing: Debian's python3 with setuptools and wheel, a python3 with
// venv and pytest); a failure instead when REQUIRE_RECIPES=1 (docs/recipes.md#in-ci).

const SCRIPT = path.join(PROJECT_ROOT, 'scripts', 'publish', 'python.mjs');
const REQUIRED = process.env.REQUIRE_RECIPES === '1';
const SKIP = 77;

// A bound, not a timed assertion: venv creation (ensurepip) alone can take minutes on a loaded 2-core machine.
t.setTimeout(600_000);

await ensureBuilt();
const server = await startServerProcess({ db: ':memory:' });
t.teardown(() => server.stop());

const env: NodeJS.ProcessEnv = { ...process.env };
delete env.NODE_OPTIONS;
const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
  const child = spawn(...plainNode([SCRIPT, '--server', server.url]), { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.on('close', (exitCode) => resolve({ code: exitCode, output: text }));
});

if (code === SKIP && !REQUIRED) {
  t.pass('scripts/publish/python.mjs', { skip: /skip: (.*)/.exec(output)?.[1] ?? output.trim() });
} else {
  t.equal(code, 0, 'node scripts/publish/python.mjs --server URL', { output });
  t.match(output, /built service[-_]sandbox-0\.2\.0\.tar\.gz and service_sandbox-0\.2\.0-py3-none-any\.whl/, 'a wheel and an sdist', { output });
  t.match(output, /install time: \d+\.\d s \(pip install --index-url http:\/\/127\.0\.0\.1:\d+\/simple service-sandbox==0\.2\.0\)/, 'installed by name from the stand-in index', { output });
  t.comment(/install time: [^\n]*/.exec(output)?.[0] ?? 'no install time printed');
  t.match(output, /first test: passed/, "the docs' first test passed in the scratch project", { output });
}
