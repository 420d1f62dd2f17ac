import t, { type Test } from 'tap';
import { buildTestApp, json, type TestApp } from '../helper.js';
import { MAX_SNAPSHOTS_PER_SANDBOX, snapshotBytes } from '../../src/emulator/snapshots.service.js';
import { rowBytesHeld, snapshotBudget } from '../../src/snapshots/snapshot-budget.js';
import { captureSnapshot } from '../../src/snapshots/snapshot.js';
import { SNAPSHOT_CHECKS, checkInWorker } from '../../src/snapshots/snapshots.check.js';
import { waitUntil } from '../helpers/wait.js';

// docs/control-plane.md#snapshots: at most 32 saved snapshots a sandbox, and at most 1 GiB of rows saved by the whole
// server (root and sessions); one more is a 409 saying how to make room. Without them, saves filled the heap until
// V8 ended the process.

const save = (sandbox: TestApp, name: string, prefix = '') =>
  sandbox.app.inject({ method: 'POST', url: `${prefix}/_emulator/snapshots`, payload: { name } });

async function upload(sandbox: TestApp, name: string, bytes: Buffer) {
  return sandbox.app.inject({ method: 'PUT', url: `/_emulator/snapshots/${name}`, payload: bytes, headers: { 'content-type': 'application/octet-stream' } });
}

/** A sandbox; the process budget's limit, which the test may lower, is put back at its end. */
async function sandboxWithBudgetRestored(t: Test): Promise<{ sandbox: TestApp; limit: number }> {
  const sandbox = await buildTestApp();
  const limit = snapshotBudget.limitBytes;
  t.teardown(async () => {
    snapshotBudget.limitBytes = limit;
    await sandbox.close();
  });
  return { sandbox, limit };
}

t.test('a sandbox keeps at most 32 snapshots; replacing one does not count twice', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  for (let index = 0; index < MAX_SNAPSHOTS_PER_SANDBOX; index += 1) t.equal((await save(sandbox, `s${index}`)).statusCode, 201);
  const refused = await save(sandbox, 'one-more');
  t.equal(refused.statusCode, 409);
  t.match(json(refused).message, /holds 32 snapshots, the most it keeps \(32\); delete one with DELETE \/_emulator\/snapshots\/\{name\}/);
  t.equal(json(refused).errorCode, 'INVALID_REQUEST');
  t.equal((await save(sandbox, 's7')).statusCode, 200, 'saving under a name it holds replaces it');
  const file = (await sandbox.app.inject({ method: 'GET', url: '/_emulator/snapshots/s0/export' })).rawPayload;
  t.equal((await upload(sandbox, 'uploaded', file)).statusCode, 409, 'an upload under a new name is refused too');
  t.equal((await upload(sandbox, 's0', file)).statusCode, 200, 'an upload replacing one is taken');
  t.equal(json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/snapshots' })).data.length, 32);
  t.equal((await sandbox.app.inject({ method: 'DELETE', url: '/_emulator/snapshots/s1' })).statusCode, 204);
  t.equal((await save(sandbox, 'one-more')).statusCode, 201, 'a deleted one makes room');
});

