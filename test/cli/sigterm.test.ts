import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { ensureBuilt, PROJECT_ROOT, signedCall, startServerProcess } from '../helpers/server-process.js';
import { plainCommand } from '../helpers/node-child.js';
import { waitUntil } from '../helpers/wait.js';

// docs/decisions.md#shutdown: SIGTERM stops the server even with requests open: idle connections close at once, open
// ones after a short grace. Before, a request held open (here by a 60 s latency fault rule; a demo step under a drop
// rule did the same) kept the process alive.

t.setTimeout(120_000);
await ensureBuilt();

t.test('SIGTERM with a request held open by a fault rule: the server exits by itself, code 0', async (t) => {
  const server = await startServerProcess({ db: ':memory:' });
  t.teardown(() => server.kill());
  const added = await fetch(`${server.url}/_emulator/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ match: { path: '/v1/accounts' }, effect: { type: 'latency', ms: 60_000 } }),
  });
  t.equal(added.status, 201);
  const held = signedCall(server, 'GET', '/v1/accounts').then(
    (answer) => `answered ${answer.status}`,
    (error: Error) => `closed (${error.message})`,
  );
  await waitUntil(async () => ((await (await fetch(`${server.url}/_emulator/faults`)).json()) as { data: Array<{ matched: number }> }).data[0]!.matched === 1, 'the held request');
  // stop() sends SIGTERM and SIGKILLs only if the process is still there 10 s later (far past the 60 s hold otherwise)
  await server.stop();
  t.same(await server.exited, { code: 0, signal: null }, 'exited by itself with code 0, not killed');
  t.match(await held, /^closed/, 'the held request was closed, not answered');
});

t.test('the process that started the server is gone (npx: npm exec -> sh -> node): the server stops by itself', async (t) => {
  // `; true` keeps the shell as the server's parent, as npm exec's `sh -c` is; SIGKILL stands for npm ending it.
  const shell = spawn(
    ...plainCommand('sh', ['-c', `node ${JSON.stringify(path.join(PROJECT_ROOT, 'dist', 'service-sandbox.mjs'))} --port 0 --host 127.0.0.1 --db :memory: --log-level warn; true`]),
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  shell.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitUntil(() => /listening on (http:\/\/\S+) /.test(output), 'the server listening', 60_000);
  const url = /listening on (http:\/\/\S+) /.exec(output)![1]!;
  const server = execFileSync('ps', ['-o', 'pid=', '--ppid', String(shell.pid)], { encoding: 'utf8' }).trim();
  t.match(server, /^\d+$/, 'the server is the shell\'s child');
  t.teardown(() => {
    try {
      process.kill(Number(server), 'SIGKILL');
    } catch {}
  });
  t.equal((await fetch(`${url}/_emulator/health`)).status, 200);
  shell.kill('SIGKILL');
  await waitUntil(() => !alive(Number(server)), 'the orphaned server to exit', 60_000);
  t.notOk(alive(Number(server)), 'the server exited once its parent was gone');
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
