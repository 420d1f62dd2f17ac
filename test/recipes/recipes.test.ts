import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ensureBuilt, PROJECT_ROOT, startServerProcess } from '../helpers/server-process.js';
import { runSuite, type SuiteRun } from '../helpers/suite-process.js';

// Every recipe of docs/recipes.md runs here as a real test: docs/recipes/<language>/run.sh against ONE built
// server, each suite making a session per test (docs/recipes.md#how-sessions-isolate-tests). Exit code 77
// from run.sh means its toolchain is missing on this machine: a skip with its reason, or a failure when
// REQUIRE_RECIPES=1 (.ci/run sets it once it has installed the toolchains; docs/recipes.md#in-ci).

const RECIPES_DIR = path.join(PROJECT_ROOT, 'docs', 'recipes');
const TOOLCHAIN_MISSING = 77;
const REQUIRED = process.env.REQUIRE_RECIPES === '1';
/** Real ms one recipe may take before it is killed (a compile of the Java or Go suite included). */
const RECIPE_TIMEOUT_MS = 100_000;

// The recipes run one after the other (below); this bounds the whole file, the server's start included.
t.setTimeout(200_000);

function runRecipe(name: string, sandboxUrl: string): Promise<SuiteRun> {
  return runSuite('bash', [path.join(RECIPES_DIR, name, 'run.sh')], {
    cwd: path.join(RECIPES_DIR, name),
    env: { ...process.env, SANDBOX_URL: sandboxUrl },
    timeoutMs: RECIPE_TIMEOUT_MS,
  });
}

/** The last non-empty line a skipped recipe printed: its reason. */
function lastLine(output: string): string {
  return (
    output
      .trim()
      .split('\n')
      .filter((line) => line.trim() !== '')
      .pop() ?? 'no reason given'
  );
}

await ensureBuilt();
const server = await startServerProcess({ db: ':memory:' });
t.teardown(() => server.stop());

const recipes = readdirSync(RECIPES_DIR, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(path.join(RECIPES_DIR, entry.name, 'run.sh')))
  .map((entry) => entry.name)
  .sort();

t.test('the recipes the docs promise are all here', async (t) => {
  for (const name of ['go', 'java', 'python', 'shell']) t.ok(recipes.includes(name), `docs/recipes/${name}/run.sh exists`);
});

// One recipe at a time: each suite already runs its tests in parallel, and on a 2-core machine running the
// suites side by side took as long in all (about 25 s) while each suite's own figure got three times worse.
for (const name of recipes) {
  t.test(`docs/recipes/${name}`, async (t) => {
    const run = await runRecipe(name, server.url);
    if (run.code === TOOLCHAIN_MISSING) {
      const reason = `${name}: toolchain missing: ${lastLine(run.output)}`;
      if (REQUIRED) t.fail(`${reason} (REQUIRE_RECIPES=1)`, { output: run.output });
      else t.pass(`docs/recipes/${name}/run.sh`, { skip: reason });
      return;
    }
    t.equal(run.code, 0, `docs/recipes/${name}/run.sh passes against one server (${run.ms} ms)`, { output: run.output, signal: run.signal });
  });
}

t.test('every suite deleted the sessions it made', async (t) => {
  const response = await fetch(`${server.url}/_emulator/sessions`);
  const body = (await response.json()) as { data?: Array<{ id: string }> };
  t.equal(response.status, 200, 'GET /_emulator/sessions answers', { body });
  t.same(
    (body.data ?? []).map((session) => session.id),
    [],
    'no session is left live',
  );
});
