import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { XMLParser } from 'fast-xml-parser';
import { loadScenario } from '../../src/scenarios/scenario.load.js';
import { keyBookFromFixtures } from '../../src/scenarios/scenario.keys.js';
import { runScenario, type StepResult } from '../../src/scenarios/scenario.run.js';
import { injectTransport } from '../../src/scenarios/scenario.transport.js';
import { buildTestApp, json } from '../helper.js';
import { CLI, ensureBuilt, PROJECT_ROOT } from '../helpers/server-process.js';
import { plainNode } from '../helpers/node-child.js';

// Every shipped scenario (docs/scenarios.md#shipped-scenarios) runs to its end, twice: through the built CLI
// (`service-sandbox run`, exit code 0, with a JUnit report parsed back), and in process through the engine over
// app.inject in a session made with the file's seed and clock. The files are listed from the folder, so a file
// added later is covered without touching this test. (Running them through POST /_emulator/sessions with
// `scenario` is test/sessions/sessions-scenario.test.ts.)

const SCENARIOS_DIR = path.join(PROJECT_ROOT, 'scenarios');
const FILES = readdirSync(SCENARIOS_DIR)
  .filter((name) => /\.(ya?ml|json)$/.test(name))
  .sort();

/** A webhook receiver answering 204, for files with `webhooks: { receiver: true }` (docs/scenarios.md#format). */
async function startReceiver(): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.statusCode = 204;
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, server };
}

/** The examples of docs/scenarios.md#shipped-scenarios: each step captioned, so a play shows every one. */
const EXAMPLES = [
  'onboarding-business-active.yaml',
  'deposit-settles.yaml',
  'eur-payout-pacs008.yaml',
  'failed-payout-and-return.yaml',
  'ambiguous-commit-retried.yaml',
  'duplicate-webhooks-under-chaos.yaml',
  'statement-pdf.yaml',
];

t.test('the shipped folder holds the scenarios the guide lists', async (t) => {
  for (const name of EXAMPLES) t.ok(FILES.includes(name), name);
  const guide = readFileSync(path.join(PROJECT_ROOT, 'docs', 'scenarios.md'), 'utf8');
  for (const file of FILES) {
    const text = readFileSync(path.join(SCENARIOS_DIR, file), 'utf8');
    const loaded = loadScenario(text, `scenarios/${file}`);
    t.equal(`${loaded.scenario.name}${path.extname(file)}`, file, `${file}: the name is the file's name`);
    t.ok(guide.includes(`(../scenarios/${file})`), `${file} is described in docs/scenarios.md#shipped-scenarios`);
    if (file.endsWith('.yaml')) t.match(text, /^# yaml-language-server: \$schema=\.\.\/schemas\/scenario\.schema\.json\n/, `${file}: the schema line`);
    t.ok(loaded.scenario.seed, `${file}: a seed, so every run gives the same ids`);
    t.match(loaded.scenario.clock, /^\d{4}-\d{2}-\d{2}T/, `${file}: a frozen clock`);
    // a played step is a captioned step and the uncaptioned ones after it (docs/scenarios.md#in-the-dashboard)
    t.ok(loaded.scenario.steps[0]!.caption, `${file}: the first step has a caption`);
    if (EXAMPLES.includes(file)) loaded.scenario.steps.forEach((step, index) => t.ok(step.caption, `${file}: step ${index + 1} has a caption`));
  }
});

/** GitHub's anchor of a heading (as test/docs/docs-citations.test.ts computes it), outside fenced code. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) anchors.add(heading[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-'));
  }
  return anchors;
}

t.test('the docs a shipped scenario cites exist, anchors included', async (t) => {
  // test/docs/docs-citations.test.ts scans the code and test trees; the scenario files' comments are checked here
  for (const file of FILES) {
    const text = readFileSync(path.join(SCENARIOS_DIR, file), 'utf8');
    for (const [, page, anchor] of text.matchAll(/\b(docs\/[a-z0-9-]+\.md)(?:#([a-z0-9-]+))?/g)) {
      const markdown = readFileSync(path.join(PROJECT_ROOT, page!), 'utf8');
      if (anchor) t.ok(anchorsOf(markdown).has(anchor), `${file}: ${page}#${anchor}`);
    }
  }
});

/** Run a scenario in process: a session made with its seed, clock and fixtures, the engine over app.inject. */
async function runInProcess(t: Test, text: string, file: string, receiverUrl: string): Promise<void> {
  const loaded = loadScenario(text, file);
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const { seed, clock, fixtures } = loaded.scenario;
  const inline: unknown = typeof fixtures === 'string' ? JSON.parse(readFileSync(path.resolve(SCENARIOS_DIR, fixtures), 'utf8')) : fixtures;
  const created = await sandbox.app.inject({
    method: 'POST',
    url: '/_emulator/sessions',
    payload: { ...(seed ? { seed } : {}), ...(clock ? { clock } : {}), ...(inline ? { fixtures: inline } : {}) },
  });
  t.equal(created.statusCode, 201, `a session with the file's seed and clock: ${created.statusCode === 201 ? '' : created.body}`);
  const session = json<{ id: string }>(created);
  const transport = injectTransport(sandbox.app, `/_sessions/${session.id}`, {}, async () => receiverUrl);
  const keys = keyBookFromFixtures(inline ?? sandbox.ctx.fixtures);
  if (!keys) throw new Error(`${file}: its fixtures give no keys`);
  const result = await runScenario(transport, loaded, keys);
  t.ok(result.passed, result.failure ? `${file}:${result.failure.line}:${result.failure.column}: ${result.failure.message}` : 'passed');
  t.equal(result.steps.length, loaded.scenario.steps.length, 'every step ran');
  t.ok(result.steps.every((step: StepResult) => step.passed), 'every step passed');
}

t.test('every shipped scenario runs to its end in process, through the engine', async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => new Promise<void>((resolve) => receiver.server.close(() => resolve())));
  for (const file of FILES) {
    await t.test(file, (t) => runInProcess(t, readFileSync(path.join(SCENARIOS_DIR, file), 'utf8'), `scenarios/${file}`, receiver.url));
  }
});