t.test('one budget of bytes for the root and every session; given back on delete and when a session ends', async (t) => {
  const { sandbox } = await sandboxWithBudgetRestored(t);
  // the budget is the process's: the snapshots of the test above are still counted (its root was not opened with the
  // background services that give them back), so this test counts from what is held now
  const base = snapshotBudget.heldBytes;
  const one = snapshotBytes(captureSnapshot(sandbox.ctx, 'measure').tables);
  t.ok(one > 10_000, `the default state counts ${one} bytes`);
  snapshotBudget.limitBytes = base + Math.floor(one * 2.5); // room for two of them

  t.equal((await save(sandbox, 'a')).statusCode, 201);
  t.equal(snapshotBudget.heldBytes, base + one);
  t.equal((await save(sandbox, 'a')).statusCode, 200, 'replacing counts once');
  t.equal(snapshotBudget.heldBytes, base + one);

  const created = json(await sandbox.app.inject({ method: 'POST', url: '/_emulator/sessions', payload: {} }));
  const prefix = `/_sessions/${created.id}`;
  t.equal((await save(sandbox, 'b', prefix)).statusCode, 201, "a session's snapshot counts in the same budget");
  t.ok(snapshotBudget.heldBytes > base + one * 1.5, 'held: the root\'s and the session\'s');

  const refused = await save(sandbox, 'c');
  t.equal(refused.statusCode, 409, 'the root is refused: the budget is the whole server');
  t.match(json(refused).message, /saved snapshots of this server .* hold .* MiB of rows, and the most they may hold is .*: delete one with DELETE \/_emulator\/snapshots\/\{name\}/);
  t.equal(json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/snapshots' })).data.length, 1, 'nothing stored');
  t.equal((await save(sandbox, 'c', prefix)).statusCode, 409, 'and so is the session');

  t.equal((await sandbox.app.inject({ method: 'DELETE', url: `/_emulator/sessions/${created.id}` })).statusCode, 204);
  t.equal(snapshotBudget.heldBytes, base + one, "the ended session's snapshot is given back");
  t.equal((await save(sandbox, 'c')).statusCode, 201);
  t.equal((await sandbox.app.inject({ method: 'DELETE', url: '/_emulator/snapshots/a' })).statusCode, 204);
  t.equal(snapshotBudget.heldBytes, base + one, 'a deleted one is given back');
});

t.test('the image sessions from a snapshot open counts in the budget, goes with the snapshot, and is not kept past it', async (t) => {
  const { sandbox, limit } = await sandboxWithBudgetRestored(t);
  const base = snapshotBudget.heldBytes;
  t.equal((await save(sandbox, 'start')).statusCode, 201);
  const rows = snapshotBudget.heldBytes - base;
  const startFrom = async () => {
    const answer = await sandbox.app.inject({ method: 'POST', url: '/_emulator/sessions', payload: { snapshot: 'start' } });
    t.equal(answer.statusCode, 201);
    return json(answer).id as string;
  };
  const accountsOf = async (id: string) => {
    const answer = await sandbox.request('GET', `/_sessions/${id}/v1/accounts`);
    t.equal(answer.statusCode, 200);
    return json(answer);
  };

  // docs/sessions.md#how-fast: the first session from the snapshot gives its database as the image of the later ones
  const first = await startFrom();
  const image = sandbox.sessions.get(first)!.sandbox.ctx.db.serialize().length;
  const held = snapshotBudget.heldBytes - base - rows;
  t.ok(held > 0 && held <= image, `the image is counted (${held} bytes)`);
  const second = await startFrom();
  t.same(await accountsOf(second), await accountsOf(first), 'a session opened from the image starts as the first did');
  t.equal(snapshotBudget.heldBytes - base - rows, held, 'one image for every later session');
  snapshotBudget.limitBytes = base + rows + Math.floor(rows / 2); // the rows of a second save do not fit, images or not
  const refused = await save(sandbox, 'other');
  t.equal(refused.statusCode, 409, 'a save whose rows do not fit is refused');
  t.equal(rowBytesHeld(), snapshotBudget.heldBytes - held, 'the rows held are the budget less the image');
  t.match(json(refused).message, `hold ${(rowBytesHeld() / 1024 / 1024).toFixed(1)} MiB of rows`, 'the message counts the rows, not the image');
  t.equal(snapshotBudget.heldBytes - base - rows, held, 'and gives up no image');
  snapshotBudget.limitBytes = limit;

  t.equal((await sandbox.app.inject({ method: 'DELETE', url: '/_emulator/snapshots/start' })).statusCode, 204);
  t.equal(snapshotBudget.heldBytes, base, 'deleting the snapshot gives back its rows and its image');

  // no room for an image: later sessions restore the snapshot row by row, as the first did, and start the same
  t.equal((await save(sandbox, 'start')).statusCode, 201);
  snapshotBudget.limitBytes = snapshotBudget.heldBytes + Math.floor(held / 2);
  const third = await startFrom();
  t.equal(snapshotBudget.heldBytes, base + rows, 'no image kept past the budget');
  const fourth = await startFrom();
  t.same(await accountsOf(fourth), await accountsOf(third), 'the next session starts the same without one');
  snapshotBudget.limitBytes = limit;
  await startFrom();
  t.equal(snapshotBudget.heldBytes - base - rows, held, 'with room again, the next first session gives its image');
  t.equal((await save(sandbox, 'start')).statusCode, 200, 'replaced under its name');
  t.equal(snapshotBudget.heldBytes - base, rows, "the replaced snapshot's image is given back with it");

  // an image is a cache: a save that fits once it is given up is taken, never refused because of it
  await startFrom();
  t.equal(snapshotBudget.heldBytes - base - rows, held, 'an image again');
  t.ok(held > rows / 2, `the image (${held} bytes) is more than half the rows (${rows})`);
  snapshotBudget.limitBytes = base + rows * 2 + Math.floor(rows / 2);
  t.equal((await save(sandbox, 'second')).statusCode, 201, 'the save is taken');
  t.equal(snapshotBudget.heldBytes - base, rows * 2, 'the image was given up for it');
  t.equal((await save(sandbox, 'third')).statusCode, 409, 'past the rows alone, still a 409');
  t.equal((await startFrom()) !== '', true, 'sessions from the snapshot still start (row by row)');
  t.equal(snapshotBudget.heldBytes - base, rows * 2, 'and keep no image without room');
});

t.test('an upload still being checked when its session ends stores nothing and holds no bytes', async (t) => {
  // found in review: the session gave its bytes back first, then the upload finished and kept its own for good
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  t.equal((await save(sandbox, 'base')).statusCode, 201);
  const exported = Buffer.from((await sandbox.app.inject({ method: 'GET', url: '/_emulator/snapshots/base/export' })).rawPayload);
  const created = json(await sandbox.app.inject({ method: 'POST', url: '/_emulator/sessions', payload: {} }));
  const before = snapshotBudget.heldBytes;
  // the one check place held on its thread, so the session's upload waits its turn (docs/robustness.md#off-thread-work)
  const hold = new Int32Array(new SharedArrayBuffer(4));
  const held = checkInWorker(exported, { hold });
  const uploading = sandbox.app.inject({ method: 'PUT', url: `/_sessions/${created.id}/_emulator/snapshots/late`, payload: exported, headers: { 'content-type': 'application/octet-stream' } });
  await waitUntil(() => SNAPSHOT_CHECKS.waiting === 1, 'the upload waits for the check place');
  // the end waits for the requests inside the session: it is let go once the session has left the list
  const ending = sandbox.app.inject({ method: 'DELETE', url: `/_emulator/sessions/${created.id}` });
  await waitUntil(async () => json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/sessions' })).data.length === 0, 'the session leaves the list');
  Atomics.store(hold, 0, 1);
  Atomics.notify(hold, 0);
  await held;
  t.equal((await ending).statusCode, 204);
  const answer = await uploading;
  t.equal(answer.statusCode, 404, answer.body);
  t.match(json(answer).message, /The sandbox ended while the snapshot was made or checked/);
  t.equal(snapshotBudget.heldBytes, before, 'no bytes held for it');
});
