import t from 'tap';
import { ensureBuilt, signedCall, startServerProcess } from '../helpers/server-process.js';
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
