import t from 'tap';
import { startServer } from '../../src/server.js';
import { checkInWorker, SNAPSHOT_CHECKS } from '../../src/snapshots/snapshots.check.js';
import { call } from '../helpers/http-client.js';
import { START } from '../helper.js';

// Snapshot checks wait their turn (docs/robustness.md#off-thread-work): one runs, 16 wait, one more is a 429 at once,
// over HTTP too, and nothing of a refused upload is stored.

t.test('one check runs, 16 wait, the next upload is a 429; all of the waiting ones are checked once the first ends', async (t) => {
  const server = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent', clock: START } as never });
  t.teardown(() => server.close());
  t.equal((await call(`${server.url}/_emulator/snapshots`, 'POST', { name: 'base' })).status, 201);
  const file = Buffer.from(await (await fetch(`${server.url}/_emulator/snapshots/base/export`)).arrayBuffer());

  const hold = new Int32Array(new SharedArrayBuffer(4));
  const first = checkInWorker(file, { hold });
  const waiting = Array.from({ length: 16 }, () => checkInWorker(file));
  t.equal(SNAPSHOT_CHECKS.running, 1);
  t.equal(SNAPSHOT_CHECKS.waiting, 16);

  const response = await fetch(`${server.url}/_emulator/snapshots/refused`, { method: 'PUT', body: new Uint8Array(file), headers: { 'content-type': 'application/octet-stream' } });
  t.equal(response.status, 429);
  t.equal(response.headers.get('retry-after'), '1', 'with a Retry-After (docs/errors.md#retry-after)');
  t.match(await response.json(), { errorCode: 'TOO_MANY_REQUESTS', message: '16 snapshot files are already waiting to be checked; send this one again in a moment' });
  t.equal((await call(`${server.url}/_emulator/snapshots/refused`)).status, 404, 'nothing stored under the refused name');
  t.equal((await call(`${server.url}/_emulator/health`)).status, 200, 'the server answers meanwhile');

  Atomics.store(hold, 0, 1);
  Atomics.notify(hold, 0);
  const checked = await Promise.all([first, ...waiting]);
  t.equal(checked.length, 17);
  t.ok(checked.every((each) => each.tables.some((table) => table.name === 'users' && table.rows.length > 0)), 'every waiting file was checked');
  t.equal(SNAPSHOT_CHECKS.running + SNAPSHOT_CHECKS.waiting, 0);
  const again = await fetch(`${server.url}/_emulator/snapshots/accepted`, { method: 'PUT', body: new Uint8Array(file), headers: { 'content-type': 'application/octet-stream' } });
  t.equal(again.status, 201, 'room again once they ran');
});
