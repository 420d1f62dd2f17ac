import path from 'node:path';
import t from 'tap';
import { plainNode } from '../helpers/node-child.js';
import { runSuite } from '../helpers/suite-process.js';
import { ensureBuilt, PROJECT_ROOT, startServerProcess } from '../helpers/server-process.js';

// The Java kit installed by its Maven coordinates (docs/clients.md#java-coordinates): scripts/publish/java.mjs publishes
// dev.servicesandbox:service-sandbox-client and service-sandbox-junit5 into a Maven-layout file repository, makes a
// scratch project outside the checkout that depends on them, resolves them from that repository (mvn -o, or javac
// reading the jars by their repository paths) and runs its first test against one built server. Exit 77 (no JDK or
// no JUnit console launcher): a skip, or a failure with REQUIRE_RECIPES=1 (docs/recipes.md#in-ci).

const SCRIPT = path.join(PROJECT_ROOT, 'scripts', 'publish', 'java.mjs');
const TOOLCHAIN_MISSING = 77;
const REQUIRED = process.env.REQUIRE_RECIPES === '1' || process.env.REQUIRE_KITS === '1';
/** Real ms the publish, the scratch build (two Maven runs) and its test may take before they are killed. */
const SCRIPT_TIMEOUT_MS = 240_000;

t.setTimeout(300_000);

t.test('the Java kit installs by its coordinates from a stand-in repository and its first test passes', async (t) => {
  await ensureBuilt();
  const server = await startServerProcess({ db: ':memory:' });
  t.teardown(() => server.stop());
  const [command, args] = plainNode([SCRIPT, '--server', server.url]);
  const { code, output, ms } = await runSuite(command, args, { cwd: PROJECT_ROOT, env: process.env, timeoutMs: SCRIPT_TIMEOUT_MS });
  if (code === TOOLCHAIN_MISSING) {
    const reason = `java install: toolchain missing: ${output.trim().split('\n').pop()}`;
    if (REQUIRED) t.fail(`${reason} (REQUIRE_RECIPES=1)`, { output });
    else t.pass('scripts/publish/java.mjs', { skip: reason });
    return;
  }
  t.equal(code, 0, `scripts/publish/java.mjs passes (${ms} ms)`, { output });
  t.match(output, /published dev\.servicesandbox:service-sandbox-client:0\.2\.0 and dev\.servicesandbox:service-sandbox-junit5:0\.2\.0/, 'both artifacts published');
  t.match(output, /install time: \d+ ms/, 'the install time is printed');
  t.match(output, /first test passed against/, 'the first test ran in the scratch project');
  const sessions = (await (await fetch(`${server.url}/_emulator/sessions`)).json()) as { data?: Array<{ id: string }> };
  t.same((sessions.data ?? []).map((session) => session.id), [], 'the scratch project ended its session');
});
