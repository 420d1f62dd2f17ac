import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { ensureBuilt, PROJECT_ROOT, startServerProcess } from '../helpers/server-process.js';
import { plainCommand } from '../helpers/node-child.js';
import { ensurePeers, peersMissing } from '../helpers/peers.js';

// The Postman collection (docs/openapi.md#postman): newman runs openapi/service-sandbox.postman_collection.json
// (checked against scripts/postman.mjs by test/http/postman-collection.test.ts) as it is against a fresh built
// server (twice, then in a session): every request answers one of its documented success statuses, signed by the collection's
// pre-request script, with the ids it needs taken from earlier answers. newman is installed on demand into
// .peers/newman (test/helpers/peers.ts).

const exec = promisify(execFile);
const COLLECTION = path.join(PROJECT_ROOT, 'openapi', 'service-sandbox.postman_collection.json');
const NEWMAN = '6.2.2';

interface Execution {
  item: { name: string };
  request: { method: string; url: { path: string[] } };
  response?: { code: number };
  assertions?: Array<{ assertion: string; error?: { message: string } }>;
}

t.test('newman runs the collection as it is: every request answers its documented success status', async (t) => {
  await ensureBuilt();
  const peers = await ensurePeers('newman', { newman: NEWMAN });
  if (typeof peers === 'string') return peersMissing(t, peers);
  const server = await startServerProcess({ db: ':memory:' });
  t.teardown(() => server.stop());
  // Twice in a row on the server itself (the second iteration makes its own user, intents and payout), then
  // once in a session, through its prefix (docs/sessions.md#addresses-and-signing).
  const session = (await (await fetch(`${server.url}/_emulator/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json()) as { id: string };
  const requests = (JSON.parse(readFileSync(COLLECTION, 'utf8')) as { item: unknown[] }).item.length;
  const runs: Array<[string, string[], number]> = [
    ['twice on the server', ['--iteration-count', '2'], 2 * requests],
    [`in session ${session.id}`, ['--env-var', `sessionPrefix=/_sessions/${session.id}`], requests],
  ];
  for (const [label, extra, expected] of runs) {
    const report = path.join(peers.dir, 'report.json');
    rmSync(report, { force: true });
    const started = Date.now();
    const run = await exec(
      ...plainCommand(peers.bin('newman'), ['run', COLLECTION, '--env-var', `baseUrl=${server.url}`, ...extra, '--reporters', 'json', '--reporter-json-export', report, '--timeout-request', '30000']),
      { cwd: PROJECT_ROOT, timeout: 120_000 },
    ).catch((error: { code: number; stdout: string; stderr: string }) => error);
    t.equal('code' in run ? run.code : 0, 0, `${label}: newman exits 0 (${Date.now() - started} ms) ${'stderr' in run ? run.stderr.slice(0, 400) : ''}`);

    const { run: result } = JSON.parse(readFileSync(report, 'utf8')) as { run: { executions: Execution[]; failures: unknown[] } };
    t.equal(result.executions.length, expected, `${label}: every request of the collection ran, per iteration`);
    for (const execution of result.executions) {
      const failed = (execution.assertions ?? []).filter((assertion) => assertion.error);
      t.same(
        failed.map((assertion) => assertion.error?.message),
        [],
        `${label}: ${execution.request.method} /${execution.request.url.path.join('/')}: ${execution.response?.code} (${execution.item.name}; ` +
          'an operation that needs an id another request makes, or the MULTI_USER key, needs its step in JOURNEY, scripts/postman.mjs)',
      );
      t.equal(execution.assertions?.length, 1, `${label}: ${execution.item.name}: its status was checked`);
    }
    t.same(result.failures, [], `${label}: no failure (script errors included)`);
  }
});