t.test("the guide's first scenario (docs/scenarios.md#your-first-scenario) runs to its end as printed", async (t) => {
  const guide = readFileSync(path.join(PROJECT_ROOT, 'docs', 'scenarios.md'), 'utf8');
  const section = guide.slice(guide.indexOf('## Your first scenario'));
  const yaml = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
  if (!yaml) throw new Error('docs/scenarios.md#your-first-scenario has no yaml block');
  const receiver = await startReceiver();
  t.teardown(() => new Promise<void>((resolve) => receiver.server.close(() => resolve())));
  await runInProcess(t, yaml, 'first-payout.yaml', receiver.url);
});

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(args: string[]): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(...plainNode([CLI, 'run', ...args]), { cwd: PROJECT_ROOT, env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

t.test('every shipped scenario runs to its end through the built CLI, with a JUnit report', async (t) => {
  await ensureBuilt();
  const directory = mkdtempSync(path.join(tmpdir(), 'sandbox-scenarios-'));
  t.teardown(() => rmSync(directory, { recursive: true, force: true }));
  const junitFile = path.join(directory, 'scenarios.junit.xml');

  // one command, every file: one server started for the run, a fresh session per file (docs/scenarios.md#running)
  const run = await runCli([...FILES.map((file) => `scenarios/${file}`), '--junit', junitFile]);
  t.equal(run.code, 0, `exit 0\n${run.stdout}\n${run.stderr}`);

  // the JUnit report, parsed back: one suite per file, one case per step, no failure
  const report = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => name === 'testsuite' || name === 'testcase' || name === 'failure' }).parse(readFileSync(junitFile, 'utf8'));
  const suites: Array<Record<string, any>> = report.testsuites.testsuite;
  t.equal(suites.length, FILES.length, 'one testsuite per file');
  for (const file of FILES) {
    const loaded = loadScenario(readFileSync(path.join(SCENARIOS_DIR, file), 'utf8'), `scenarios/${file}`);
    const suite = suites.find((candidate) => candidate.name === loaded.scenario.name || String(candidate.file ?? '').endsWith(file));
    if (!suite) {
      t.fail(`${file}: no testsuite in the report`);
      continue;
    }
    t.equal(Number(suite.failures ?? 0), 0, `${file}: no failures`);
    t.equal(Number(suite.errors ?? 0), 0, `${file}: no errors`);
    t.equal(suite.testcase.length, loaded.scenario.steps.length, `${file}: one testcase per step`);
    t.notOk(suite.testcase.some((testcase: Record<string, unknown>) => testcase.failure), `${file}: no testcase failed`);
  }
});
